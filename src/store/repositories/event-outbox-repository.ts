import type { Db } from '../db.ts';

/** The transactional outbox's events: each written with the state change it describes. */
export class EventOutboxRepository {
  async insert(db: Db, row: { id: string; environment: string; merchantId: string; type: string; objectType: string; objectId: string; payload: string; createdAt: number }): Promise<void> {
    await db.run('INSERT INTO outbox_events (id, environment, merchant_id, type, object_type, object_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      row.id,
      row.environment,
      row.merchantId,
      row.type,
      row.objectType,
      row.objectId,
      row.payload,
      row.createdAt,
    ]);
  }

  /** The payloads of one object's events, oldest first. */
  async payloadsForObject(db: Db, objectId: string): Promise<string[]> {
    const rows = await db.all<{ payload: string }>('SELECT payload FROM outbox_events WHERE object_id = ? ORDER BY seq', [objectId]);
    return rows.map((r) => r.payload);
  }
}
