import { defineProvider } from '../define-provider.ts';
import { DirectDebitAdapter } from './adapter.ts';
import { directDebitMock } from './mock.ts';
import { directDebitOptions } from './options.ts';

export const directDebit = defineProvider({
  options: directDebitOptions,
  adapter: (o, ctx) => new DirectDebitAdapter({ baseUrl: o.base_url, apiKey: o.api_key, signingSecret: o.signing_secret }, ctx),
  mock: directDebitMock,
  examples: {
    match: { account_number: '3000000001', bank_code: '130100' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', channel: 'bank_debit', accountNumber: '3000000001', bankCode: '130100', description: 'contract' }),
  },
});
