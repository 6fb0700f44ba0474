import { defineProvider } from '../define-provider.ts';
import { MtnMomoAdapter } from './adapter.ts';
import { mtnMomoMock } from './mock.ts';
import { mtnMomoOptions } from './options.ts';
import { mtnMomoWire } from './recorder.ts';
import { sandboxIdentitiesFor } from './sandbox-identities.ts';

export const mtnMomo = defineProvider({
  options: mtnMomoOptions,
  adapter: (o, ctx, { callbackToken }) =>
    new MtnMomoAdapter(
      {
        baseUrl: o.base_url,
        apiUser: o.api_user,
        apiKey: o.api_key,
        collectionSubscriptionKey: o.collection_subscription_key,
        disbursementSubscriptionKey: o.disbursement_subscription_key,
        targetEnvironment: o.target_environment,
        currency: o.currency,
        identities: sandboxIdentitiesFor(o),
        callbackToken,
      },
      ctx,
    ),
  mock: mtnMomoMock,
  recorder: mtnMomoWire,
  examples: {
    match: { msisdn: '0241110000' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    payout: (reference) => ({ reference, amount: 1234, currency: 'GHS', channel: 'momo', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' },
  },
});
