import { performance } from 'node:perf_hooks';
import type { AuthContext } from '../auth/api-key-service.ts';
import type { Config } from '../config/config.ts';
import type { RailyardEvent } from '../events/event-outbox.ts';
import { decodeCursor, DEFAULT_PAGE_SIZE, page } from '../http/pagination.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { httpExchange, HttpConnectionError, HttpTimeoutError } from '../kernel/http-exchange.ts';
import type { HttpExchange } from '../kernel/http-exchange-thread.ts';
import { NotFoundError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { finalWrites } from '../kernel/job-scope.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Timeline } from '../kernel/timeline.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Db, Store } from '../store/db.ts';
import { WebhookDeliveryRepository, type WebhookDeliveryRow } from '../store/repositories/webhook-delivery-repository.ts';
import { WebhookEndpointRepository } from '../store/repositories/webhook-endpoint-repository.ts';
import type { EventStream } from './event-stream.ts';
import type { EndpointRow, WebhookEndpointService } from './webhook-endpoint-service.ts';
import { webhookHeaders } from './webhook-signer.ts';
import type { z } from 'zod';
import type { deliverySchema } from './webhook.schemas.ts';

type Delivery = z.infer<typeof deliverySchema>;

type DeliveryRow = WebhookDeliveryRow;

const EXCERPT_CHARS = 500;
/** Deliveries one replay_failed call sends; `more` says when the range holds further ones. */
export const MAX_REPLAY = 100;

/**
 * The deliveries of one object's events to one endpoint run one at a time, in event order (a
 * charge's charge.pending reaches it before its charge.success); other objects' deliveries, to
 * the same endpoint or others, go out side by side.
 */
export function deliveryPartition(endpointId: string, objectId: string): string {
  return `endpoint:${endpointId}:${objectId}`;
}

/** One attempt as it happened, before it is logged. */
interface AttemptRecord {
  deliveryId: string;
  trigger: 'automatic' | 'redelivery';
  at: number;
  url: string;
  status: number | null;
  latencyMs: number;
  excerpt: string | null;
  error: string | null;
  ok: boolean;
}

/**
 * Delivers the outbox as signed webhooks, at least once. On every scheduler tick, committed events
 * not yet dispatched become one delivery per matching endpoint, each a job due now. A failed
 * attempt (non-2xx, timeout, refused connection) is retried after the next delay of
 * webhooks.retry_schedule_seconds on the business clock; after the last, the delivery fails and
 * the endpoint is flagged failing. One object's first attempts go out to an endpoint in event
 * order (deliveryPartition); different objects' side by side; retries may overtake.
 */
export class WebhookDispatcher {
  private readonly repo: WebhookDeliveryRepository;
  private readonly endpointRepo = new WebhookEndpointRepository();
  /** The timer of followOutbox, when the stream follows the outbox. */
  private following: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      /** webhook-timestamp is checked by receivers against their real clocks. */
      wallClock: Clock;
      ids: IdGenerator;
      scheduler: Scheduler;
      endpoints: WebhookEndpointService;
      stream: EventStream;
      logger: Logger;
      config: Pick<Config, 'webhooks'>;
      timeline: Timeline;
      /** How a delivery's POST is carried: on its own thread in the served sandbox (HttpExchangeThread). */
      exchange?: HttpExchange;
    },
  ) {
    this.repo = new WebhookDeliveryRepository(deps.store.kind === 'postgres');
    deps.scheduler.onTick(() => this.fanOut());
    deps.scheduler.register('webhook.deliver', (p: { delivery_id: string }, job) => this.deliverScheduled(p.delivery_id, job.partition));
  }

  /** Whether committed events wait to be fanned out: one indexed read. */
  hasUndispatched(): Promise<boolean> {
    return this.repo.anyUndispatched(this.deps.store);
  }

  /** Committed events not yet dispatched: one delivery per matching endpoint, then published live. */
  async fanOut(): Promise<void> {
    const { store, clock, ids, scheduler } = this.deps;
    for (;;) {
      // A cheap look first: most ticks find nothing.
      if (!(await this.repo.anyUndispatched(store))) return;
      // Read again, locked, and mark in one transaction: an instance fanning out at the same moment
      // waits for the rows this one locked and finds them gone, so each event fans out once. Read
      // committed is enough: nothing read is checked against anything else.
      const events = await store.transaction(
        async (tx) => {
          const events = await this.repo.undispatchedEvents(tx);
          if (events.length === 0) return events;
          const now = clock.now();
          // One look per merchant and environment in the chunk, not one per event.
          const endpointsOf = new Map<string, EndpointRow[]>();
          for (const event of events) {
            const owner = `${event.environment}:${event.merchant_id}`;
            let endpoints = endpointsOf.get(owner);
            if (!endpoints) {
              endpoints = await this.endpointRepo.listEnabled(tx, event.environment, event.merchant_id);
              endpointsOf.set(owner, endpoints);
            }
            for (const endpoint of endpoints) {
              const types = endpoint.event_types ? (JSON.parse(endpoint.event_types) as string[]) : null;
              if (types && !types.includes(event.type)) continue;
              const id = ids.next('wd');
              await this.repo.insertPending(tx, { id, environment: event.environment, merchantId: event.merchant_id, eventId: event.id, eventType: event.type, endpointId: endpoint.id, now });
              await scheduler.schedule(tx, { kind: 'webhook.deliver', runAt: now, payload: { delivery_id: id }, partition: deliveryPartition(endpoint.id, event.object_id), lane: 'outbound' });
            }
          }
          await this.repo.markDispatched(
            tx,
            events.map((e) => e.seq),
          );
          return events;
        },
        { isolation: 'read committed' },
      );
      // Where instances share the database the stream follows the outbox instead (followOutbox).
      if (!this.following && this.deps.stream.listening()) {
        for (const event of events) {
          this.deps.stream.publish({ environment: event.environment, merchantId: event.merchant_id, event: JSON.parse(event.payload) as RailyardEvent });
        }
      }
    }
  }

  /**
   * Feeds the live event stream from the outbox itself, so a listener on this instance sees the
   * events every instance sharing the database writes (instead of those this one fans out). Every
   * `intervalMs` it reads the events after the last it saw; while nobody listens it only notes
   * where the outbox ends. A transaction that commits after a later-numbered one is still caught:
   * each look goes back LOOKBACK events and skips the ids already published.
   */
  async followOutbox(intervalMs = 200): Promise<void> {
    if (this.following) return;
    const LOOKBACK = 100;
    const CHUNK = 500;
    /** Ids published, by seq, within the look-back window. */
    const published = new Map<string, number>();
    /** The newest seq seen, and where the outbox ended when the current listeners began: history. */
    // What is in the outbox now is history: a listener sees what is written from here on.
    let last = await this.repo.lastEventSeq(this.deps.store);
    let floor = last;
    const look = async () => {
      const { store, stream } = this.deps;
      if (!stream.listening()) {
        last = floor = await this.repo.lastEventSeq(store);
        published.clear();
        return;
      }
      for (;;) {
        const events = await this.repo.eventsAfter(store, Math.max(floor, last - LOOKBACK), CHUNK);
        for (const event of events) {
          if (published.has(event.id)) continue;
          published.set(event.id, event.seq);
          stream.publish({ environment: event.environment, merchantId: event.merchant_id, event: JSON.parse(event.payload) as RailyardEvent });
        }
        last = Math.max(last, events.at(-1)?.seq ?? 0);
        for (const [id, seq] of published) if (seq <= last - LOOKBACK) published.delete(id);
        if (events.length < CHUNK) return;
      }
    };
    let busy = false;
    this.following = setInterval(() => {
      if (busy) return;
      busy = true;
      look()
        .catch((err) => this.deps.logger.error('event stream follow failed', { error: String(err) }))
        .finally(() => (busy = false));
    }, intervalMs);
    this.following.unref();
  }

  stopFollowing(): void {
    if (this.following) clearInterval(this.following);
  }

  /** One automatic attempt; a retry stays in the job's partition, behind the object's later events. */
  private async deliverScheduled(deliveryId: string, partition: string | null): Promise<void> {
    const { store, clock, scheduler, config } = this.deps;
    // The delivery, its event and its endpoint in one read.
    const found = await this.repo.findForAttempt(store, deliveryId);
    if (found?.delivery.status !== 'pending') return; // delivered meanwhile, e.g. by a redelivery
    const { delivery, eventPayload: payload, endpoint } = found;
    if (!endpoint || endpoint.deleted_at !== null || endpoint.enabled !== 1) {
      // The merchant removed or disabled the endpoint: its pending retries stop, quietly.
      await this.repo.stop(store, deliveryId, clock.now());
      return;
    }
    const attempt = await this.attempt(delivery, 'automatic', { endpoint, event: payload === null ? undefined : { payload } });
    // The attempt's log line and the delivery's new state commit together: the job's last write,
    // so the deliveries after it in the round queue theirs into the same commit.
    await finalWrites(() =>
      store.transaction(async (tx) => {
        await this.logAttempt(tx, attempt);
        const now = clock.now();
        const attempts = delivery.attempts + 1;
        if (attempt.ok) {
          await this.repo.markDelivered(tx, deliveryId, attempts, now);
          await this.endpointRepo.clearFailing(tx, delivery.endpoint_id);
          return;
        }
        const delay = config.webhooks.retry_schedule_seconds[attempts - 1];
        if (delay === undefined) {
          await this.repo.markFailed(tx, deliveryId, attempts, now);
          await this.endpointRepo.markFailing(tx, delivery.endpoint_id, now);
          this.deps.logger.warn('webhook delivery failed for good', { delivery: deliveryId, endpoint: delivery.endpoint_id, attempts });
          return;
        }
        const next = now + delay * 1000;
        await this.repo.scheduleRetry(tx, deliveryId, attempts, next, now);
        await scheduler.schedule(tx, { kind: 'webhook.deliver', runAt: next, payload: { delivery_id: deliveryId }, lane: 'outbound', ...(partition !== null ? { partition } : {}) });
      }),
    );
  }

  /** One POST to the endpoint, whatever happens; the caller logs it. ok on a 2xx. */
  private async attempt(delivery: DeliveryRow, trigger: 'automatic' | 'redelivery', known?: { endpoint: EndpointRow; event: { payload: string } | undefined }): Promise<AttemptRecord> {
    const { store, clock } = this.deps;
    const endpoint = known ? known.endpoint : await this.deps.endpoints.row(store, delivery.endpoint_id);
    const event = known ? known.event : await this.repo.eventPayload(store, delivery.event_id);
    let status: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    const started = performance.now();
    if (!endpoint || endpoint.deleted_at !== null || !event) {
      error = 'endpoint deleted';
    } else {
      const body = event.payload;
      const { timeout_ms } = this.deps.config.webhooks;
      try {
        // Redirects are not followed: a 3xx is the endpoint's answer, and a failed attempt.
        const res = await (this.deps.exchange ?? httpExchange)(endpoint.url, {
          method: 'POST',
          headers: webhookHeaders(this.deps.endpoints.secrets(endpoint), delivery.event_id, Math.floor(this.deps.wallClock.now() / 1000), body),
          body,
          timeoutMs: timeout_ms,
        });
        status = res.status;
        excerpt = res.text.slice(0, EXCERPT_CHARS);
      } catch (err) {
        error = err instanceof HttpTimeoutError ? `timed out after ${timeout_ms} ms` : `connection failed${err instanceof HttpConnectionError && err.code ? ` (${err.code})` : ''}`;
      }
    }
    this.deps.timeline.record('railyard', 'merchant', `webhook ${delivery.event_type} ${delivery.event_id}${trigger === 'redelivery' ? ' (redelivery)' : ''}: ${status ?? error}`);
    return {
      deliveryId: delivery.id,
      trigger,
      at: clock.now(),
      url: endpoint?.url ?? '',
      status,
      latencyMs: Math.round(performance.now() - started),
      excerpt,
      error,
      ok: status !== null && status >= 200 && status < 300,
    };
  }

  private logAttempt(tx: Db, a: AttemptRecord): Promise<void> {
    return this.repo.logAttempt(tx, a);
  }

  /** Sends a delivery again now, whatever its state; logged as a redelivery. */
  async redeliver(auth: AuthContext, deliveryId: string): Promise<Delivery> {
    const delivery = await this.owned(auth, deliveryId);
    const attempt = await this.attempt(delivery, 'redelivery');
    await this.deps.store.transaction(async (tx) => {
      await this.logAttempt(tx, attempt);
      if (!attempt.ok) return;
      const now = this.deps.clock.now();
      await this.repo.markRedelivered(tx, deliveryId, now);
      await this.endpointRepo.clearFailing(tx, delivery.endpoint_id);
    });
    return this.present(this.deps.store, (await this.deliveryRow(this.deps.store, deliveryId))!);
  }

  /**
   * Redelivers, once each and oldest first, the endpoint's deliveries that did not get through:
   * failed ones, and pending ones whose last attempt failed. created_at within [from, to].
   */
  async replayFailed(auth: AuthContext, endpointId: string, range: { from?: number; to?: number }): Promise<{ endpoint_id: string; redelivered: number; deliveries: string[]; more: boolean }> {
    await this.deps.endpoints.get(auth, endpointId);
    const rows = await this.repo.listUndelivered(this.deps.store, { environment: auth.environment, merchantId: auth.merchantId, endpointId, from: range.from, to: range.to }, MAX_REPLAY + 1);
    const batch = rows.slice(0, MAX_REPLAY);
    for (const row of batch) await this.redeliver(auth, row.id);
    return { endpoint_id: endpointId, redelivered: batch.length, deliveries: batch.map((r) => r.id), more: rows.length > MAX_REPLAY };
  }

  async present(db: Db, row: DeliveryRow): Promise<Delivery> {
    const attempts = await this.repo.attempts(db, row.id);
    return {
      id: row.id,
      object: 'webhook_delivery',
      event_id: row.event_id,
      event_type: row.event_type,
      endpoint_id: row.endpoint_id,
      status: row.status,
      attempts: attempts.length,
      next_attempt_at: row.next_attempt_at === null ? null : iso(row.next_attempt_at),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
      attempt_log: attempts.map((a) => ({ ...a, at: iso(a.at) })),
    };
  }

  private deliveryRow(db: Db, id: string): Promise<DeliveryRow | undefined> {
    return this.repo.find(db, id);
  }

  private async owned(auth: AuthContext, id: string): Promise<DeliveryRow> {
    const row = await this.repo.findOwned(this.deps.store, id, auth.environment, auth.merchantId);
    if (!row) throw new NotFoundError(`No webhook delivery ${id}`, { id });
    return row;
  }

  async get(auth: AuthContext, id: string): Promise<Delivery> {
    return this.present(this.deps.store, await this.owned(auth, id));
  }

  async list(auth: AuthContext, query: { cursor?: string; page_size?: number; event_id?: string; endpoint_id?: string; status?: Delivery['status'] }) {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = await this.repo.list(
      this.deps.store,
      { environment: auth.environment, merchantId: auth.merchantId, before, eventId: query.event_id, endpointId: query.endpoint_id, status: query.status },
      pageSize + 1,
    );
    const { items, nextCursor } = page(rows, pageSize);
    return { items: await Promise.all(items.map((r) => this.present(this.deps.store, r))), nextCursor };
  }

  /** GET /api/v1/events: the outbox, newest first. */
  async listEvents(auth: AuthContext, query: { cursor?: string; page_size?: number; type?: string }) {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = await this.repo.listEvents(this.deps.store, { environment: auth.environment, merchantId: auth.merchantId, before, type: query.type }, pageSize + 1);
    const { items, nextCursor } = page(rows, pageSize);
    return { items: items.map((r) => JSON.parse(r.payload) as RailyardEvent), nextCursor };
  }

  async getEvent(auth: AuthContext, id: string): Promise<RailyardEvent> {
    const row = await this.repo.ownedEventPayload(this.deps.store, id, auth.environment, auth.merchantId);
    if (!row) throw new NotFoundError(`No event ${id}`, { id });
    return JSON.parse(row.payload) as RailyardEvent;
  }
}
