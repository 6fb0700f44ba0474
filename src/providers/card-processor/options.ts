import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

// The /v1 collections' card rail (an invented upstream: docs/v1/collections.md).
export const cardProcessorOptions = defineProviderOptions({
  id: 'card-processor',
  summary: 'a card processor: card charges with 3-D Secure (the /v1 collections)',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(1),
      api_key: z.string().min(1).default('ck_test_railyard_card_processor'),
      webhook_secret: z.string().min(1).default('whsec_railyard_card_processor'),
    })
    .prefault({}),
});
export type CardProcessorOptions = z.output<typeof cardProcessorOptions.schema>;
