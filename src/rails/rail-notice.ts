import type { Db } from '../store/db.ts';
import type { SettlementSource } from './settlement-target.ts';

/** A provider's word on a record, as it arrived: by callback or by our status poll. */
export interface RailNotice {
  environment: string;
  objectType: string;
  objectId: string;
  provider: string;
  source: SettlementSource;
  status: 'success' | 'failed' | 'pending';
  reason: string | null;
  /** What it did: settled, ignored, reversed (a late success), or pending (nothing yet). */
  result: string;
  at: number;
}

/**
 * Keeps one callback or poll for the object's timeline. Called in the transaction that handles
 * it, so the record and what it changed commit together.
 */
export async function recordRailNotice(db: Db, notice: RailNotice): Promise<void> {
  await db.run(
    'INSERT INTO rail_notices (environment, object_type, object_id, provider, source, status, reason, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [notice.environment, notice.objectType, notice.objectId, notice.provider, notice.source, notice.status, notice.reason, notice.result, notice.at],
  );
}
