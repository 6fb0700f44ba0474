import { z } from 'zod';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { SCOPES } from '../auth/scopes.ts';
import { ok } from '../http/envelope.ts';
import { noSuch, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { ForbiddenError, ValidationError } from '../kernel/errors.ts';
import type { ProviderHealth } from '../rails/provider-health.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { amountSchema, envelopeOf, walletSchema } from '../wallet/wallet.schemas.ts';
import type { SandboxFunding } from './sandbox-funding.ts';

export interface SandboxRouteDeps {
  clock: Clock;
  scheduler: Scheduler;
  funding: SandboxFunding;
  router: RailRouter;
  health: ProviderHealth;
  apiKeys: ApiKeyService;
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
    base_url: z.string().describe('Where the in-process mock of this provider is served: give it to the provider\'s own SDK as its base URL'),
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
  .describe('The provider\'s mock, which is served whether or not the adapter uses it');
type MockAccess = z.infer<typeof mockSchema>;

const providerWithMockSchema = providerSchema.extend({ mock: mockSchema.nullable() });

const MAX_ADVANCE_SECONDS = 366 * 24 * 3600;

/** Test-mode helpers: only sk_test_ keys reach them (route flag sandboxOnly). */
export function sandboxRoutes(deps: SandboxRouteDeps): RouteSpec[] {
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

  return [
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
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({
        seconds: z.number({ error: 'seconds must be a number' }).min(0, 'seconds must be zero or more').max(MAX_ADVANCE_SECONDS, 'seconds must be at most a year'),
      }),
      response: { status: 200, description: 'The clock after advancing', schema: envelopeOf(clockSchema.extend({ jobs_run: z.number().int() })) },
      errors: ['forbidden'],
      handler: async ({ body }) => {
        if (deps.clock.kind !== 'virtual') {
          throw new ValidationError('The clock is the system clock; start railyard with RAILYARD_CLOCK=virtual to advance it', [
            { field: 'seconds', message: 'the system clock cannot be advanced' },
          ]);
        }
        const ran = await deps.scheduler.advanceBy(Math.round(body.seconds * 1000));
        return { status: 200, body: ok(`Advanced ${body.seconds} s; ran ${ran} job(s)`, { ...(await clockState()), jobs_run: ran }) };
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
