import type { Db } from '../store/db.ts';
import type { Environment } from './ledger.ts';

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
  environment: Environment;
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
export async function ledgerEntries(db: Db, filter: LedgerEntryFilter): Promise<LedgerEntryRow[]> {
  // Plain conditions, each present or absent (an `? IS NULL OR` hides the bounds from the planner).
  const where = ['j.environment = ?', 'j.merchant_id = ?'];
  const params: (string | number)[] = [filter.environment, filter.merchantId];
  if (filter.refOrJournalId !== undefined) (where.push('(j.ref_id = ? OR j.id = ?)'), params.push(filter.refOrJournalId, filter.refOrJournalId));
  if (filter.accounts !== undefined) (where.push(`p.account IN (${filter.accounts.map(() => '?').join(', ')})`), params.push(...filter.accounts));
  if (filter.currency !== undefined) (where.push('p.currency = ?'), params.push(filter.currency));
  if (filter.from !== undefined) (where.push('j.created_at >= ?'), params.push(filter.from));
  if (filter.to !== undefined) (where.push('j.created_at < ?'), params.push(filter.to));
  if (filter.before !== undefined) (where.push('p.seq < ?'), params.push(filter.before));
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

/** Per-account sums of a merchant's postings to the given accounts before an instant (exclusive). */
export async function balancesBefore(db: Db, input: { environment: Environment; merchantId: string; accounts: string[]; currency: string; before: number }): Promise<Map<string, number>> {
  const rows = await db.all<{ account: string; total: number }>(
    `SELECT p.account, SUM(p.amount) AS total
       FROM ledger_postings p JOIN ledger_journals j ON j.id = p.journal_id
      WHERE j.environment = ? AND j.merchant_id = ? AND j.created_at < ? AND p.currency = ?
        AND p.account IN (${input.accounts.map(() => '?').join(', ')})
      GROUP BY p.account`,
    [input.environment, input.merchantId, input.before, input.currency, ...input.accounts],
  );
  return new Map(rows.map((r) => [r.account, Number(r.total)]));
}

/** The distinct UTC days (epoch day numbers) on which a merchant's journals touched the given accounts, newest first. */
export async function activeDays(db: Db, input: { environment: Environment; merchantId: string; accounts: string[]; beforeDay?: number; limit: number }): Promise<number[]> {
  const where = ['j.environment = ?', 'j.merchant_id = ?', `p.account IN (${input.accounts.map(() => '?').join(', ')})`];
  const params: (string | number)[] = [input.environment, input.merchantId, ...input.accounts];
  if (input.beforeDay !== undefined) (where.push('j.created_at < ?'), params.push(input.beforeDay * DAY_MS));
  const rows = await db.all<{ day: number }>(
    `SELECT DISTINCT j.created_at / ${DAY_MS} AS day
       FROM ledger_journals j JOIN ledger_postings p ON p.journal_id = j.id
      WHERE ${where.join(' AND ')}
      ORDER BY day DESC LIMIT ?`,
    [...params, input.limit],
  );
  return rows.map((r) => Number(r.day));
}

export const DAY_MS = 86_400_000;
