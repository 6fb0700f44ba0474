import type { Db } from '../db.ts';

const INSERT_EVENT = 'INSERT INTO outbox_events (id, environment, merchant_id, type, object_type, object_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';

/** The transactional outbox's events: each written with the state change it describes. */
export class EventOutboxRepository {
  /** `postgres`: the event and its place in the fan-out queue go in one statement (SQLite has no INSERT in a WITH). */
  constructor(private readonly postgres = false) {}

  /** Writes the event, and queues it for the fan-out into webhook deliveries (outbox_pending). */
  async insert(db: Db, row: { id: string; environment: string; merchantId: string; type: string; objectType: string; objectId: string; payload: string; createdAt: number }): Promise<void> {
    const params = [row.id, row.environment, row.merchantId, row.type, row.objectType, row.objectId, row.payload, row.createdAt];
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
