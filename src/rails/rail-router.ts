import { performance } from 'node:perf_hooks';
import type { Clock } from '../kernel/clock.ts';
import { ProviderUnavailableError } from '../kernel/errors.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Network } from '../kernel/msisdn.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Timeline } from '../kernel/timeline.ts';
import type { Store } from '../store/db.ts';
import { RailRepository } from '../store/repositories/rail-repository.ts';
import type { ProviderHealth } from './provider-health.ts';
import { RailError, type Channel, type RailProvider } from './provider-port.ts';

export interface RegisteredProvider {
  provider: RailProvider;
  priority: number;
  enabled: boolean;
}

export interface RouteRequest {
  environment: Environment;
  channel: Channel;
  network?: Network;
  operation: 'collect' | 'payout' | 'resolve';
  refType: string;
  refId: string;
}

/**
 * A sandbox's runtime change to the configured rails (PUT /api/v1/sandbox/rails): the line-up
 * (each named provider's switch and priority) and one real-time timeout for every upstream call.
 * Each change starts from the configuration, so an empty one restores it.
 */
export interface RailTuning {
  timeoutMs?: number;
  providers?: Record<string, { enabled?: boolean; priority?: number }>;
}

export interface AttemptRecord {
  provider: string;
  outcome: string;
  detail?: string;
  /** Real milliseconds the call took; absent for a provider skipped without a call. */
  latencyMs?: number;
}

/**
 * Picks providers for a channel (and network) by priority and fails over to the next on a
 * timeout, a refused connection, a 5xx or an unreadable answer. A provider that refuses the
 * request on its merits ends the routing: the same request would be refused elsewhere too.
 */
export class RailRouter {
  private readonly attempts = new RailRepository();
  private readonly configured: Map<string, { priority: number; enabled: boolean }>;
  private timeoutOverride: number | null = null;

  constructor(
    private readonly registered: RegisteredProvider[],
    private readonly deps: { health: ProviderHealth; store: Store; clock: Clock; logger: Logger; timeline: Timeline },
  ) {
    this.configured = new Map(registered.map((r) => [r.provider.name, { priority: r.priority, enabled: r.enabled }]));
    // A tuning another instance of the fleet set: applied as that instance applied it.
    deps.health.onTuning((tuning) => this.apply(tuning as RailTuning, false));
  }

  /**
   * Applies a sandbox tuning over the configuration (not over the last tuning); unknown names
   * throw. It holds for the fleet: kept beside the outages, which every instance reads per request.
   */
  async tune(tuning: RailTuning): Promise<void> {
    this.apply(tuning, true);
    await this.deps.health.setTuning(tuning);
  }

  private apply(tuning: RailTuning, strict: boolean): void {
    const unknown = Object.keys(tuning.providers ?? {}).filter((name) => !this.configured.has(name));
    if (unknown.length && strict) throw new Error(`no provider named ${unknown.join(', ')}`);
    for (const r of this.registered) {
      const change = tuning.providers?.[r.provider.name];
      const base = this.configured.get(r.provider.name)!;
      r.priority = change?.priority ?? base.priority;
      r.enabled = change?.enabled ?? base.enabled;
    }
    this.timeoutOverride = tuning.timeoutMs ?? null;
  }

  /** The real-time timeout a tuning set for every upstream call, or null: each adapter's configured one. */
  get timeoutOverrideMs(): number | null {
    return this.timeoutOverride;
  }

  list(): RegisteredProvider[] {
    return [...this.registered].sort((a, b) => a.priority - b.priority || a.provider.name.localeCompare(b.provider.name));
  }

  get(name: string): RailProvider | undefined {
    return this.registered.find((r) => r.provider.name === name)?.provider;
  }

  candidates(channel: Channel, network?: Network): RailProvider[] {
    return this.list()
      .filter((r) => r.enabled && r.provider.channels.includes(channel))
      .filter((r) => channel !== 'momo' || !network || r.provider.networks.includes(network))
      .map((r) => r.provider);
  }

  async route<T>(request: RouteRequest, call: (provider: RailProvider) => Promise<T>): Promise<{ provider: RailProvider; result: T; attempts: AttemptRecord[] }> {
    const attempts: AttemptRecord[] = [];
    const candidates = this.candidates(request.channel, request.network);
    for (const provider of candidates) {
      if (this.deps.health.isDown(provider.name)) {
        await this.record(request, { provider: provider.name, outcome: 'skipped_down' });
        attempts.push({ provider: provider.name, outcome: 'skipped_down' });
        continue;
      }
      // Real milliseconds: a provider call is a real socket, whatever the business clock says.
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      try {
        const result = await call(provider);
        const providerReference = (result as { providerReference?: string } | null)?.providerReference;
        await this.record(request, { provider: provider.name, outcome: 'accepted', latencyMs: latency() }, providerReference);
        attempts.push({ provider: provider.name, outcome: 'accepted' });
        return { provider, result, attempts };
      } catch (err) {
        const railError = err instanceof RailError ? err : new RailError('protocol', String(err));
        const attempt = { provider: provider.name, outcome: railError.kind, detail: railError.message.slice(0, 300) };
        await this.record(request, { ...attempt, latencyMs: latency() });
        attempts.push(attempt);
        this.deps.logger.warn('provider call failed', { provider: provider.name, operation: request.operation, ref: request.refId, kind: railError.kind });
        if (!railError.failsOver) throw railError;
      }
    }
    throw new ProviderUnavailableError(
      candidates.length
        ? `No provider could serve this ${request.channel} ${request.operation}: ${attempts.map((a) => `${a.provider} ${a.outcome}`).join(', ')}`
        : `No provider is configured for ${request.channel}${request.network ? ` on ${request.network}` : ''}`,
      { attempts: attempts.map(({ provider, outcome }) => ({ provider, outcome })) },
    );
  }

  private async record(request: RouteRequest, attempt: AttemptRecord, providerReference?: string): Promise<void> {
    this.deps.timeline.record('railyard', attempt.provider, `${request.operation} ${request.refId}: ${attempt.outcome.replace('_', ' ')}`);
    // An append alone in its transaction (appendOnly): committed with other requests' appends.
    await this.deps.store.transaction(
      (tx) =>
        this.attempts.insertAttempt(tx, {
          environment: request.environment,
          refType: request.refType,
          refId: request.refId,
          provider: attempt.provider,
          operation: request.operation,
          outcome: attempt.outcome,
          providerReference: providerReference ?? null,
          detail: attempt.detail ?? null,
          latencyMs: attempt.latencyMs ?? null,
          createdAt: this.deps.clock.now(),
        }),
      { appendOnly: true },
    );
  }
}
