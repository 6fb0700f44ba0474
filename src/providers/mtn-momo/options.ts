import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';
import { sandboxIdentitiesSchema } from './sandbox-identities.ts';

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
      currency: z.string().default('GHS').describe('the currency sent when no sandbox_identities apply'),
      sandbox_identities: sandboxIdentitiesSchema.optional().describe("Ghana test numbers and GHS mapped to MTN's sandbox test numbers and EUR, when base_url is set; {} for the documented defaults"),
    })
    .prefault({}),
});
export type MtnMomoOptions = z.output<typeof mtnMomoOptions.schema>;
