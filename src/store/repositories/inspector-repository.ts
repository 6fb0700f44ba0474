import type { Db } from '../db.ts';

// The inspector's read model: read-only queries across the aggregates (records, rail attempts and
// notices, journals, events and deliveries) that tell one object's life, and who owns a mock call.

/** The table of each object kind that has a timeline. */
const TABLES: Record<string, string> = {
  charge: 'charges',
  transfer: 'transfers',
  trade: 'trades',
  quote: 'quotes',
  collection: 'collections',
  payout: 'payouts',
  bill: 'bills',
};

export interface IdempotencyClaimRow {
  idempotency_key: string;
  state: string;
  response_status: number | null;
  created_at: number;
}

export interface RailAttemptRow {
  seq: number;
  provider: string;
  operation: string;
  outcome: string;
  provider_reference: string | null;
  detail: string | null;
  latency_ms: number | null;
  created_at: number;
}

export interface RailNoticeRow {
  seq: number;
  provider: string;
  source: 'callback' | 'poll';
  status: string;
  reason: string | null;
  result: string;
  created_at: number;
}

export interface LateSettlementRow {
  seq: number;
  provider: string;
  amount: number;
  journal_id: string;
  reversal_journal_id: string;
  source: string;
  created_at: number;
}

export interface JournalRow {
  seq: number;
  id: string;
  kind: string;
  memo: string;
  reverses: string | null;
  created_at: number;
}

export interface PostingRow {
  journal_id: string;
  account: string;
  currency: string;
  amount: number;
}

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  created_at: number;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  created_at: number;
}

export interface AttemptRow {
  seq: number;
  delivery_id: string;
  attempt: number;
  trigger: string;
  at: number;
  url: string;
  http_status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');

export class InspectorRepository {
  /** The object's status and creation time, if the merchant owns it in this environment. */
  objectHead(db: Db, object: string, id: string, environment: string, merchantId: string): Promise<{ status: string; created_at: number } | undefined> {
    const table = TABLES[object];
    if (!table) return Promise.resolve(undefined);
    return db.get<{ status: string; created_at: number }>(`SELECT status, created_at FROM ${table} WHERE id = ? AND environment = ? AND merchant_id = ?`, [id, environment, merchantId]);
  }

  idempotencyClaims(db: Db, resourceId: string, environment: string, merchantId: string): Promise<IdempotencyClaimRow[]> {
    return db.all<IdempotencyClaimRow>('SELECT idempotency_key, state, response_status, created_at FROM idempotency_keys WHERE resource_id = ? AND environment = ? AND merchant_id = ?', [
      resourceId,
      environment,
      merchantId,
    ]);
  }

  tradeStatusHistory(db: Db, tradeId: string): Promise<{ seq: number; status: string; note: string | null; at: number }[]> {
    return db.all<{ seq: number; status: string; note: string | null; at: number }>('SELECT seq, status, note, at FROM trade_status_history WHERE trade_id = ? ORDER BY seq', [tradeId]);
  }

  railAttempts(db: Db, object: string, id: string): Promise<RailAttemptRow[]> {
    return db.all<RailAttemptRow>('SELECT seq, provider, operation, outcome, provider_reference, detail, latency_ms, created_at FROM rail_attempts WHERE ref_type = ? AND ref_id = ? ORDER BY seq', [
      object,
      id,
    ]);
  }

  railNotices(db: Db, objectId: string): Promise<RailNoticeRow[]> {
    return db.all<RailNoticeRow>('SELECT seq, provider, source, status, reason, result, created_at FROM rail_notices WHERE object_id = ? ORDER BY seq', [objectId]);
  }

  lateSettlements(db: Db, objectId: string): Promise<LateSettlementRow[]> {
    return db.all<LateSettlementRow>('SELECT seq, provider, amount, journal_id, reversal_journal_id, source, created_at FROM late_settlements WHERE object_id = ? ORDER BY seq', [objectId]);
  }

  journals(db: Db, object: string, id: string): Promise<JournalRow[]> {
    return db.all<JournalRow>('SELECT seq, id, kind, memo, reverses, created_at FROM ledger_journals WHERE ref_type = ? AND ref_id = ? ORDER BY seq', [object, id]);
  }

  /** The postings of the journals (not empty), in order. */
  postings(db: Db, journalIds: string[]): Promise<PostingRow[]> {
    return db.all<PostingRow>(`SELECT journal_id, account, currency, amount FROM ledger_postings WHERE journal_id IN (${placeholders(journalIds)}) ORDER BY seq`, journalIds);
  }

  events(db: Db, object: string, id: string): Promise<EventRow[]> {
    return db.all<EventRow>('SELECT seq, id, type, created_at FROM outbox_events WHERE object_type = ? AND object_id = ? ORDER BY seq', [object, id]);
  }

  /** The deliveries of the events (not empty), in order. */
  deliveries(db: Db, eventIds: string[]): Promise<DeliveryRow[]> {
    return db.all<DeliveryRow>(`SELECT seq, id, event_id, event_type, endpoint_id, status, created_at FROM webhook_deliveries WHERE event_id IN (${placeholders(eventIds)}) ORDER BY seq`, eventIds);
  }

  /** The attempts of the deliveries (not empty), in order. */
  attempts(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
    return db.all<AttemptRow>(
      `SELECT seq, delivery_id, attempt, trigger, at, url, http_status, latency_ms, response_excerpt, error FROM webhook_attempts WHERE delivery_id IN (${placeholders(deliveryIds)}) ORDER BY seq`,
      deliveryIds,
    );
  }

  /** The object a rail attempt with one of these upstream references (not empty) was for. */
  objectOfProviderReference(db: Db, references: string[]): Promise<{ ref_id: string } | undefined> {
    return db.get<{ ref_id: string }>(`SELECT ref_id FROM rail_attempts WHERE provider_reference IN (${placeholders(references)}) LIMIT 1`, references);
  }

  /** The environment and merchant of an object on the transaction list. */
  ownerOf(db: Db, objectId: string): Promise<{ environment: 'test' | 'live'; merchant_id: string } | undefined> {
    return db.get<{ environment: 'test' | 'live'; merchant_id: string }>('SELECT environment, merchant_id FROM transactions WHERE object_id = ?', [objectId]);
  }
}
