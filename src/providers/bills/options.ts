import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

export const billsOptions = defineProviderOptions({
  id: 'bills',
  summary: 'a biller aggregator: airtime, data, electricity, water and TV bills',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(1),
      api_key: z.string().min(1).default('bk_test_railyard_bills').describe('Bearer key on every call to the biller aggregator'),
      signing_secret: z.string().min(16).default('railyard-bills-callback-secret').describe('Signs its callbacks: X-Bills-Signature, hex HMAC-SHA256 of the raw body'),
    })
    .prefault({}),
});
export type BillsOptions = z.output<typeof billsOptions.schema>;
