import { defineProvider } from '../define-provider.ts';
import { PaystackAdapter } from './adapter.ts';
import { paystackMock } from './mock.ts';
import { paystackOptions } from './options.ts';
import { paystackWire } from './recorder.ts';

export const paystack = defineProvider({
  options: paystackOptions,
  adapter: (o, ctx) => new PaystackAdapter({ baseUrl: o.base_url, secretKey: o.secret_key, channels: o.channels, networks: o.networks, customerEmailDomain: o.customer_email_domain }, ctx),
  mock: paystackMock,
  recorder: paystackWire,
  examples: {
    match: { msisdn: '0241110000' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    payout: (reference) => ({ reference, amount: 1234, currency: 'GHS', channel: 'momo', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' },
  },
});
