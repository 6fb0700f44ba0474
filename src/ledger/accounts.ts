// Account names. Merchant wallet accounts hold what the service owes the merchant and never
// go negative; `external:` accounts stand for money outside the service (at a provider, or
// conjured by the sandbox) and go negative as money flows in from them.

export const accounts = {
  walletAvailable: (merchantId: string) => `merchant:${merchantId}:wallet:available`,
  walletReserved: (merchantId: string) => `merchant:${merchantId}:wallet:reserved`,
  providerSettlement: (provider: string) => `external:provider:${provider}`,
  sandboxFunding: () => 'external:sandbox:funding',
  feeRevenue: () => 'revenue:fees',
} as const;

export function isNonNegativeAccount(account: string): boolean {
  return account.startsWith('merchant:');
}
