import { defineProvider } from '../define-provider.ts';
import { HubtelAdapter } from './adapter.ts';
import { hubtelMock } from './mock.ts';
import { hubtelOptions } from './options.ts';
import { hubtelWire } from './recorder.ts';

export const hubtel = defineProvider({
  options: hubtelOptions,
  adapter: (o, ctx, { callbackToken }) =>
    new HubtelAdapter({ hosts: o.hosts, clientId: o.client_id, clientSecret: o.client_secret, posSalesId: o.pos_sales_id, prepaidDepositId: o.prepaid_deposit_id, callbackToken }, ctx),
  mock: hubtelMock,
  recorder: hubtelWire,
  examples: {
    match: { msisdn: '0241110000' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    payout: (reference) => ({ reference, amount: 1234, currency: 'GHS', channel: 'momo', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' },
  },
});
