import { z } from 'zod';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { SCOPES } from '../auth/scopes.ts';
import { ok, envelopeOf } from '../http/envelope.ts';
import { noSuch, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { ForbiddenError, ValidationError } from '../kernel/errors.ts';
import type { ProviderHealth } from '../rails/provider-health.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { walletSchema } from '../wallet/wallet.schemas.ts';
import { amountSchema } from '../http/field-schemas.ts';
import type { ClockAdvance, ClockAdvances } from './clock-advances.ts';
import type { SandboxFunding } from './sandbox-funding.ts';
import type { SandboxMerchants } from './sandbox-merchants.ts';

export interface SandboxRouteDeps {
  clock: Clock;
  scheduler: Scheduler;
  funding: SandboxFunding;
  router: RailRouter;
  health: ProviderHealth;
  apiKeys: ApiKeyService;
  merchants: SandboxMerchants;
  /** rails.timeout_ms as configured. */
  defaultTimeoutMs: number;
  /** The scenario rules' counts, named states and simulated wallets. */
  scenarios: { restart(): void | Promise<void> };
  advances: ClockAdvances;
  /** More jobs due than this and an advance runs in the background (202) unless asked to wait. */
  asyncAdvanceThreshold?: number;
  /** The in-process mock of a provider: where it is served and what it accepts. */
  mockAccess(provider: string): MockAccess | undefined;
}

const clockSchema = z.object({
  mode: z.enum(['system', 'virtual']),
  now: z.string(),
  pending_jobs: z.number().int(),
  next_job_at: z.string().nullable(),
});

const providerSchema = z.object({
  name: z.string(),
  channels: z.array(z.string()),
  networks: z.array(z.string()),
  priority: z.number().int(),
  enabled: z.boolean(),
  status: z.enum(['up', 'down']),
  base_url: z.string(),
  upstream: z.enum(['mock', 'real']),
});

const mockSchema = z
  .object({
    base_url: z.string().describe("Where the in-process mock of this provider is served: give it to the provider's own SDK as its base URL"),
    credentials: z
      .array(
        z.object({
          name: z.string(),
          where: z.string().describe('Where a client presents it (header, Basic auth, path segment)'),
          value: z.string().nullable().describe('null for a secret when the adapter uses the same configured value against a real upstream'),
        }),
      )
      .describe('What the mock accepts, as configured under providers.<name>'),
    notes: z.array(z.string()).describe('Provisioning steps (MTN API users), host prefixes, signing rules, test numbers'),
  })
  .describe("The provider's mock, which is served whether or not the adapter uses it");
type MockAccess = z.infer<typeof mockSchema>;

const providerWithMockSchema = providerSchema.extend({ mock: mockSchema.nullable() });

const railsSchema = z.object({
  timeout_ms: z.number().int().describe('The real-time timeout of every upstream call'),
  timeout_overridden: z.boolean().describe('true when a tuning set timeout_ms; false: the configured rails.timeout_ms (and providers.<name>.timeout_ms) apply'),
  providers: z.array(providerSchema),
});

const MAX_ADVANCE_SECONDS = 366 * 24 * 3600;

/** Above this many due jobs an advance answers 202 at once and runs in the background. */
export const ASYNC_ADVANCE_THRESHOLD = 1000;

export const clockAdvanceSchema = z.object({
  id: z.string().describe('adv_…: follow it at GET /api/v1/sandbox/clock/advances/{id}'),
  state: z.enum(['running', 'succeeded', 'failed']),
  seconds: z.number(),
  from: z.string().describe('Business time when the advance started'),
  to: z.string().describe('Business time the advance moves the clock to'),
  jobs_done: z.number().int().describe('Jobs run so far'),
  jobs_total: z.number().int().describe('Jobs due by `to`, run or waiting: it grows when running jobs schedule more (webhook deliveries, retries) and equals jobs_done once succeeded'),
  started_at: z.string().describe('Real time the advance was asked for'),
  finished_at: z.string().nullable().describe('Real time it ended; null while running'),
  error: z.string().nullable().describe('Why it failed; null unless failed'),
});

function advanceView(a: ClockAdvance): z.infer<typeof clockAdvanceSchema> {
  return {
    id: a.id,
    state: a.state,
    seconds: a.seconds,
    from: iso(a.from),
    to: iso(a.to),
    jobs_done: a.done,
    jobs_total: Math.max(a.total, a.done),
    started_at: iso(a.startedAt),
    finished_at: a.finishedAt === null ? null : iso(a.finishedAt),
    error: a.error,
  };
}

/** How often, at most, the event stream of a running advance sends its progress. */
const PROGRESS_EVERY_MS = 100;

/** RFC 7240: Prefer: respond-async. */
function prefersAsync(prefer: string | undefined): boolean {
  return (prefer ?? '').split(',').some((p) => p.trim().toLowerCase() === 'respond-async');
}

/** Test-mode helpers: only sk_test_ keys reach them (route flag sandboxOnly). */
export function sandboxRoutes(deps: SandboxRouteDeps): RouteSpec[] {
  const threshold = deps.asyncAdvanceThreshold ?? ASYNC_ADVANCE_THRESHOLD;
  const clockState = async () => {
    const pending = await deps.scheduler.pending();
    return {
      mode: deps.clock.kind,
      now: iso(deps.clock.now()),
      pending_jobs: pending.count,
      next_job_at: pending.nextRunAt === null ? null : iso(pending.nextRunAt),
    };
  };
  const providers = () =>
    deps.router.list().map((r) => {
      const baseUrl = r.provider.baseUrl();
      return {
        name: r.provider.name,
        channels: [...r.provider.channels],
        networks: [...r.provider.networks],
        priority: r.priority,
        enabled: r.enabled,
        status: deps.health.isDown(r.provider.name) ? ('down' as const) : ('up' as const),
        base_url: baseUrl,
        upstream: baseUrl.includes('/mocks/') ? ('mock' as const) : ('real' as const),
      };
    });

  const rails = (defaultTimeoutMs: number) => ({
    timeout_ms: deps.router.timeoutOverrideMs ?? defaultTimeoutMs,
    timeout_overridden: deps.router.timeoutOverrideMs !== null,
    providers: providers(),
  });

  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/merchants',
      operationId: 'sandboxCreateMerchant',
      summary: 'Create a fresh sandbox merchant and its test key, to run a test in isolation',
      description:
        'Test keys only. The new merchant starts at the sandbox stage with an empty wallet, no events, no Idempotency-Keys and no webhook endpoints; its test key gets the scopes and role of the calling key. The key and its signing secret are shown once. Contract verification against a running railyard builds each provider state on a merchant of its own.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({ name: z.string().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters').optional() }),
      response: {
        status: 201,
        description: 'The merchant and its test key',
        schema: envelopeOf(z.object({ id: z.string(), name: z.string(), key: z.string(), signing_secret: z.string(), environment: z.literal('test'), scopes: z.array(z.string()), role: z.string() })),
      },
      errors: ['forbidden'],
      handler: async ({ body, auth }) => {
        const created = await deps.merchants.create(auth, body.name ?? 'Sandbox test merchant');
        return {
          status: 201,
          body: ok('Merchant created; store its key now, it is not shown again', {
            id: created.merchantId,
            name: created.name,
            key: created.key.key,
            signing_secret: created.key.signingSecret,
            environment: 'test' as const,
            scopes: created.key.scopes,
            role: created.key.role,
          }),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/scenarios/restart',
      operationId: 'sandboxRestartScenarios',
      summary: 'Start the scenario rules afresh: every sequence at its first behaviour, named states and simulated wallets as loaded',
      description:
        "Test keys only. What a reload of the scenario files does, without reloading them; matched counts start from 0, and so do the `api:` rules' counts, rate-limit windows and states (faults switched on through /api/v1/sandbox/faults stay on).",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'Restarted', schema: envelopeOf(z.object({ restarted: z.literal(true) })) },
      errors: ['forbidden'],
      handler: async () => {
        await deps.scenarios.restart();
        return { status: 200, body: ok('Scenario rules restarted', { restarted: true as const }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/rails',
      operationId: 'sandboxGetRails',
      summary: 'The provider line-up in force and the real-time timeout of upstream calls',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'The rails', schema: envelopeOf(railsSchema) },
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Rails', rails(deps.defaultTimeoutMs)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/sandbox/rails',
      operationId: 'sandboxTuneRails',
      summary: 'Tune the rails: switch providers on or off, reorder them, shorten the real-time timeout of upstream calls',
      description:
        "Test keys only. Each tuning starts from the configuration, not from the last tuning: providers not named, and the timeout when timeout_ms is left out, go back to their configured values, so {} restores the configuration. It holds for every merchant, on every instance of a fleet sharing a PostgreSQL database, until the next tuning (on SQLite, until a restart). Contract verification against a running railyard sets each state's line-up and a 500 ms timeout, as a replay does, and restores the configuration at the end.",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({
        timeout_ms: z.number().int('timeout_ms must be a whole number').min(10, 'timeout_ms must be at least 10').max(120_000, 'timeout_ms must be at most 120000').optional(),
        providers: z
          .record(
            z.string(),
            z.strictObject({
              enabled: z.boolean({ error: 'enabled must be true or false' }).optional(),
              priority: z.number().int('priority must be a whole number').min(1, 'priority must be at least 1').max(100, 'priority must be at most 100').optional(),
            }),
          )
          .optional(),
      }),
      response: { status: 200, description: 'The rails now', schema: envelopeOf(railsSchema) },
      errors: ['forbidden', 'validation_error'],
      handler: async ({ body }) => {
        const unknown = Object.keys(body.providers ?? {}).filter((name) => !deps.router.get(name));
        if (unknown.length) {
          throw new ValidationError(
            `No provider named ${unknown.join(', ')}`,
            unknown.map((name) => ({ field: `providers.${name}`, message: `no provider named ${name}` })),
          );
        }
        await deps.router.tune({ ...(body.timeout_ms !== undefined ? { timeoutMs: body.timeout_ms } : {}), ...(body.providers ? { providers: body.providers } : {}) });
        return { status: 200, body: ok('Rails tuned', rails(deps.defaultTimeoutMs)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/wallet/fund',
      operationId: 'sandboxFundWallet',
      summary: 'Credit the test wallet out of thin air (a sandbox funding journal)',
      tag: 'Sandbox',
      area: 'finance',
      sandboxOnly: true,
      body: z.strictObject({ amount: amountSchema }),
      response: { status: 200, description: 'The new balance', schema: envelopeOf(walletSchema) },
      errors: ['forbidden'],
      handler: async ({ body, auth }) => ({ status: 200, body: ok('Wallet funded', await deps.funding.fund(auth, body.amount)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/clock',
      operationId: 'sandboxGetClock',
      summary: 'Business time, and the jobs waiting on it',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'The clock', schema: envelopeOf(clockSchema) },
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Clock', await clockState()) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/clock/advance',
      operationId: 'sandboxAdvanceClock',
      summary: 'Move the virtual clock forward, running every job that falls due, in order',
      description:
        `Answers 200 when the advance is done. When more than ${threshold} jobs fall due by the target, or with "async": true or the header ` +
        '`Prefer: respond-async`, it answers 202 at once with an advance to follow at GET /api/v1/sandbox/clock/advances/{id} (also in the Location header). ' +
        '"wait": true always waits for the 200.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z
        .strictObject({
          seconds: z.number({ error: 'seconds must be a number' }).min(0, 'seconds must be zero or more').max(MAX_ADVANCE_SECONDS, 'seconds must be at most a year'),
          async: z.boolean({ error: 'async must be true or false' }).optional().describe('Answer 202 at once and run the advance in the background'),
          wait: z.boolean({ error: 'wait must be true or false' }).optional().describe('Answer 200 when done, however many jobs fall due'),
        })
        .refine((b) => !(b.async && b.wait), { message: 'ask for async or wait, not both', path: ['wait'] }),
      response: { status: 200, description: 'The clock after advancing', schema: envelopeOf(clockSchema.extend({ jobs_run: z.number().int() })) },
      alternatives: [
        {
          status: 202,
          description: 'The advance runs in the background: follow it at its Location',
          schema: envelopeOf(clockAdvanceSchema),
          headers: { Location: '/api/v1/sandbox/clock/advances/{id}' },
        },
      ],
      errors: ['forbidden'],
      handler: async ({ body, req }) => {
        if (deps.clock.kind !== 'virtual') {
          throw new ValidationError('The clock is the system clock; start railyard with RAILYARD_CLOCK=virtual to advance it', [{ field: 'seconds', message: 'the system clock cannot be advanced' }]);
        }
        const ms = Math.round(body.seconds * 1000);
        if (!body.wait) {
          const due = await deps.scheduler.dueWithin(ms);
          if (body.async || (body.async === undefined && prefersAsync(req.get('prefer'))) || (body.async === undefined && due > threshold)) {
            const advance = deps.advances.start(body.seconds, due);
            const location = `/api/v1/sandbox/clock/advances/${advance.id}`;
            return {
              status: 202,
              headers: { Location: location, 'Preference-Applied': 'respond-async' },
              body: ok(`Advancing ${body.seconds} s in the background (${due} job(s) due); follow ${location}`, advanceView(advance)),
            };
          }
        }
        const ran = await deps.scheduler.advanceBy(ms);
        return { status: 200, body: ok(`Advanced ${body.seconds} s; ran ${ran} job(s)`, { ...(await clockState()), jobs_run: ran }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/clock/advances/:id',
      operationId: 'sandboxGetClockAdvance',
      summary: 'How far a background advance has got: jobs done and due, and its state',
      description: 'Advances are held by the process that runs them, in memory: after a restart the id names nothing (404), and the clock resumes at the last job that ran.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: pathIdParams('id', 'clock advance', 'adv_1_1'),
      response: { status: 200, description: 'The advance', schema: envelopeOf(clockAdvanceSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params }) => {
        const advance = deps.advances.get(params.id);
        if (!advance) throw noSuch('clock advance', params.id);
        return { status: 200, body: ok(`Advance ${advance.state}: ${advance.done} of ${Math.max(advance.total, advance.done)} job(s)`, advanceView(advance)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/clock/advances/:id/events',
      operationId: 'sandboxStreamClockAdvance',
      summary: 'A background advance as server-sent events: one `progress` event per change, then `succeeded` or `failed`, and the stream ends',
      description: "Each event's data is the advance, as GET /api/v1/sandbox/clock/advances/{id} answers it. An advance that already ended gives its one final event.",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: pathIdParams('id', 'clock advance', 'adv_1_1'),
      response: { status: 200, description: "The advance's progress, as server-sent events", schema: clockAdvanceSchema, contentType: 'text/event-stream' },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params }) => {
        const advance = deps.advances.get(params.id);
        if (!advance) throw noSuch('clock advance', params.id);
        return {
          status: 200,
          body: null,
          stream: (res, req) => {
            let last = '';
            const send = (a: ClockAdvance) => {
              const data = JSON.stringify(advanceView(a));
              if (data === last) return;
              last = data;
              res.write(`event: ${a.state === 'running' ? 'progress' : a.state}\ndata: ${data}\n\n`);
              if (a.state !== 'running') res.end();
            };
            if (advance.state !== 'running') return send(advance);
            // At most one event per PROGRESS_EVERY_MS while it runs: a large advance changes thousands of times a second.
            let timer: NodeJS.Timeout | undefined;
            const stop = deps.advances.follow(advance.id, (a) => {
              if (a.state !== 'running') {
                clearTimeout(timer);
                return send(a);
              }
              timer ??= setTimeout(() => {
                timer = undefined;
                send(a);
              }, PROGRESS_EVERY_MS);
            });
            req.on('close', () => {
              clearTimeout(timer);
              stop();
            });
            send(advance);
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/providers',
      operationId: 'sandboxListProviders',
      summary: 'Provider rails: channels, networks, priority, up/down, where each one sends requests, and its mock with the credentials it accepts',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'Providers by priority', schema: envelopeOf(z.array(providerWithMockSchema)) },
      errors: ['forbidden'],
      handler: async () => ({
        status: 200,
        body: ok(
          'Providers',
          providers().map((p) => {
            const access = deps.mockAccess(p.name);
            return { ...p, mock: access ? { base_url: access.base_url, credentials: access.credentials, notes: access.notes } : null };
          }),
        ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/providers/:name/outage',
      operationId: 'sandboxSetProviderOutage',
      summary: 'Take a provider down (its mock answers 503 and routing fails over) or bring it back',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: pathIdParams('name', 'provider', 'mtn-momo'),
      body: z.strictObject({ down: z.boolean({ error: 'down must be true or false' }) }),
      response: { status: 200, description: 'The provider', schema: envelopeOf(providerSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, body }) => {
        if (!deps.router.get(params.name)) throw noSuch('provider', params.name);
        await deps.health.setDown(params.name, body.down);
        return { status: 200, body: ok(body.down ? 'Provider is down' : 'Provider is up', providers().find((p) => p.name === params.name)!) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/keys',
      operationId: 'sandboxCreateKey',
      summary: 'Issue an API key and signing secret for this merchant, e.g. a restricted or a live key',
      description: 'A key can grant only scopes the calling key holds. The key and its signing secret are shown once.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({
        environment: z.enum(['test', 'live'], { error: 'environment must be test or live' }),
        scopes: z.array(z.enum(SCOPES, { error: `each scope must be one of ${SCOPES.join(', ')}` })).min(1, 'name at least one scope'),
      }),
      response: {
        status: 201,
        description: 'The new key',
        schema: envelopeOf(z.object({ id: z.string(), key: z.string(), signing_secret: z.string(), environment: z.enum(['test', 'live']), scopes: z.array(z.string()) })),
      },
      errors: ['forbidden'],
      handler: async ({ body, auth }) => {
        const beyond = body.scopes.filter((s) => !auth.scopes.includes(s));
        if (beyond.length) throw new ForbiddenError(`This key cannot grant scopes it does not hold: ${beyond.join(', ')}`, { scopes: beyond });
        const issued = await deps.apiKeys.issueInTransaction({ merchantId: auth.merchantId, environment: body.environment, scopes: [...new Set(body.scopes)] });
        return {
          status: 201,
          body: ok('Key issued; store it now, it is not shown again', {
            id: issued.id,
            key: issued.key,
            signing_secret: issued.signingSecret,
            environment: issued.environment,
            scopes: issued.scopes,
          }),
        };
      },
    }),
  ];
}
