import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

export const mtnMomoOptions = defineProviderOptions({
  id: 'mtn-momo',
  summary: 'MTN MoMo Open API: collections, disbursements, account holder names',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(1),
      api_user: z.string().default('railyard-mtn-api-user'),
      api_key: z.string().default('railyard-mtn-api-key'),
      collection_subscription_key: z.string().default('railyard-mtn-collection-key'),
      disbursement_subscription_key: z.string().default('railyard-mtn-disbursement-key'),
      target_environment: z.string().default('sandbox'),
      currency: z.string().default('GHS').describe("MTN's real sandbox only takes EUR"),
    })
    .prefault({}),
});
export type MtnMomoOptions = z.output<typeof mtnMomoOptions.schema>;
