import { z } from 'zod';
import { NETWORKS } from '../../kernel/msisdn.ts';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

export const hubtelOptions = defineProviderOptions({
  id: 'hubtel',
  summary: 'Hubtel: receive money, send money, name verification, on every network',
  schema: z
    .strictObject({
      ...commonProviderFields,
      priority: commonProviderFields.priority.default(2),
      networks: z.array(z.enum(NETWORKS)).default([...NETWORKS]),
      hosts: z
        .strictObject({ receive: z.url(), receiveStatus: z.url(), send: z.url(), sendStatus: z.url(), verify: z.url() })
        .optional()
        .describe("Hubtel's real hosts; omitted means the in-process mock"),
      client_id: z.string().default('railyard-hubtel-client'),
      client_secret: z.string().default('railyard-hubtel-secret'),
      pos_sales_id: z.string().default('2017101'),
      prepaid_deposit_id: z.string().default('2017102'),
    })
    .prefault({}),
});
export type HubtelOptions = z.output<typeof hubtelOptions.schema>;
