import type { Db, SqlValue } from '../db.ts';

/** An idempotency_keys row as the service reads it. */
export interface IdempotencyKeyRow {
  request_hash: string;
  state: string;
  boot: number | null;
  resource_id: string | null;
  response_status: number | null;
  response_body: string | null;
  expires_at: number;
}

/** One key's scope: merchant, environment and the Idempotency-Key itself. */
export interface IdempotencyKeyId {
  environment: string;
  merchantId: string;
  key: string;
}

/** A key's stored answer, and the key. */
export interface IdempotencyCompletion {
  id: IdempotencyKeyId;
  status: number;
  body: string;
}

const COMPLETE = "state = 'done', response_status = ?, response_body = ? WHERE environment = ? AND merchant_id = ? AND idempotency_key = ?";

/**
 * PostgreSQL: the key completed with its answer if `source` (an earlier item of the same WITH)
 * has a row, as an item of a data-modifying WITH (`answered`).
 */
export function completionIf(source: string, completion: IdempotencyCompletion): { sql: string; params: SqlValue[] } {
  const { id, status, body } = completion;
  return { sql: `answered AS (UPDATE idempotency_keys SET ${COMPLETE} AND EXISTS (SELECT 1 FROM ${source}))`, params: [status, body, id.environment, id.merchantId, id.key] };
}

/** Idempotency-Keys per merchant and environment: the SQL of the idempotency aggregate. */
export class IdempotencyRepository {
  async find(db: Db, id: IdempotencyKeyId): Promise<IdempotencyKeyRow | undefined> {
    return db.get<IdempotencyKeyRow>(
      'SELECT request_hash, state, boot, resource_id, response_status, response_body, expires_at FROM idempotency_keys WHERE environment = ? AND merchant_id = ? AND idempotency_key = ?',
      [id.environment, id.merchantId, id.key],
    );
  }

  /**
   * Claims the key in flight, in one statement: inserted when no row holds it, or written over a
   * row whose retention ended by `now` (as deleting the expired row, then inserting, would); false
   * when a live row holds it.
   */
  async claimInFlight(db: Db, id: IdempotencyKeyId, row: { requestHash: string; resourceId: string; boot: number; createdAt: number; expiresAt: number }, now: number): Promise<boolean> {
    const claimed = await db.run(
      `INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, boot, created_at, expires_at)
       VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?, ?)
       ON CONFLICT (environment, merchant_id, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash, state = 'in_flight',
         resource_id = excluded.resource_id, boot = excluded.boot, created_at = excluded.created_at, expires_at = excluded.expires_at,
         response_status = NULL, response_body = NULL
       WHERE idempotency_keys.expires_at <= ?`,
      [id.environment, id.merchantId, id.key, row.requestHash, row.resourceId, row.boot, row.createdAt, row.expiresAt, now],
    );
    return claimed.changes > 0;
  }

  /** Claims a key no row holds, in flight: an append, which fails the transaction (a duplicate key) if a row holds it after all. */
  async appendInFlight(db: Db, id: IdempotencyKeyId, row: { requestHash: string; resourceId: string; boot: number; createdAt: number; expiresAt: number }): Promise<void> {
    await db.run(
      `INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, boot, created_at, expires_at)
       VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?, ?)`,
      [id.environment, id.merchantId, id.key, row.requestHash, row.resourceId, row.boot, row.createdAt, row.expiresAt],
    );
  }

  async complete(db: Db, id: IdempotencyKeyId, status: number, body: string): Promise<void> {
    await db.run(`UPDATE idempotency_keys SET ${COMPLETE}`, [status, body, id.environment, id.merchantId, id.key]);
  }

  async completeForResource(db: Db, resourceId: string, status: number, body: string): Promise<void> {
    await db.run(`UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE resource_id = ? AND state = 'in_flight'`, [status, body, resourceId]);
  }

  /** The boot that claimed the key still in flight for a resource, if any. */
  async inFlightForResource(db: Db, resourceId: string): Promise<{ boot: number | null } | undefined> {
    return db.get<{ boot: number | null }>("SELECT boot FROM idempotency_keys WHERE resource_id = ? AND state = 'in_flight'", [resourceId]);
  }

  /**
   * Takes over the key a stopped boot left in flight for a resource: only if that boot still holds
   * it, so of several processes recovering it at once exactly one wins. Whether this one did.
   */
  async adopt(db: Db, resourceId: string, from: number | null, to: number | null): Promise<boolean> {
    const r = await db.run(
      `UPDATE idempotency_keys SET boot = ? WHERE resource_id = ? AND state = 'in_flight' AND ${from === null ? 'boot IS NULL' : 'boot = ?'}`,
      from === null ? [to, resourceId] : [to, resourceId, from],
    );
    return r.changes === 1;
  }

  /** Resources whose keys a boot not in `keep` (this one and the live ones) left in flight, oldest first. */
  async orphanedResources(db: Db, keep: readonly number[]): Promise<string[]> {
    const rows = await db.all<{ resource_id: string }>(
      `SELECT resource_id FROM idempotency_keys WHERE state = 'in_flight' AND resource_id IS NOT NULL AND (boot IS NULL OR boot NOT IN (${keep.map(() => '?').join(', ')})) ORDER BY created_at`,
      [...keep],
    );
    return rows.map((r) => r.resource_id);
  }
}
