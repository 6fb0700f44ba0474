import { defineProvider } from '../define-provider.ts';
import { BankRailAdapter } from './adapter.ts';
import { bankRailMock } from './mock.ts';
import { bankRailOptions } from './options.ts';
import { bankRailWire } from './recorder.ts';

export const bankRail = defineProvider({
  options: bankRailOptions,
  adapter: (o, ctx, { callbackToken }) => new BankRailAdapter({ baseUrl: o.base_url, clientId: o.client_id, clientSecret: o.client_secret, callbackToken }, ctx),
  mock: bankRailMock,
  recorder: bankRailWire,
  examples: {
    match: { account_number: '2000000001', bank_code: '130100' },
    payout: (reference) => ({ reference, amount: 1234, currency: 'GHS', channel: 'bank', accountNumber: '2000000001', bankCode: '130100', accountName: 'Efua Mensah', description: 'contract' }),
    resolve: { channel: 'bank', accountNumber: '2000000001', bankCode: '130100' },
  },
});
