// Upstream reason codes, in the words a merchant can act on. The raw code is kept beside it.
const REASONS: Record<string, string> = {
  NOT_ENOUGH_FUNDS: 'insufficient_funds',
  INTERNAL_PROCESSING_ERROR: 'insufficient_funds', // MTN: "predominantly" insufficient funds
  PAYER_LIMIT_REACHED: 'limit_reached',
  PAYER_NOT_FOUND: 'account_not_found',
  PAYEE_NOT_FOUND: 'account_not_found',
  APPROVAL_REJECTED: 'declined_by_customer',
  PAYMENT_NOT_APPROVED: 'declined_by_customer',
  EXPIRED: 'expired',
  COULD_NOT_PERFORM_TRANSACTION: 'expired',
  TRANSACTION_CANCELED: 'declined_by_customer',
  '2001': 'insufficient_funds', // Hubtel: insufficient funds, wrong PIN, USSD timeout...
  '3050': 'account_not_found',
  '4075': 'provider_balance_low',
  '51': 'insufficient_funds', // bank rail
  '25': 'account_not_found',
  INVALID_CUSTOMER: 'invalid_customer', // bills: no such number, meter or smartcard
  VEND_FAILED: 'vend_failed', // bills: the biller took the vend, then could not deliver
  insufficient_funds: 'insufficient_funds',
  account_not_found: 'account_not_found',
  // card-processor and direct-debit (the /v1 collections' rails)
  do_not_honour: 'do_not_honour',
  expired_card: 'expired_card',
  invalid_otp: 'invalid_otp',
  declined_by_customer: 'declined_by_customer',
  card_details_unavailable: 'card_details_unavailable',
  generic_decline: 'provider_declined',
  MANDATE_DECLINED: 'declined_by_customer',
  INSUFFICIENT_FUNDS: 'insufficient_funds',
  ACCOUNT_NOT_FOUND: 'account_not_found',
};

export function failureReason(providerReason: string): string {
  const code = providerReason.split(/[\s:]/)[0] ?? providerReason;
  return REASONS[code] ?? REASONS[providerReason] ?? 'provider_declined';
}
