import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

// The /v1 collections' bank rail (an invented upstream: docs/v1/collections.md).
export const directDebitOptions = defineProviderOptions({
  id: 'direct-debit',
  summary: 'a direct-debit rail: bank account debits (the /v1 collections)',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(1),
      api_key: z.string().min(1).default('dd_test_railyard_direct_debit'),
      signing_secret: z.string().min(1).default('dds_railyard_direct_debit'),
    })
    .prefault({}),
});
export type DirectDebitOptions = z.output<typeof directDebitOptions.schema>;
