import type { Db } from '../db.ts';

/** One try of one provider for one record, as the router records it. */
export interface RailAttemptRow {
  environment: string;
  refType: string;
  refId: string;
  provider: string;
  operation: string;
  outcome: string;
  providerReference: string | null;
  detail: string | null;
  latencyMs: number | null;
  createdAt: number;
}

/** A provider's word on a record (callback or poll), kept for its timeline. */
export interface RailNoticeRow {
  environment: string;
  objectType: string;
  objectId: string;
  provider: string;
  source: string;
  status: string;
  reason: string | null;
  result: string;
  createdAt: number;
}

/** A late success from an abandoned provider, with its journal and reversal. */
export interface LateSettlementRow {
  environment: string;
  objectType: string;
  objectId: string;
  provider: string;
  amount: number;
  journalId: string;
  reversalJournalId: string;
  source: string;
  createdAt: number;
}

/** What the rails wrote about each record: attempts, notices and reversed late settlements. */
export class RailRepository {
  async insertAttempt(db: Db, a: RailAttemptRow): Promise<void> {
    await db.run('INSERT INTO rail_attempts (environment, ref_type, ref_id, provider, operation, outcome, provider_reference, detail, latency_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      a.environment,
      a.refType,
      a.refId,
      a.provider,
      a.operation,
      a.outcome,
      a.providerReference,
      a.detail,
      a.latencyMs,
      a.createdAt,
    ]);
  }

  /** How many times the service gave up on this provider for this record (timeout, reset, 5xx, bad answer). */
  async abandonedAttempts(db: Db, refId: string, provider: string): Promise<number> {
    const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM rail_attempts WHERE ref_id = ? AND provider = ? AND outcome IN ('timeout', 'connection', 'server', 'protocol')", [
      refId,
      provider,
    ]);
    return Number(row?.n ?? 0);
  }

  /** The latest acceptance a provider gave this record, if any. */
  async lastAccepted(db: Db, refType: string, refId: string): Promise<{ provider: string; provider_reference: string | null } | undefined> {
    return db.get<{ provider: string; provider_reference: string | null }>(
      "SELECT provider, provider_reference FROM rail_attempts WHERE ref_type = ? AND ref_id = ? AND outcome = 'accepted' ORDER BY seq DESC LIMIT 1",
      [refType, refId],
    );
  }

  async insertNotice(db: Db, n: RailNoticeRow): Promise<void> {
    await db.run('INSERT INTO rail_notices (environment, object_type, object_id, provider, source, status, reason, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      n.environment,
      n.objectType,
      n.objectId,
      n.provider,
      n.source,
      n.status,
      n.reason,
      n.result,
      n.createdAt,
    ]);
  }

  async lateSettlementExists(db: Db, objectType: string, objectId: string, provider: string): Promise<boolean> {
    const row = await db.get('SELECT 1 AS x FROM late_settlements WHERE object_type = ? AND object_id = ? AND provider = ?', [objectType, objectId, provider]);
    return row !== undefined;
  }

  async insertLateSettlement(db: Db, l: LateSettlementRow): Promise<void> {
    await db.run('INSERT INTO late_settlements (environment, object_type, object_id, provider, amount, journal_id, reversal_journal_id, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      l.environment,
      l.objectType,
      l.objectId,
      l.provider,
      l.amount,
      l.journalId,
      l.reversalJournalId,
      l.source,
      l.createdAt,
    ]);
  }
}
