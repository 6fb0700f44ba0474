import type { Db } from '../db.ts';

/** One kept request: its place in its environment's sequence and the entry as JSON (its id is made from the seq). */
export interface RequestLogRow {
  seq: number;
  entry: string;
}

/** An entry to keep, and what it is found by. */
export interface RequestLogWrite {
  merchantId: string | null;
  objectId: string | null;
  kind: string;
  status: number | null;
  entry: string;
}

export interface RequestLogFilter {
  /** Entries before this seq (the previous page's last). */
  before: number | null;
  kind: string | null;
  objectId: string | null;
  status: number | null;
  limit: number;
}

/**
 * The requests inspector's ring on a shared database: the SQL of the request-log aggregate. Each
 * environment has `max` slots; the n-th entry takes slot n mod max, replacing the oldest in place,
 * so the table is bounded by the cap and every statement reads by key or down an index.
 */
/** A slot takes a newer entry only: two writers racing for one slot leave the later. */
const SLOT_UPDATE =
  'seq = excluded.seq, merchant_id = excluded.merchant_id, object_id = excluded.object_id, kind = excluded.kind, status = excluded.status, entry = excluded.entry WHERE excluded.seq > request_log.seq';

export class RequestLogRepository {
  /** On PostgreSQL an entry is numbered and written in one statement (a data-modifying WITH). */
  constructor(private readonly postgres: boolean) {}

  /**
   * Keeps an entry: takes the environment's next number n and writes the entry in slot n mod max,
   * unless a later entry already took the slot. Returns n (on PostgreSQL 0 when a later entry held
   * the slot). On PostgreSQL n comes from the environment's sequence (request_log_<environment>_seq),
   * which no two requests wait on; here, from the runtime_state counter request_log:<environment>.
   */
  async append(db: Db, e: { environment: 'test' | 'live'; max: number } & RequestLogWrite): Promise<number> {
    const [seq] = await this.appendAll(db, { environment: e.environment, max: e.max, entries: [e] });
    return seq ?? 0;
  }

  /**
   * Keeps several entries of one environment, numbered in order, as append would one by one; on
   * PostgreSQL in one statement (the numbers drawn from the sequence at once, the entries from one
   * JSON parameter). At most `max` entries, so no two of them share a slot. Returns their numbers
   * (on PostgreSQL, of those written).
   */
  async appendAll(db: Db, batch: { environment: 'test' | 'live'; max: number; entries: RequestLogWrite[] }): Promise<number[]> {
    const { environment, max, entries } = batch;
    if (entries.length === 0) return [];
    if (entries.length > max) throw new Error(`a batch of ${entries.length} request log entries exceeds the ring of ${max}`);
    if (this.postgres) {
      const json = JSON.stringify(entries.map((e, i) => ({ i: i + 1, merchant_id: e.merchantId, object_id: e.objectId, kind: e.kind, status: e.status, entry: e.entry })));
      const rows = await db.all<{ seq: number }>(
        `WITH n AS (SELECT g AS i, nextval(CAST(? AS regclass)) AS value FROM generate_series(1, CAST(? AS BIGINT)) AS g),
           e AS (SELECT * FROM json_to_recordset(CAST(? AS JSON)) AS e(i BIGINT, merchant_id TEXT, object_id TEXT, kind TEXT, status BIGINT, entry TEXT))
         INSERT INTO request_log (environment, slot, seq, merchant_id, object_id, kind, status, entry)
         SELECT CAST(? AS TEXT), n.value % CAST(? AS BIGINT), n.value, e.merchant_id, e.object_id, e.kind, e.status, e.entry FROM n JOIN e ON e.i = n.i
         ON CONFLICT (environment, slot) DO UPDATE SET ${SLOT_UPDATE}
         RETURNING seq`,
        [`request_log_${environment}_seq`, entries.length, json, environment, max],
      );
      return rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
    }
    const counter = `request_log:${environment}`;
    const seqs: number[] = [];
    for (const e of entries) {
      const seq = Number(
        (await db.get<{ value: number }>('INSERT INTO runtime_state (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = runtime_state.value + 1 RETURNING value', [counter]))!.value,
      );
      await db.run(
        `INSERT INTO request_log (environment, slot, seq, merchant_id, object_id, kind, status, entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (environment, slot) DO UPDATE SET ${SLOT_UPDATE}`,
        [environment, seq % max, seq, e.merchantId, e.objectId, e.kind, e.status, e.entry],
      );
      seqs.push(seq);
    }
    return seqs;
  }

  /** Forgets the slots beyond `max` (the cap was lowered): the table stays within the cap. */
  async dropSlotsFrom(db: Db, max: number): Promise<void> {
    await db.run('DELETE FROM request_log WHERE slot >= ?', [max]);
  }

  /** A merchant's entries (and the environment's unattributed ones), newest first, down the seq index. */
  page(db: Db, environment: string, merchantId: string, f: RequestLogFilter): Promise<RequestLogRow[]> {
    return db.all<RequestLogRow>(
      `SELECT seq, entry FROM request_log
       WHERE environment = ? AND (? IS NULL OR seq < ?) AND (merchant_id IS NULL OR merchant_id = ?)
         AND (? IS NULL OR kind = ?) AND (? IS NULL OR object_id = ?) AND (? IS NULL OR status = ?)
       ORDER BY seq DESC LIMIT ?`,
      [environment, f.before, f.before, merchantId, f.kind, f.kind, f.objectId, f.objectId, f.status, f.status, f.limit],
    );
  }

  /** A merchant's entries about one object, oldest first, down the object index. */
  forObject(db: Db, environment: string, merchantId: string, objectId: string): Promise<RequestLogRow[]> {
    return db.all<RequestLogRow>('SELECT seq, entry FROM request_log WHERE environment = ? AND object_id = ? AND (merchant_id IS NULL OR merchant_id = ?) ORDER BY seq', [
      environment,
      objectId,
      merchantId,
    ]);
  }
}
