import type { Db } from '../db.ts';
import { queuedEventFor, type OutboxEventRow } from './event-outbox-repository.ts';
import { completionIf, type IdempotencyCompletion } from './idempotency-repository.ts';

/** The columns every record a provider settles has (charges, transfers, collections, payouts, bills). */
export interface RailRecordColumns {
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  status: string;
  amount: number;
  fees: number;
  provider: string | null;
  provider_reference: string | null;
}

/** The tables whose rows the settlement machine drives. */
export type RailRecordTable = 'charges' | 'transfers' | 'collections' | 'payouts' | 'bills';

/**
 * The SQL the settlement machine runs on a record of any kind a provider settles: one table per
 * kind, the same statements on each. Feature repositories extend it with their inserts.
 */
export class RailRecordRepository<Row extends RailRecordColumns = RailRecordColumns> {
  constructor(readonly table: RailRecordTable) {}

  find(db: Db, id: string): Promise<Row | undefined> {
    return db.get<Row>(`SELECT * FROM ${this.table} WHERE id = ?`, [id]);
  }

  /** The record if it is this merchant's, in this environment. */
  findOwned(db: Db, scope: { environment: string; merchantId: string }, id: string): Promise<Row | undefined> {
    return db.get<Row>(`SELECT * FROM ${this.table} WHERE id = ? AND environment = ? AND merchant_id = ?`, [id, scope.environment, scope.merchantId]);
  }

  /**
   * A merchant's records of this kind, newest first by their place in the transactions list,
   * LIMIT `limit` (a page + 1, for keysetPage), below `before`, optionally of one status.
   */
  listByTransaction(db: Db, query: { environment: string; merchantId: string; objectType: string; before?: number; status?: string; limit: number }): Promise<(Row & { seq: number })[]> {
    const where = ['t.environment = ?', 't.merchant_id = ?', 't.object_type = ?'];
    const params: (string | number)[] = [query.environment, query.merchantId, query.objectType];
    if (query.before !== undefined) where.push('t.seq < ?'), params.push(query.before);
    if (query.status !== undefined) where.push('r.status = ?'), params.push(query.status);
    return db.all<Row & { seq: number }>(
      `SELECT t.seq, r.* FROM transactions t JOIN ${this.table} r ON r.id = t.object_id
        WHERE ${where.join(' AND ')} ORDER BY t.seq DESC LIMIT ?`,
      [...params, query.limit],
    );
  }

  /** The provider that accepted the record and its reference there; the row as updated (RETURNING, so no read follows). */
  recordAcceptance(db: Db, id: string, provider: string, providerReference: string, now: number): Promise<Row | undefined> {
    return db.get<Row>(`UPDATE ${this.table} SET provider = ?, provider_reference = ?, updated_at = ? WHERE id = ? RETURNING *`, [provider, providerReference, now, id]);
  }

  /**
   * PostgreSQL only (SQLite has no data-modifying WITH): the provider's acceptance, the record's
   * pending event (queued for the fan-out) and the answer stored under its Idempotency-Key, in one
   * statement, if the record still stands as it was created (`status`, no provider, not updated
   * since `createdAt`); else nothing is written, and it answers false.
   */
  async recordAcceptanceAnswered(
    db: Db,
    acceptance: { id: string; provider: string; providerReference: string; now: number; status: string; createdAt: number },
    event: OutboxEventRow,
    answer: IdempotencyCompletion,
  ): Promise<boolean> {
    const queued = queuedEventFor('accepted', event);
    const answered = completionIf('accepted', answer);
    const row = await db.get<{ accepted: number }>(
      `WITH accepted AS (UPDATE ${this.table} SET provider = ?, provider_reference = ?, updated_at = ?
                          WHERE id = ? AND status = ? AND provider IS NULL AND updated_at = ? RETURNING id),
            ${queued.sql},
            ${answered.sql}
       SELECT COUNT(*) AS accepted FROM accepted`,
      [acceptance.provider, acceptance.providerReference, acceptance.now, acceptance.id, acceptance.status, acceptance.createdAt, ...queued.params, ...answered.params],
    );
    return Number(row?.accepted ?? 0) === 1;
  }

  async markSettled(db: Db, id: string, status: string, provider: string, now: number): Promise<void> {
    await db.run(`UPDATE ${this.table} SET status = ?, provider = ?, updated_at = ? WHERE id = ?`, [status, provider, now, id]);
  }

  async setProvider(db: Db, id: string, provider: string): Promise<void> {
    await db.run(`UPDATE ${this.table} SET provider = ? WHERE id = ?`, [provider, id]);
  }

  /** pending -> failed; false when the record was no longer pending. */
  async markFailed(db: Db, id: string, pendingStatus: string, reason: string, providerReason: string | null, now: number): Promise<boolean> {
    const changed = await db.run(`UPDATE ${this.table} SET status = 'failed', failure_reason = ?, provider_reason = ?, updated_at = ? WHERE id = ? AND status = ?`, [
      reason,
      providerReason,
      now,
      id,
      pendingStatus,
    ]);
    return changed.changes > 0;
  }
}
