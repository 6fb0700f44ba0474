import { z } from 'zod';

// A scenario's script: what the replay engine does, step by step, in an isolated sandbox on a
// virtual clock. Strings may refer to saved responses: `${charge.body.data.id}`.

const label = z.string().min(1).optional().describe('How the step is named in the timeline and in failures');
const variable = z.string().regex(/^[a-z_][a-z0-9_]*$/, 'a variable name: lower case letters, digits and _');

export const requestStepSchema = z.strictObject({
  name: label,
  request: z.strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'DELETE']),
    path: z.string().startsWith('/', 'path starts with /'),
    body: z.unknown().optional(),
    idempotency_key: z.string().min(1).optional().describe('Default: a fresh key for each request that needs one'),
    as: variable.optional().describe('Save {status, body} under this name for later steps'),
  }),
  expect: z
    .strictObject({
      status: z.number().int().min(100).max(599).optional(),
      body: z.unknown().optional().describe('A partial match: every field given must be equal'),
      dropped: z.boolean().optional().describe('true: the connection is cut with no answer (an `api:` rule with drop); the step fails if an answer comes'),
    })
    .optional(),
});

export const advanceStepSchema = z.strictObject({
  name: label,
  advance: z
    .number()
    .min(0)
    .max(366 * 24 * 3600)
    .describe('Seconds of virtual time; due jobs run in order'),
});

export const expectWebhookStepSchema = z.strictObject({
  name: label,
  expect_webhook: z.strictObject({
    type: z.string().min(1),
    data: z.unknown().optional().describe('A partial match on the event data'),
    count: z.number().int().min(0).optional().describe('How many such deliveries so far; default at least one'),
  }),
});

export const expectLedgerStepSchema = z.strictObject({
  name: label,
  expect_ledger: z.strictObject({
    wallet: z.strictObject({ available: z.number().int().optional(), reserved: z.number().int().optional() }).optional(),
    accounts: z.record(z.string(), z.number().int()).optional().describe('Account balances in GHS minor units'),
    balanced: z.boolean().default(true).describe('Every currency nets to zero'),
  }),
});

export const expectProviderCallsStepSchema = z.strictObject({
  name: label,
  expect_provider_calls: z.record(z.string(), z.number().int().min(0)).describe('Calls railyard made to each provider so far (requests and status polls)'),
});

export const scriptStepSchema = z.union([requestStepSchema, advanceStepSchema, expectWebhookStepSchema, expectLedgerStepSchema, expectProviderCallsStepSchema], {
  error: 'a step is one of request, advance, expect_webhook, expect_ledger, expect_provider_calls',
});

export const replaySettingsSchema = z.strictObject({
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional()
    .describe('Default: 1, or --seed'),
  config: z.record(z.string(), z.unknown()).optional().describe('Configuration overrides for this replay, e.g. trading.screening'),
  webhook_receiver: z
    .strictObject({
      fail_first: z.number().int().min(0).default(0).describe('Answer the first N deliveries with `status`'),
      status: z.number().int().min(300).max(599).default(500),
    })
    .optional()
    .describe('A local endpoint registered for the merchant, which records every webhook'),
});

export type ScriptStep = z.infer<typeof scriptStepSchema>;
export type ReplaySettings = z.infer<typeof replaySettingsSchema>;
