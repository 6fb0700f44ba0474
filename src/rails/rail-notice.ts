import type { Db } from '../store/db.ts';
import { RailRepository } from '../store/repositories/rail-repository.ts';
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

const rails = new RailRepository();

/**
 * Keeps one callback or poll for the object's timeline. Called in the transaction that handles
 * it, so the record and what it changed commit together.
 */
export async function recordRailNotice(db: Db, notice: RailNotice): Promise<void> {
  await rails.insertNotice(db, {
    environment: notice.environment,
    objectType: notice.objectType,
    objectId: notice.objectId,
    provider: notice.provider,
    source: notice.source,
    status: notice.status,
    reason: notice.reason,
    result: notice.result,
    createdAt: notice.at,
  });
}
