import { z } from 'zod';
import { envelopeOf, ok } from '../http/envelope.ts';
import { noSuch, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { ApiFaultEngine, ApiRuleView } from '../scenarios/api-fault-engine.ts';
import { FAULT_PROFILES, faultProfileRule } from '../scenarios/api-fault-profiles.ts';
import type { ApiRule } from '../scenarios/scenario-schema.ts';

const ACTIONS = ['rate_limit', 'respond', 'drop', 'latency'] as const;

const faultSchema = z.object({
  id: z.string().nullable().describe("flt_...: a fault switched on here (DELETE takes it); null for a scenario file's `api:` rule"),
  file: z.string().nullable().describe('The scenario file of an `api:` rule; null for a fault switched on here'),
  index: z.number().int().nullable().describe("The rule's place in its file's api section (0-based)"),
  name: z.string(),
  action: z.enum(ACTIONS),
  rule: z.record(z.string(), z.unknown()).describe('The rule as a scenario file would write it, normalised'),
  matched: z.number().int().describe('Requests the rule matched (in its required state) since it was switched on or the files loaded (on PostgreSQL, by every instance sharing the database)'),
  fired: z.number().int().describe('Times it fired (for a rate limit: requests it refused)'),
});

const faultBody = z.strictObject({
  profile: z
    .enum(FAULT_PROFILES)
    .describe(
      'lost-responses: drop after the commit; cut-connections: drop before it; server-errors: 503 before the commit (500 after it with after_commit); slow-responses: latency; rate-limit: 429 over a per-key window',
    ),
  route: z
    .string()
    .regex(/^\s*(?:[A-Za-z]+\s+)?\/\S*\s*$/, 'route is METHOD /path or /path, as declared: POST /api/v1/transfers')
    .max(300)
    .optional()
    .describe('The requests it applies to: `POST /api/v1/transfers` (the route as declared; a bare path is any method); default every merchant request'),
  probability: z.number().min(0).max(1).optional().describe('Fires with this probability, drawn from the seed'),
  every: z.number().int().min(1).optional().describe('Fires on every Nth matching request'),
  times: z.number().int().min(1).optional().describe('Fires at most this many times'),
  after_commit: z.boolean().optional().describe('server-errors: a 500 after the work committed; slow-responses: wait after the commit'),
  latency_ms: z.number().int().min(0).max(120_000).optional().describe('slow-responses: real milliseconds (default 2000)'),
  requests: z.number().int().min(1).max(1_000_000).optional().describe('rate-limit: requests per key per window (default 25)'),
  per_seconds: z.number().int().min(1).max(86_400).optional().describe('rate-limit: the window in seconds of the business clock (default 1)'),
});

function actionOf(rule: ApiRule): (typeof ACTIONS)[number] {
  if (rule.rate_limit) return 'rate_limit';
  if (rule.respond) return 'respond';
  if (rule.drop) return 'drop';
  return 'latency';
}

function view(v: ApiRuleView) {
  return { id: v.id, file: v.file, index: v.index, name: v.rule.name, action: actionOf(v.rule), rule: v.rule as unknown as Record<string, unknown>, matched: v.matched, fired: v.fired };
}

/**
 * The sandbox control of faults on the merchant API: switch a profile on, list what is in force
 * (the scenario files' `api:` rules too), switch faults off. The routes themselves never meet a
 * fault (sandbox routes are exempt), so a profile that breaks everything can still be switched off.
 */
export function faultRoutes(deps: { faults: ApiFaultEngine }): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/faults',
      operationId: 'sandboxListFaults',
      summary: 'The faults in force on the merchant API, in the order they are tried, with their counts',
      description: "Test keys only. Faults switched on here come first, then the scenario files' `api:` rules (docs/scenarios.md, Faults on railyard's own API).",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'The faults', schema: envelopeOf(z.array(faultSchema)) },
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Faults in force', (await deps.faults.inForce()).map(view)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/faults',
      operationId: 'sandboxAddFault',
      summary: 'Switch a fault profile on: lost responses, cut connections, server errors, slow responses or a rate limit',
      description:
        "Test keys only; live keys never meet an injected fault, and sandbox routes are exempt. The fault holds until DELETE /api/v1/sandbox/faults, and is tried before the scenario files' `api:` rules. On SQLite it lives in this process (a restart forgets it); on PostgreSQL it is in the database, in force on every instance sharing it, with its id unique among them and its counts and rate-limit windows counted for all of them together.",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: faultBody,
      response: { status: 201, description: 'The fault, switched on', schema: envelopeOf(faultSchema) },
      errors: ['forbidden'],
      handler: async ({ body }) => {
        const added = await deps.faults.switchOn(faultProfileRule(body));
        return { status: 201, body: ok(`Fault ${added.id} switched on`, view({ id: added.id, file: null, index: null, rule: added.rule, matched: 0, fired: 0 })) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/sandbox/faults',
      operationId: 'sandboxClearFaults',
      summary: 'Switch off every fault switched on through the sandbox control',
      description: "Test keys only. The scenario files' `api:` rules stay: edit the files to change them.",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'How many were switched off', schema: envelopeOf(z.object({ removed: z.number().int() })) },
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Faults switched off', { removed: await deps.faults.switchOff() }) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/sandbox/faults/:id',
      operationId: 'sandboxDeleteFault',
      summary: 'Switch off one fault switched on through the sandbox control',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: pathIdParams('id', 'fault', 'flt_1'),
      response: { status: 200, description: 'Switched off', schema: envelopeOf(z.object({ removed: z.number().int() })) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params }) => {
        const removed = await deps.faults.switchOff(params.id);
        if (!removed) throw noSuch('fault', params.id);
        return { status: 200, body: ok(`Fault ${params.id} switched off`, { removed }) };
      },
    }),
  ];
}
