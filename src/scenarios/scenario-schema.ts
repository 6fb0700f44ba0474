import { z } from 'zod';
import { NETWORKS } from '../kernel/msisdn.ts';
import { replaySettingsSchema, scriptStepSchema } from './script-schema.ts';

const callback = z.strictObject({
  after_seconds: z
    .number()
    .min(0)
    .max(30 * 24 * 3600)
    .default(3)
    .describe('Business seconds after acceptance'),
  status: z.enum(['success', 'failed']),
  reason: z.string().min(1).optional().describe('Upstream reason code when failed, e.g. NOT_ENOUGH_FUNDS'),
  drop: z.boolean().default(false).describe('Settle without calling back: only a status poll finds out'),
  duplicate: z.boolean().optional().describe('Send the same callback twice'),
  duplicate_after_seconds: z.number().min(0).max(86_400).optional().describe('With duplicate: business seconds between the callback and its duplicate (default 1)'),
});

export const behaviourSchema = z.strictObject({
  respond: z.enum(['accept', 'reject', 'timeout', 'server_error', 'malformed', 'reset']).default('accept'),
  reason: z.string().min(1).optional(),
  http_status: z.number().int().min(400).max(599).optional(),
  latency_ms: z.number().int().min(0).max(60_000).optional(),
  callback: callback.optional().describe('With timeout/malformed/reset: the provider took it after all and calls back late'),
  extra_callbacks: z.array(callback).optional().describe('More callbacks for the same transaction: contradicting or out of order'),
  resolves: z.boolean().optional().describe('resolve only: false means no such wallet or account'),
  name: z.string().min(1).optional().describe('resolve only: the account holder name'),
});

/** One behaviour, or a sequence: the first call gets the first, and so on; the last repeats. */
export const behaviourOrSequence = z.preprocess((v) => (Array.isArray(v) ? v : v === undefined ? v : [v]), z.array(behaviourSchema).min(1, 'a sequence needs at least one behaviour'));

/** Behaviour per provider; `any` covers providers not named. */
function perProviderSchema(providerIds: readonly string[]) {
  const names = [...providerIds, 'any'];
  return z
    .strictObject(Object.fromEntries(names.map((p) => [p, behaviourOrSequence.optional()])) as Record<string, z.ZodOptional<typeof behaviourOrSequence>>)
    .refine((v) => Object.values(v).some(Boolean), `name at least one provider (${providerIds.join(', ')}) or any`);
}

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

const rangeSchema = z.strictObject({ min: z.number().optional(), max: z.number().optional() }).refine((r) => r.min !== undefined || r.max !== undefined, 'range needs min or max');

const ONE_PREDICATE = 'give exactly one of equals, prefix, regex, one_of, range';
const onePredicate = (p: Record<string, unknown>) => Object.values(p).filter((v) => v !== undefined).length === 1;
const bareMeansEquals = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? { equals: v } : v);

/** A field predicate. A bare value means equals. */
export const predicateSchema = z.preprocess(
  bareMeansEquals,
  z
    .strictObject({
      equals: z.union([z.string(), z.number()]).optional(),
      prefix: z.string().min(1).optional(),
      regex: z.string().min(1).refine(compiles, 'regex does not compile').optional(),
      one_of: z
        .array(z.union([z.string(), z.number()]))
        .min(1)
        .optional(),
      range: rangeSchema.optional(),
    })
    .refine(onePredicate, ONE_PREDICATE),
);

const IDENTIFIER = 'an identifier is a string: quote it';

/**
 * A predicate on an identifier (a number, account, bank code, card): its values are strings,
 * because `0249990004` unquoted is the YAML number 249990004, which equals no number's text.
 */
export const identifierPredicateSchema = z.preprocess(
  bareMeansEquals,
  z
    .strictObject({
      equals: z.string({ error: IDENTIFIER }).optional(),
      prefix: z.string({ error: IDENTIFIER }).min(1).optional(),
      regex: z.string({ error: IDENTIFIER }).min(1).refine(compiles, 'regex does not compile').optional(),
      one_of: z
        .array(z.string({ error: IDENTIFIER }))
        .min(1)
        .optional(),
      range: rangeSchema.optional(),
    })
    .refine(onePredicate, ONE_PREDICATE),
);

/** The match fields that name an identifier: their values must be quoted strings in YAML. */
export const IDENTIFIER_FIELDS = ['msisdn', 'account_number', 'bank_code', 'card'] as const;

export type Predicate = z.infer<typeof predicateSchema>;

export interface MatchBlock {
  msisdn?: Predicate;
  account_number?: Predicate;
  bank_code?: Predicate;
  network?: Predicate;
  channel?: Predicate;
  provider?: Predicate;
  amount?: Predicate;
  card?: Predicate;
  all?: MatchBlock[];
  any?: MatchBlock[];
  not?: MatchBlock;
}

export const matchSchema: z.ZodType<MatchBlock> = z.lazy(() =>
  z
    .strictObject({
      msisdn: identifierPredicateSchema.optional().describe('Any of 0XXXXXXXXX, 233XXXXXXXXX, +233XXXXXXXXX for equals and one_of; prefix and regex see 0XXXXXXXXX'),
      account_number: identifierPredicateSchema.optional().describe('The bank account number, as a string'),
      bank_code: identifierPredicateSchema.optional().describe('The bank code, as a string (e.g. "040100")'),
      network: predicateSchema.optional().describe(`One of ${NETWORKS.join(', ')}`),
      channel: predicateSchema.optional(),
      provider: predicateSchema.optional(),
      amount: predicateSchema.optional().describe('Minor units (pesewas)'),
      card: identifierPredicateSchema.optional().describe('card-processor: the card number as digits (no spaces) or the tok_ token charged'),
      all: z.array(matchSchema).min(1).optional(),
      any: z.array(matchSchema).min(1).optional(),
      not: matchSchema.optional(),
    })
    .refine((m) => Object.values(m).some((v) => v !== undefined), 'match needs at least one field (or use default: true)'),
);

const stateSchema = z.strictObject({
  scenario: z.string().min(1).default('default').describe('The named state machine; each starts in Started'),
  requires: z.string().min(1).optional().describe('The rule applies only in this state'),
  sets: z.string().min(1).optional().describe('The state after the rule matches'),
});

/** A rule's fields but its behaviours per provider (collect, payout, resolve), which scenarioSchema adds. */
const ruleFields = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  match: matchSchema.optional(),
  default: z.boolean().optional().describe('Matches every call: put it last'),
  state: stateSchema.optional(),
});

export const walletSchema = z.strictObject({
  msisdn: z.string({ error: IDENTIFIER }).min(1),
  balance: z.number().int().min(0).describe('Pesewas: a charge above it fails with NOT_ENOUGH_FUNDS'),
});

/** A scenario file's sections; scenarioSchema replaces `rules` by its rules (and keeps it in its place). */
const scenarioFileSections = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1),
  description: z.string().optional(),
  wallets: z.array(walletSchema).default([]).describe("Simulated customers' mobile-money balances"),
  rules: z.array(ruleFields).default([]),
  // Lazy: declared at the end of this file, beside the rest of the `api:` language.
  api: z
    .lazy(() => z.array(apiRuleSchema))
    .default([])
    .describe("Faults on railyard's own merchant API: rate limits, 5xx answers, cut connections, lost answers, latency"),
  replay: replaySettingsSchema.optional().describe('How `railyard replay` sets up the sandbox for the script'),
  script: z.array(scriptStepSchema).optional().describe('Steps `railyard replay` runs and checks'),
});

/**
 * The scenario language for these providers: a rule names behaviours per provider (each of them,
 * and `any` for those not named). railyard's own is src/railyard-scenarios.ts's, built from
 * src/providers/index.ts; scenarios/ sits below the providers and is handed their ids.
 */
export function scenarioSchema(providerIds: readonly string[]) {
  const perProvider = perProviderSchema(providerIds);
  const rule = ruleFields
    .extend({ collect: perProvider.optional(), payout: perProvider.optional(), resolve: perProvider.optional() })
    .refine((r) => (r.match !== undefined) !== (r.default === true), { message: 'give match, or default: true', path: ['match'] });
  // extend keeps a replaced field where it stands, so the JSON Schema lists the sections in this order.
  const file = scenarioFileSections.extend({ rules: z.array(rule).default([]) });
  /** The providers a rule names behaviours for: every provider given, and `any` for those not named. */
  const providers: readonly string[] = [...providerIds, 'any'];
  return { providers, perProvider, rule, file };
}

export type ScenarioSchema = ReturnType<typeof scenarioSchema>;
export type ScenarioRule = z.infer<ScenarioSchema['rule']>;
export type ScenarioFile = z.infer<ScenarioSchema['file']>;
export type Behaviour = z.infer<typeof behaviourSchema>;
export type Wallet = z.infer<typeof walletSchema>;

export type ScenarioRuleInput = z.input<ScenarioSchema['rule']>;

// The `api:` section of a scenario file: faults on railyard's own merchant API (rate limits,
// 5xx answers, cut connections, lost answers, latency). Its rules match merchant requests with
// the same predicate language as provider rules (a bare value, equals, prefix, regex, one_of,
// range; all/any/not), and are decided by api-fault-engine.ts.

export interface ApiMatchBlock {
  method?: Predicate;
  route?: Predicate;
  path?: Predicate;
  key?: Predicate;
  header?: Record<string, Predicate>;
  body?: Record<string, Predicate>;
  all?: ApiMatchBlock[];
  any?: ApiMatchBlock[];
  not?: ApiMatchBlock;
}

export const apiMatchSchema: z.ZodType<ApiMatchBlock> = z.lazy(() =>
  z
    .strictObject({
      method: predicateSchema.optional().describe('The HTTP method, upper case: POST'),
      route: predicateSchema.optional().describe('The route as declared (the OpenAPI path in express syntax): /api/v1/transfers, /api/v1/charges/:id'),
      path: predicateSchema.optional().describe('The path as sent, without the query string'),
      key: predicateSchema.optional().describe('The API key id (key_...), as GET /api/v1/keys lists it; the sandbox key is key_sandbox_test'),
      header: z.record(z.string().min(1), predicateSchema).optional().describe('Request headers by name (any case): each named header must satisfy its predicate'),
      body: z.record(z.string().min(1), predicateSchema).optional().describe('JSON body fields by dotted path (customer.msisdn): each must satisfy its predicate'),
      all: z.array(apiMatchSchema).min(1).optional(),
      any: z.array(apiMatchSchema).min(1).optional(),
      not: apiMatchSchema.optional(),
    })
    .refine((m) => Object.values(m).some((v) => v !== undefined), 'match needs at least one field (or use default: true)'),
);

const apiStateSchema = z.strictObject({
  scenario: z.string().min(1).default('default').describe('The named state machine of api rules; each starts in Started'),
  requires: z.string().min(1).optional().describe('The rule applies only in this state'),
  sets: z.string().min(1).optional().describe('The state after the rule fires'),
});

export const rateLimitSchema = z.strictObject({
  requests: z.number().int().min(1).max(1_000_000).describe('Requests allowed per key in each window'),
  per_seconds: z.number().int().min(1).max(86_400).default(1).describe('The window, in seconds of the business clock (fixed windows at multiples of it)'),
});

/** The 5xx statuses an injected answer may have, with the envelope code each carries. */
export const INJECTED_STATUSES = [500, 503] as const;

export const apiRespondSchema = z.preprocess(
  (v) => (typeof v === 'number' ? { status: v } : v),
  z.strictObject({
    status: z
      .union(INJECTED_STATUSES.map((s) => z.literal(s)) as [z.ZodLiteral<500>, z.ZodLiteral<503>])
      .default(503)
      .describe('500 internal_error or 503 service_unavailable'),
    before_commit: z.boolean().default(false).describe('true: answer before any work (nothing happened); false: the work commits, then this answer replaces the real one'),
    message: z.string().min(1).optional().describe("The envelope's message"),
  }),
);

const latencyMs = z.number().int().min(0).max(120_000);
export const apiLatencySchema = z.preprocess(
  (v) => (typeof v === 'number' ? { before_commit: v } : v),
  z
    .strictObject({
      before_commit: latencyMs.optional().describe('Real milliseconds before the work starts'),
      after_commit: latencyMs.optional().describe('Real milliseconds between the commit and the answer'),
    })
    .refine((l) => l.before_commit !== undefined || l.after_commit !== undefined, 'give before_commit or after_commit (a bare number means before_commit)'),
);

const ACTIONS = ['rate_limit', 'respond', 'drop', 'latency_ms'] as const;

export const apiRuleSchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().optional(),
    match: apiMatchSchema.optional(),
    default: z.boolean().optional().describe('Matches every merchant request'),
    state: apiStateSchema.optional(),
    every: z.number().int().min(1).optional().describe('Fires on every Nth request the rule matches (the Nth, 2Nth, ...)'),
    probability: z.number().min(0).max(1).optional().describe("Fires with this probability, drawn from the scenario's seed"),
    times: z.number().int().min(1).optional().describe('Fires at most this many times'),
    rate_limit: rateLimitSchema.optional().describe('Per API key: a fixed window on the business clock; over it, 429 rate_limited with Retry-After'),
    respond: apiRespondSchema.optional().describe('A 5xx answer with the error envelope (a bare status means { status })'),
    drop: z.enum(['before_commit', 'after_commit']).optional().describe('Cut the connection with no answer: before any work, or after the work committed'),
    latency_ms: apiLatencySchema.optional().describe('Real delay (a bare number: before the work)'),
  })
  .refine((r) => (r.match !== undefined) !== (r.default === true), { message: 'give match, or default: true', path: ['match'] })
  .refine((r) => ACTIONS.some((a) => r[a] !== undefined), { message: 'give an action: rate_limit, respond, drop or latency_ms' })
  .refine((r) => r.respond === undefined || r.drop === undefined, { message: 'give respond or drop, not both', path: ['drop'] })
  .refine((r) => r.rate_limit === undefined || (r.respond === undefined && r.drop === undefined && r.latency_ms === undefined), {
    message: 'rate_limit stands alone: put respond, drop or latency_ms in a rule of its own',
    path: ['rate_limit'],
  });

export type ApiRule = z.infer<typeof apiRuleSchema>;
export type ApiRuleInput = z.input<typeof apiRuleSchema>;

/** A rule written as in YAML (bare values) to its normalised form. */
export function parseApiRule(input: ApiRuleInput): ApiRule {
  return apiRuleSchema.parse(input);
}
