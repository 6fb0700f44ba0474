import type { Db, SqlValue } from '../db.ts';

const EVENT_COLUMNS = 'outbox_events (id, environment, merchant_id, type, object_type, object_id, payload, created_at)';
const INSERT_EVENT = `INSERT INTO ${EVENT_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;

/** An event's row as written. */
export interface OutboxEventRow {
  id: string;
  environment: string;
  merchantId: string;
  type: string;
  objectType: string;
  objectId: string;
  payload: string;
  createdAt: number;
}

function eventParams(row: OutboxEventRow): SqlValue[] {
  return [row.id, row.environment, row.merchantId, row.type, row.objectType, row.objectId, row.payload, row.createdAt];
}

/**
 * PostgreSQL: the event written, and queued for the fan-out, once for each row of `source` (an
 * earlier item of the same WITH), as two items of a data-modifying WITH (`event`, `queued`).
 */
export function queuedEventFor(source: string, row: OutboxEventRow): { sql: string; params: SqlValue[] } {
  return {
    sql: `event AS (INSERT INTO ${EVENT_COLUMNS} SELECT ?, ?, ?, ?, ?, ?, ?, CAST(? AS BIGINT) FROM ${source} RETURNING seq),
         queued AS (INSERT INTO outbox_pending (seq) SELECT seq FROM event)`,
    params: eventParams(row),
  };
}

/** The transactional outbox's events: each written with the state change it describes. */
export class EventOutboxRepository {
  /** `postgres`: the event and its place in the fan-out queue go in one statement (SQLite has no INSERT in a WITH). */
  constructor(private readonly postgres = false) {}

  /** Writes the event, and queues it for the fan-out into webhook deliveries (outbox_pending). */
  async insert(db: Db, row: OutboxEventRow): Promise<void> {
    const params = eventParams(row);
    if (this.postgres) {
      await db.run(`WITH event AS (${INSERT_EVENT} RETURNING seq) INSERT INTO outbox_pending (seq) SELECT seq FROM event`, params);
      return;
    }
    // Issued together: the second runs after the first, in the same transaction.
    await Promise.all([db.run(INSERT_EVENT, params), db.run('INSERT INTO outbox_pending (seq) SELECT seq FROM outbox_events WHERE id = ?', [row.id])]);
  }

  /** The payloads of one object's events, oldest first. */
  async payloadsForObject(db: Db, objectId: string): Promise<string[]> {
    const rows = await db.all<{ payload: string }>('SELECT payload FROM outbox_events WHERE object_id = ? ORDER BY seq', [objectId]);
    return rows.map((r) => r.payload);
  }
}
