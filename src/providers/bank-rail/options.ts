import { z } from 'zod';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

export const bankRailOptions = defineProviderOptions({
  id: 'bank-rail',
  summary: 'a GhIPSS-style bank rail: name enquiry and bank payouts',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(1),
      client_id: z.string().default('railyard-bank-participant'),
      client_secret: z.string().default('railyard-bank-secret'),
    })
    .prefault({}),
});
export type BankRailOptions = z.output<typeof bankRailOptions.schema>;
