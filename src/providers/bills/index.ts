import { defineProvider } from '../define-provider.ts';
import { BillsAdapter } from './adapter.ts';
import { billsMock } from './mock.ts';
import { billsOptions } from './options.ts';

export const bills = defineProvider({
  options: billsOptions,
  adapter: (o, ctx) => new BillsAdapter({ baseUrl: o.base_url, apiKey: o.api_key, signingSecret: o.signing_secret }, ctx),
  mock: billsMock,
  examples: {
    // A GWCL water account: its vend settles without a receipt, like any payout.
    match: { account_number: '2000000021' },
    payout: (reference) => ({
      reference,
      amount: 1234,
      currency: 'GHS',
      channel: 'bills',
      accountNumber: '2000000021',
      description: 'contract',
      bill: { category: 'water', biller: 'GWCL', customer: '2000000021' },
    }),
  },
});
