import type { Db } from '../db.ts';

// The ledger's rows: journals, their postings and the running balance of each account.
// Every method runs on the Db it is given (a transaction's `tx`, or the store).

export type LedgerEnvironment = 'test' | 'live';

export interface JournalRow {
  id: string;
  environment: LedgerEnvironment;
  merchantId: string | null;
  kind: string;
  refType: string;
  refId: string;
  reverses: string | null;
  memo: string;
  createdAt: number;
}

export interface PostingRow {
  account: string;
  currency: string;
  amount: number;
}

/** One posting of a merchant's journal, with what its journal says about it. */
export interface LedgerEntryRow {
  seq: number;
  journal_id: string;
  /** 1-based position of the posting in its journal. */
  position: number;
  kind: string;
  memo: string;
  reverses: string | null;
  ref_type: string;
  ref_id: string;
  account: string;
  currency: string;
  amount: number;
  created_at: number;
}

export interface LedgerEntryFilter {
  environment: LedgerEnvironment;
  merchantId: string;
  /** The object the journals are about (their ref id), or one journal's own id. */
  refOrJournalId?: string;
  /** Only postings to these accounts. */
  accounts?: string[];
  currency?: string;
  /** Journal time, inclusive. */
  from?: number;
  /** Journal time, exclusive. */
  to?: number;
  /** Keyset: postings below this sequence (newest first). */
  before?: number;
  /** Newest first with a limit (a page), or oldest first without (a whole report). */
  limit?: number;
}

/**
 * The postings of a merchant's journals (house accounts included: a journal is shown whole, so it
 * visibly nets to zero), keyset-paged on the posting sequence.
 */
async function ledgerEntries(db: Db, filter: LedgerEntryFilter): Promise<LedgerEntryRow[]> {
  // Plain conditions, each present or absent (an `? IS NULL OR` hides the bounds from the planner).
  const where = ['j.environment = ?', 'j.merchant_id = ?'];
  const params: (string | number)[] = [filter.environment, filter.merchantId];
  if (filter.refOrJournalId !== undefined) where.push('(j.ref_id = ? OR j.id = ?)'), params.push(filter.refOrJournalId, filter.refOrJournalId);
  if (filter.accounts !== undefined) where.push(`p.account IN (${filter.accounts.map(() => '?').join(', ')})`), params.push(...filter.accounts);
  if (filter.currency !== undefined) where.push('p.currency = ?'), params.push(filter.currency);
  if (filter.from !== undefined) where.push('j.created_at >= ?'), params.push(filter.from);
  if (filter.to !== undefined) where.push('j.created_at < ?'), params.push(filter.to);
  if (filter.before !== undefined) where.push('p.seq < ?'), params.push(filter.before);
  return db.all<LedgerEntryRow>(
    `SELECT p.seq, p.journal_id, p.account, p.currency, p.amount,
            p.seq - (SELECT MIN(q.seq) FROM ledger_postings q WHERE q.journal_id = p.journal_id) + 1 AS position,
            j.kind, j.memo, j.reverses, j.ref_type, j.ref_id, j.created_at
       FROM ledger_postings p JOIN ledger_journals j ON j.id = p.journal_id
      WHERE ${where.join(' AND ')}
      ${filter.limit === undefined ? 'ORDER BY p.seq' : 'ORDER BY p.seq DESC LIMIT ?'}`,
    filter.limit === undefined ? params : [...params, filter.limit],
  );
}

/**
 * Per-account sums of a merchant's postings to the given accounts before an instant (exclusive):
 * each account's running balance less what its merchant's journals posted to it since. That reads
 * the postings after the instant (down the journals' time index), not every posting before it.
 */
async function balancesBefore(db: Db, input: { environment: LedgerEnvironment; merchantId: string; accounts: string[]; currency: string; before: number }): Promise<Map<string, number>> {
  const rows = await db.all<{ account: string; total: number }>(
    `SELECT b.account, b.balance - COALESCE((
         SELECT SUM(p.amount) FROM ledger_journals j JOIN ledger_postings p ON p.journal_id = j.id
          WHERE j.environment = b.environment AND j.merchant_id = ? AND j.created_at >= ? AND p.account = b.account AND p.currency = b.currency
       ), 0) AS total
       FROM ledger_balances b
      WHERE b.environment = ? AND b.currency = ? AND b.account IN (${input.accounts.map(() => '?').join(', ')})`,
    [input.merchantId, input.before, input.environment, input.currency, ...input.accounts],
  );
  return new Map(rows.map((r) => [r.account, Number(r.total)]));
}

/**
 * The distinct UTC days (epoch day numbers) on which a merchant's journals touched the given
 * accounts, newest first. Each step finds the latest such journal before the last day found, one
 * probe down the journals' time index, so a page reads its own days and not the merchant's history.
 * (No ORDER BY: the steps come newest first, and an ORDER BY would run every step before LIMIT.)
 */
async function activeDays(db: Db, input: { environment: LedgerEnvironment; merchantId: string; accounts: string[]; beforeDay?: number; limit: number }): Promise<number[]> {
  const latestBefore = (bound: string) =>
    `(SELECT j.created_at FROM ledger_journals j
       WHERE j.environment = ? AND j.merchant_id = ? AND j.created_at < ${bound}
         AND EXISTS (SELECT 1 FROM ledger_postings p WHERE p.journal_id = j.id AND p.account IN (${input.accounts.map(() => '?').join(', ')}))
       ORDER BY j.created_at DESC LIMIT 1) / ${DAY_MS}`;
  const before = input.beforeDay === undefined ? Number.MAX_SAFE_INTEGER : input.beforeDay * DAY_MS;
  const rows = await db.all<{ day: number }>(
    `WITH RECURSIVE active(day) AS (
       SELECT ${latestBefore('?')}
       UNION ALL
       SELECT ${latestBefore(`active.day * ${DAY_MS}`)} FROM active WHERE active.day IS NOT NULL
     )
     SELECT day FROM active WHERE day IS NOT NULL LIMIT ?`,
    [input.environment, input.merchantId, before, ...input.accounts, input.environment, input.merchantId, ...input.accounts, input.limit],
  );
  return rows.map((r) => Number(r.day));
}

export const DAY_MS = 86_400_000;

export class LedgerRepository {
  async insertJournal(db: Db, row: JournalRow): Promise<void> {
    await db.run('INSERT INTO ledger_journals (id, environment, merchant_id, kind, ref_type, ref_id, reverses, memo, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      row.id,
      row.environment,
      row.merchantId,
      row.kind,
      row.refType,
      row.refId,
      row.reverses,
      row.memo,
      row.createdAt,
    ]);
  }

  /** A journal's postings, in its order (their `seq` follows it): one multi-row INSERT. */
  async insertPostings(db: Db, journalId: string, environment: LedgerEnvironment, postings: readonly PostingRow[]): Promise<void> {
    if (postings.length === 0) return;
    await db.run(
      `INSERT INTO ledger_postings (journal_id, environment, account, currency, amount) VALUES ${postings.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      postings.flatMap((p) => [journalId, environment, p.account, p.currency, p.amount]),
    );
  }

  /**
   * Adds each posting's amount to its account's running balance (creating it at that amount): one
   * multi-row upsert. Postings to the same account are summed first: PostgreSQL refuses an upsert
   * that touches one row twice.
   */
  async addToBalances(db: Db, environment: LedgerEnvironment, postings: readonly PostingRow[]): Promise<void> {
    const sums = new Map<string, PostingRow>();
    for (const p of postings) {
      const key = `${p.account}\u0000${p.currency}`;
      const sum = sums.get(key);
      sums.set(key, sum ? { ...sum, amount: sum.amount + p.amount } : { ...p });
    }
    if (sums.size === 0) return;
    const rows = [...sums.values()];
    await db.run(
      `INSERT INTO ledger_balances (environment, account, currency, balance) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}
         ON CONFLICT (environment, account, currency) DO UPDATE SET balance = ledger_balances.balance + excluded.balance`,
      rows.flatMap((p) => [environment, p.account, p.currency, p.amount]),
    );
  }

  async findJournal(db: Db, journalId: string) {
    return db.get<{ environment: LedgerEnvironment; merchant_id: string | null; ref_type: string; ref_id: string }>(
      'SELECT environment, merchant_id, ref_type, ref_id FROM ledger_journals WHERE id = ?',
      [journalId],
    );
  }

  async postingsOf(db: Db, journalId: string): Promise<PostingRow[]> {
    return db.all<PostingRow>('SELECT account, currency, amount FROM ledger_postings WHERE journal_id = ? ORDER BY seq', [journalId]);
  }

  async balance(db: Db, environment: LedgerEnvironment, account: string, currency: string): Promise<number> {
    const row = await db.get<{ balance: number }>('SELECT balance FROM ledger_balances WHERE environment = ? AND account = ? AND currency = ?', [environment, account, currency]);
    return Number(row?.balance ?? 0);
  }

  async trialBalance(db: Db, environment: LedgerEnvironment): Promise<Record<string, number>> {
    const rows = await db.all<{ currency: string; total: number }>('SELECT currency, SUM(amount) AS total FROM ledger_postings WHERE environment = ? GROUP BY currency', [environment]);
    return Object.fromEntries(rows.map((r) => [r.currency, Number(r.total)]));
  }

  readonly entries = ledgerEntries;
  readonly balancesBefore = balancesBefore;
  readonly activeDays = activeDays;

  /** A trade's settlement journals not yet reversed, oldest first. */
  settlementJournalIds(db: Db, tradeId: string): Promise<{ id: string }[]> {
    return db.all<{ id: string }>("SELECT id FROM ledger_journals WHERE ref_type = 'trade' AND ref_id = ? AND kind = 'trade.settled' AND reverses IS NULL ORDER BY seq", [tradeId]);
  }

  /** Whether the treasury inventory `ref` (asset:network) was seeded in the environment. */
  async treasurySeeded(db: Db, environment: string, ref: string): Promise<boolean> {
    return (await db.get("SELECT 1 AS x FROM ledger_journals WHERE environment = ? AND kind = 'treasury.seed' AND ref_id = ?", [environment, ref])) !== undefined;
  }
}
