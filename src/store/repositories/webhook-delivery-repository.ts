import type { Db } from '../db.ts';
import type { WebhookEndpointRow } from './webhook-endpoint-repository.ts';

/** The webhook_endpoints columns an attempt reads, renamed apart from the delivery's own in a join. */
const ENDPOINT_COLUMNS = [
  'id',
  'environment',
  'merchant_id',
  'url',
  'event_types',
  'enabled',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'failing',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof WebhookEndpointRow)[];

/** The webhook_deliveries columns an attempt reads. */
const DELIVERY_COLUMNS = [
  'seq',
  'id',
  'environment',
  'merchant_id',
  'event_id',
  'event_type',
  'endpoint_id',
  'status',
  'attempts',
  'next_attempt_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof WebhookDeliveryRow)[];

/** Built once: a statement's text is its cache key in the store, hashed on every call. */
const FIND_FOR_ATTEMPT = `SELECT ${DELIVERY_COLUMNS.map((c) => `d.${c}`).join(', ')},
        e.payload AS event_payload, ${ENDPOINT_COLUMNS.map((c) => `w.${c} AS ep_${c}`).join(', ')}
   FROM webhook_deliveries d LEFT JOIN outbox_events e ON e.id = d.event_id LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.id = ?`;

/** A webhook_deliveries row as stored. */
export interface WebhookDeliveryRow {
  seq: number;
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

/** An outbox_events row as the dispatcher reads it. */
export interface OutboxEventRow {
  seq: number;
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  /** The object the event is about (a charge, a transfer, a trade). */
  object_id: string;
  type: string;
  payload: string;
}

/** A webhook_attempts row as logged. */
export interface WebhookAttemptRow {
  attempt: number;
  trigger: 'automatic' | 'redelivery';
  at: number;
  url: string;
  http_status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

/** Events fanned out in one transaction, at most. */
const FAN_OUT_CHUNK = 100;

/**
 * Webhook deliveries and their attempt log, and the outbox as the dispatcher reads it (events not
 * yet dispatched, the merchant's event list): the SQL of the events-and-deliveries aggregate.
 */
export class WebhookDeliveryRepository {
  /** `rowLocks` (PostgreSQL): the fan-out locks the queue's head it takes (SQLite has one writer, and no FOR UPDATE). */
  constructor(private readonly rowLocks = false) {}

  /** Whether any event waits to be fanned out: the queue's head, one index entry. */
  async anyUndispatched(db: Db): Promise<boolean> {
    return (await db.get('SELECT seq FROM outbox_pending ORDER BY seq LIMIT 1')) !== undefined;
  }

  /**
   * The oldest events not yet fanned out into deliveries, FAN_OUT_CHUNK at most: the head of the
   * outbox_pending queue, locked until the transaction ends (so another instance's fan-out waits
   * for those rows, then finds them gone), then each event by key. Two statements rather than a
   * join: PostgreSQL planned the join once for every length of the queue, and hash-joined the
   * whole outbox.
   */
  async undispatchedEvents(db: Db): Promise<OutboxEventRow[]> {
    const head = await db.all<{ seq: number }>(`SELECT seq FROM outbox_pending ORDER BY seq LIMIT ${FAN_OUT_CHUNK}${this.rowLocks ? ' FOR UPDATE' : ''}`);
    if (head.length === 0) return [];
    return db.all<OutboxEventRow>(
      `SELECT seq, id, environment, merchant_id, object_id, type, payload FROM outbox_events WHERE seq IN (${head.map(() => '?').join(', ')}) ORDER BY seq`,
      head.map((h) => h.seq),
    );
  }

  /** Committed events after `seq`, in seq order (the event stream follows the outbox with it). */
  eventsAfter(db: Db, seq: number, limit: number): Promise<OutboxEventRow[]> {
    return db.all<OutboxEventRow>('SELECT seq, id, environment, merchant_id, object_id, type, payload FROM outbox_events WHERE seq > ? ORDER BY seq LIMIT ?', [seq, limit]);
  }

  /** The seq of the latest event written, 0 on an empty outbox. */
  async lastEventSeq(db: Db): Promise<number> {
    return (await db.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM outbox_events'))?.seq ?? 0;
  }

  /**
   * The events fanned out leave the queue: one statement for a chunk. By their seqs, not by a
   * range: an event of a lower seq committed since the chunk was read is still to fan out.
   */
  async markDispatched(db: Db, seqs: readonly number[]): Promise<void> {
    await db.run(`DELETE FROM outbox_pending WHERE seq IN (${seqs.map(() => '?').join(', ')})`, [...seqs]);
  }

  eventPayload(db: Db, eventId: string): Promise<{ payload: string } | undefined> {
    return db.get<{ payload: string }>('SELECT payload FROM outbox_events WHERE id = ?', [eventId]);
  }

  ownedEventPayload(db: Db, eventId: string, environment: string, merchantId: string): Promise<{ payload: string } | undefined> {
    return db.get<{ payload: string }>('SELECT payload FROM outbox_events WHERE id = ? AND environment = ? AND merchant_id = ?', [eventId, environment, merchantId]);
  }

  /** The merchant's events, newest first, below the cursor's seq; `limit` rows at most. */
  listEvents(db: Db, filter: { environment: string; merchantId: string; before?: number; type?: string }, limit: number): Promise<OutboxEventRow[]> {
    const where = ['environment = ?', 'merchant_id = ?'];
    const params: (string | number)[] = [filter.environment, filter.merchantId];
    if (filter.before !== undefined) where.push('seq < ?'), params.push(filter.before);
    if (filter.type !== undefined) where.push('type = ?'), params.push(filter.type);
    return db.all<OutboxEventRow>(`SELECT seq, id, environment, merchant_id, object_id, type, payload FROM outbox_events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
  }

  /** A pending delivery due now; nothing if the event already has one for the endpoint. */
  async insertPending(db: Db, row: { id: string; environment: string; merchantId: string; eventId: string; eventType: string; endpointId: string; now: number }): Promise<void> {
    await db.run(
      `INSERT INTO webhook_deliveries (id, environment, merchant_id, event_id, event_type, endpoint_id, status, next_attempt_at, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
      [row.id, row.environment, row.merchantId, row.eventId, row.eventType, row.endpointId, row.now, row.now, row.now],
    );
  }

  /**
   * What an automatic attempt needs, in one read: the delivery, its event's payload (null when the
   * event is gone) and its endpoint (undefined when the row is gone).
   */
  async findForAttempt(db: Db, id: string): Promise<{ delivery: WebhookDeliveryRow; eventPayload: string | null; endpoint: WebhookEndpointRow | undefined } | undefined> {
    const row = await db.get<Record<string, unknown>>(FIND_FOR_ATTEMPT, [id]);
    if (!row) return undefined;
    const delivery: Record<string, unknown> = {};
    for (const column of DELIVERY_COLUMNS) delivery[column] = row[column];
    let endpoint: Record<string, unknown> | undefined;
    if (row.ep_id !== null && row.ep_id !== undefined) {
      endpoint = {};
      for (const column of ENDPOINT_COLUMNS) endpoint[column] = row[`ep_${column}`];
    }
    return {
      delivery: delivery as unknown as WebhookDeliveryRow,
      eventPayload: (row.event_payload ?? null) as string | null,
      endpoint: endpoint as unknown as WebhookEndpointRow | undefined,
    };
  }

  find(db: Db, id: string): Promise<WebhookDeliveryRow | undefined> {
    return db.get<WebhookDeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?', [id]);
  }

  findOwned(db: Db, id: string, environment: string, merchantId: string): Promise<WebhookDeliveryRow | undefined> {
    return db.get<WebhookDeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ? AND environment = ? AND merchant_id = ?', [id, environment, merchantId]);
  }

  /** Its endpoint was removed or disabled: the delivery stops without another attempt. */
  async stop(db: Db, id: string, now: number): Promise<void> {
    await db.run("UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = ? WHERE id = ?", [now, id]);
  }

  async markDelivered(db: Db, id: string, attempts: number, now: number): Promise<void> {
    await db.run("UPDATE webhook_deliveries SET status = 'delivered', attempts = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?", [attempts, now, id]);
  }

  /** A redelivery got through; the automatic attempt count is left as it is. */
  async markRedelivered(db: Db, id: string, now: number): Promise<void> {
    await db.run("UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL, updated_at = ? WHERE id = ?", [now, id]);
  }

  async markFailed(db: Db, id: string, attempts: number, now: number): Promise<void> {
    await db.run("UPDATE webhook_deliveries SET status = 'failed', attempts = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?", [attempts, now, id]);
  }

  async scheduleRetry(db: Db, id: string, attempts: number, nextAttemptAt: number, now: number): Promise<void> {
    await db.run('UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?', [attempts, nextAttemptAt, now, id]);
  }

  /** The endpoint's deliveries that did not get through, oldest first, created within the range. */
  listUndelivered(db: Db, filter: { environment: string; merchantId: string; endpointId: string; from?: number; to?: number }, limit: number): Promise<WebhookDeliveryRow[]> {
    const where = ['environment = ?', 'merchant_id = ?', 'endpoint_id = ?', "(status = 'failed' OR (status = 'pending' AND attempts > 0))"];
    const params: (string | number)[] = [filter.environment, filter.merchantId, filter.endpointId];
    if (filter.from !== undefined) where.push('created_at >= ?'), params.push(filter.from);
    if (filter.to !== undefined) where.push('created_at <= ?'), params.push(filter.to);
    return db.all<WebhookDeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`, [...params, limit]);
  }

  /** The merchant's deliveries, newest first, below the cursor's seq; `limit` rows at most. */
  list(db: Db, filter: { environment: string; merchantId: string; before?: number; eventId?: string; endpointId?: string; status?: string }, limit: number): Promise<WebhookDeliveryRow[]> {
    const where = ['environment = ?', 'merchant_id = ?'];
    const params: (string | number)[] = [filter.environment, filter.merchantId];
    if (filter.before !== undefined) where.push('seq < ?'), params.push(filter.before);
    if (filter.eventId) where.push('event_id = ?'), params.push(filter.eventId);
    if (filter.endpointId) where.push('endpoint_id = ?'), params.push(filter.endpointId);
    if (filter.status) where.push('status = ?'), params.push(filter.status);
    return db.all<WebhookDeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
  }

  /** Numbered in the same transaction that writes it: attempts of one delivery never share a number. */
  async logAttempt(db: Db, a: { deliveryId: string; trigger: string; at: number; url: string; status: number | null; latencyMs: number; excerpt: string | null; error: string | null }): Promise<void> {
    // The attempt's number is counted in the same statement: one round trip per attempt.
    await db.run(
      'INSERT INTO webhook_attempts (delivery_id, attempt, trigger, at, url, http_status, latency_ms, response_excerpt, error) VALUES (?, (SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id = ?) + 1, ?, ?, ?, ?, ?, ?, ?)',
      [a.deliveryId, a.deliveryId, a.trigger, a.at, a.url, a.status, a.latencyMs, a.excerpt, a.error],
    );
  }

  attempts(db: Db, deliveryId: string): Promise<WebhookAttemptRow[]> {
    return db.all<WebhookAttemptRow>('SELECT attempt, trigger, at, url, http_status, latency_ms, response_excerpt, error FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq', [deliveryId]);
  }
}
