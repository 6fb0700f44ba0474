import type { Router } from 'express';
import express from 'express';
import type { IdempotencyService } from '../idempotency/idempotency-service.ts';
import type { Clock } from '../kernel/clock.ts';
import { JOB_HEADER, joinRunningJob } from '../kernel/job-scope.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Timeline } from '../kernel/timeline.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Store } from '../store/db.ts';
import { RailError, type RailOutcome } from './provider-port.ts';
import type { RailRouter } from './rail-router.ts';
import { RAIL_POLL, type PollPayload, type SettlementResult, type SettlementTarget } from './settlement-target.ts';

/** A callback as the receiver reads it: the provider named by its path, what follows that in the path, and the exact bytes. */
export interface ReceivedCallback {
  provider: string;
  method: string;
  /** What follows /internal/callbacks/{provider} in the path, "/" when nothing does. */
  subpath: string;
  /** Header names in lower case, as node hands them to a server. */
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
}

/** The receiver's answer: an HTTP status and the JSON body the route sends. */
export interface CallbackAnswer {
  status: 200 | 400 | 401 | 404;
  body: { status: boolean; message: string; data?: { result: SettlementResult }; error?: { code: string } };
}

/**
 * Brings provider results home: the internal callback receiver (not merchant-facing) and the
 * status poll that covers callbacks that never come. Both end in the same settle().
 */
export class RailSettlement {
  constructor(
    private readonly deps: {
      router: RailRouter;
      targets: SettlementTarget[];
      idempotency: IdempotencyService;
      scheduler: Scheduler;
      store: Store;
      clock: Clock;
      logger: Logger;
      config: { rails: { poll_interval_seconds: number; max_polls: number } };
      timeline: Timeline;
    },
  ) {
    deps.scheduler.register(RAIL_POLL, (payload: PollPayload) => this.poll(payload));
  }

  /** The target whose ids a callback's reference carries, if any. */
  private targetOf(reference: string): SettlementTarget | undefined {
    return this.deps.targets.find((t) => reference.startsWith(`${t.idPrefix}_`));
  }

  /** POST or PUT /internal/callbacks/{provider}/... : providers call this, merchants never do. */
  callbackRouter(): Router {
    const router = express.Router();
    router.use(express.text({ type: () => true, limit: '100kb' }));
    router.all('/:provider{/*rest}', async (req, res) => {
      const provider = req.params.provider as string;
      const callback = {
        provider,
        method: req.method,
        subpath: req.path.slice(`/${provider}`.length) || '/',
        headers: req.headers,
        rawBody: typeof req.body === 'string' ? req.body : '',
      };
      const answer = await this.receive(callback, req.get(JOB_HEADER));
      res.status(answer.status).json(answer.body);
    });
    return router;
  }

  /**
   * One callback to the receiver, however it arrived: over HTTP (the route above) or handed over
   * in process by one of railyard's own mocks. `jobToken` names the running job that sent it (the
   * route's JOB_HEADER); without one, the callback is settled in the caller's job, if any.
   */
  async receive(callback: ReceivedCallback, jobToken?: string): Promise<CallbackAnswer> {
    const provider = this.deps.router.get(callback.provider);
    if (!provider || !['POST', 'PUT'].includes(callback.method)) {
      return { status: 404, body: { status: false, message: 'Unknown callback receiver', error: { code: 'not_found' } } };
    }
    const { rawBody } = callback;
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const inbound = { method: callback.method, subpath: callback.subpath, headers: callback.headers, rawBody, body };
    if (!provider.verifyCallback(inbound)) {
      this.deps.logger.warn('callback rejected: not authentic', { provider: provider.name });
      return { status: 401, body: { status: false, message: 'Callback not authentic', error: { code: 'unauthorized' } } };
    }
    let parsed: ReturnType<typeof provider.parseCallback>;
    try {
      parsed = provider.parseCallback(inbound);
    } catch (err) {
      const message = err instanceof RailError ? err.message : 'unreadable callback';
      this.deps.logger.warn('callback rejected: unreadable', { provider: provider.name, error: message });
      return { status: 400, body: { status: false, message, error: { code: 'validation_error' } } };
    }
    const target = this.targetOf(parsed.reference);
    // A callback an in-process mock's job sends is settled as part of that job: its ids, its
    // turn to write and its timeline place are the job's, whichever job of its round came first.
    const result: SettlementResult = await joinRunningJob(jobToken, async () => {
      const result: SettlementResult = target ? await target.settle(parsed.reference, provider.name, parsed.outcome, 'callback') : 'ignored';
      this.deps.timeline.record(
        provider.name,
        'railyard',
        `callback ${parsed.reference}: ${parsed.outcome.status}${parsed.outcome.status === 'failed' ? ` (${parsed.outcome.reason})` : ''} -> ${result}`,
      );
      return result;
    });
    this.deps.logger.info('callback received', { provider: provider.name, reference: parsed.reference, outcome: parsed.outcome.status, result });
    // Acknowledge either way: providers do not retry, and an ignored duplicate is not their fault.
    return { status: 200, body: { status: true, message: 'received', data: { result } } };
  }

  private async poll(payload: PollPayload): Promise<void> {
    const target = this.deps.targets.find((t) => t.object === payload.object);
    const row = await target?.view(this.deps.store, payload.id);
    if (!target || !row) return;
    const { pending } = row;
    if (!row.providerReference) {
      // No provider's answer is recorded: this process is still routing it, or a stop cut the
      // routing off (resume it and answer its Idempotency-Key, even if a callback has settled
      // it since), or nothing can (fail it).
      const claim = await this.deps.idempotency.claimState(this.deps.store, payload.id);
      if (claim === 'in_flight_live') return pending ? this.pollAgain(payload) : undefined;
      if (claim === 'orphaned') return this.deps.idempotency.recover(payload.id);
      if (!pending) return;
      await this.deps.store.transaction((tx) => target.abandon(tx, payload.id));
      return;
    }
    if (!pending || !row.provider) return;
    const provider = this.deps.router.get(row.provider);
    let outcome: RailOutcome = { status: 'pending' };
    try {
      outcome = await provider!.status({
        operation: target.operation,
        reference: payload.id,
        providerReference: row.providerReference,
      });
    } catch (err) {
      this.deps.logger.warn('status poll failed', { provider: row.provider, ref: payload.id, error: String(err) });
    }
    this.deps.timeline.record('railyard', row.provider, `status poll ${payload.id}: ${outcome.status}`);
    // A pending answer changes nothing, but the target keeps it on the record's timeline.
    await target.settle(payload.id, row.provider, outcome, 'poll');
    if (outcome.status === 'pending') await this.pollAgain(payload);
  }

  private async pollAgain(payload: PollPayload): Promise<void> {
    if (payload.polls + 1 < this.deps.config.rails.max_polls) {
      await this.deps.scheduler.schedule(this.deps.store, {
        kind: RAIL_POLL,
        runAt: this.deps.clock.now() + this.deps.config.rails.poll_interval_seconds * 1000,
        payload: { ...payload, polls: payload.polls + 1 },
        partition: payload.id,
      });
    } else {
      this.deps.logger.warn('gave up polling; still pending', { ref: payload.id });
    }
  }
}
