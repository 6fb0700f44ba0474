import { z } from 'zod';
import { pageQuery } from '../http/pagination.ts';
import { TIMELINE_KINDS } from '../kernel/object-timeline.ts';

const ruleRef = {
  file: z.string().nullable().describe('The scenario file, relative to where railyard started; null for rules given in code or a simulated wallet'),
  rule_index: z.number().int().describe("The rule's place in its file (0-based), or in the loaded list when no file is known"),
  rule_name: z.string(),
};

export const matchReportSchema = z
  .union([
    z.object({ matched: z.literal(true), ...ruleRef, rule_index: ruleRef.rule_index.nullable() }),
    z.object({
      matched: z.literal(false),
      nearest: z.object(ruleRef).nullable().describe('The rule with the most conditions satisfied (the earliest on a tie); null when no rules are loaded'),
      failed: z.string().describe('The first condition the nearest rule failed, e.g. "msisdn 233551234987 is not 233551234989"'),
    }),
  ])
  .nullable()
  .describe(
    "Mock calls: the scenario rule that decided the call, or why none did (the mock then answered as its upstream's own sandbox). null for merchant requests and for mock calls no rule was asked about (token, status and duplicate calls)",
  );

export const requestEntrySchema = z.object({
  id: z.string().meta({ examples: ['req_000000000042'] }),
  at: z.string().describe('Business time the exchange ended (ISO 8601)'),
  kind: z.enum(['merchant', 'mock']).describe('merchant: a request to the merchant API; mock: a call that reached a provider mock'),
  method: z.string(),
  path: z.string().describe('Without the query string'),
  status: z.number().int().nullable().describe("null: no answer was sent (a mock held the call past its caller's timeout, or reset it)"),
  latency_ms: z.number().int().describe('Real milliseconds'),
  idempotency_key: z.string().nullable(),
  object_id: z.string().nullable().describe('The object it created or read (data.id of the answer), or the object a mock call was about'),
  provider: z.string().nullable().describe('Mock calls: the provider mock'),
  match: matchReportSchema,
  fault: z
    .object({
      rule: z.string(),
      file: z.string().nullable().describe('The scenario file of the `api:` rule; "sandbox control" for a fault switched on through /api/v1/sandbox/faults'),
      index: z.number().int().nullable().describe("The rule's place in its file's api section (0-based)"),
      action: z.enum(['rate_limit', 'respond', 'drop', 'latency']),
      dropped_after_commit: z.boolean().optional().describe('The work committed and the connection was cut with no answer'),
    })
    .nullable()
    .describe('Merchant requests: the sandbox fault rule that fired on it (a scenario `api:` rule), or null'),
});

export const listRequestsQuery = z.strictObject({
  ...pageQuery,
  kind: z.enum(['merchant', 'mock']).optional().describe('Only merchant requests, or only mock calls'),
  object_id: z.string().max(200).optional().describe('Only the requests about this object'),
  status: z
    .string()
    .regex(/^[1-5]\d\d$/, 'status must be an HTTP status code, 100 to 599')
    .transform(Number)
    .optional()
    .describe('Only the requests answered with this HTTP status'),
});

export const timelineEntrySchema = z.object({
  at: z.string().describe('Business time (ISO 8601)'),
  kind: z.enum(TIMELINE_KINDS).describe('What happened; details depend on it'),
  title: z.string().describe('One line in words'),
  details: z.record(z.string(), z.unknown()),
});

export const timelineSchema = z.object({
  object_id: z.string(),
  object: z.enum(['charge', 'transfer', 'trade', 'quote', 'collection', 'payout', 'bill']),
  status: z.string().describe("The object's status now"),
  entries: z.array(timelineEntrySchema).describe('Oldest first: by time, then by stage (request, provider calls, callbacks and polls, journals, events, deliveries)'),
});
