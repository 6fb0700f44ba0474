// Account names. Merchant wallet accounts hold what the service owes the merchant and never
// go negative; `external:` accounts stand for money outside the service (at a provider, or
// conjured by the sandbox) and go negative as money flows in from them.

export const accounts = {
  walletAvailable: (merchantId: string) => `merchant:${merchantId}:wallet:available`,
  walletReserved: (merchantId: string) => `merchant:${merchantId}:wallet:reserved`,
  providerSettlement: (provider: string) => `external:provider:${provider}`,
  sandboxFunding: () => 'external:sandbox:funding',
  feeRevenue: () => 'revenue:fees',
  spreadRevenue: () => 'revenue:spread',
  /** The house's cedis that back trades (buys pay into it, sells pay out of it). */
  treasuryCedis: () => 'treasury:cedis',
  treasuryInventory: (asset: string, network: string) => `treasury:inventory:${asset}:${network}`,
  treasuryFunding: () => 'external:treasury:funding',
  /** Assets on chain, outside the house: delivered to buyers, or deposited by sellers. */
  chain: (network: string) => `external:chain:${network}`,
  /** Money a provider moved after the service had abandoned it, until it is reversed. */
  lateSettlements: () => 'suspense:late_settlements',
  /** A seller's overpayment, held for them. */
  merchantExcess: (merchantId: string, asset: string, network: string) => `merchant:${merchantId}:excess:${asset}:${network}`,
} as const;

export function isNonNegativeAccount(account: string): boolean {
  return account.startsWith('merchant:') || account.startsWith('treasury:inventory:');
}
