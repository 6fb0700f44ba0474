import { z } from 'zod';
import { NETWORKS } from '../../kernel/msisdn.ts';
import { commonProviderFields, defineProviderOptions } from '../provider-options.ts';

export const paystackOptions = defineProviderOptions({
  id: 'paystack',
  summary: 'Paystack: mobile money charges, transfers, account resolution; off by default',
  schema: z
    .strictObject({
      ...commonProviderFields,
      // Off by default: switched on, it joins failover for momo and bank after the others.
      enabled: commonProviderFields.enabled.default(false),
      priority: commonProviderFields.priority.default(3),
      channels: z
        .array(z.enum(['momo', 'bank']))
        .min(1)
        .default(['momo', 'bank']),
      networks: z.array(z.enum(NETWORKS)).default([...NETWORKS]),
      secret_key: z.string().min(1).default('sk_test_railyard_paystack'),
      customer_email_domain: z.string().min(1).default('example.com').describe('Paystack needs an email per charge: <msisdn>@<this domain>'),
      webhook_url: z.url().optional().describe("Mock: where it posts webhooks (Paystack's dashboard setting); default the service's /internal/callbacks/paystack"),
    })
    .prefault({}),
});
export type PaystackOptions = z.output<typeof paystackOptions.schema>;
