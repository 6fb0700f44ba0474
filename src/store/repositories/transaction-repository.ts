import type { Db } from '../db.ts';

/** One line of the merchant's transactions list, joined with the record it names. */
export interface TransactionListRow {
  seq: number;
  object_type: string;
  side: 'buy' | 'sell' | null;
  id: string;
  status: string;
  amount: number;
  fees: number;
  channel: string;
  provider: string | null;
  created_at: number;
  updated_at: number;
}

/** The merchant's transactions list: one row per wallet-moving record, in insertion order. */
export class TransactionRepository {
  async insert(db: Db, row: { environment: string; merchantId: string; objectType: string; objectId: string; createdAt: number }): Promise<void> {
    await db.run('INSERT INTO transactions (environment, merchant_id, object_type, object_id, created_at) VALUES (?, ?, ?, ?, ?)', [
      row.environment,
      row.merchantId,
      row.objectType,
      row.objectId,
      row.createdAt,
    ]);
  }

  /** Newest first, LIMIT `limit` (a page + 1, for keysetPage), below `before`, optionally of one type. */
  async list(db: Db, query: { environment: string; merchantId: string; before?: number; type?: string; limit: number }): Promise<TransactionListRow[]> {
    // Each filter is a plain condition, present or absent: an `(? IS NULL OR …)` hides the seq
    // bound from SQLite's planner, and a cursor page deep in a million rows then scans them.
    const where = ['t.environment = ?', 't.merchant_id = ?'];
    const params: (string | number)[] = [query.environment, query.merchantId];
    if (query.before !== undefined) where.push('t.seq < ?'), params.push(query.before);
    if (query.type !== undefined) where.push('t.object_type = ?'), params.push(query.type);
    return db.all<TransactionListRow>(
      `SELECT t.seq, t.object_type, t.object_id AS id, r.side,
              COALESCE(c.status, f.status, k.status, p.status, b.status, r.status) AS status,
              COALESCE(c.amount, f.amount, k.amount, p.amount, b.amount, r.settled_fiat_amount, r.net_fiat_amount) AS amount,
              COALESCE(c.fees, f.fees, k.fees, p.fees, b.fees, 0) AS fees,
              COALESCE(c.channel, f.channel, k.channel, p.channel, CASE WHEN b.id IS NOT NULL THEN 'bills' END, r.asset || ':' || r.network) AS channel,
              COALESCE(c.provider, f.provider, k.provider, p.provider, b.provider) AS provider,
              COALESCE(c.created_at, f.created_at, k.created_at, p.created_at, b.created_at, r.created_at) AS created_at,
              COALESCE(c.updated_at, f.updated_at, k.updated_at, p.updated_at, b.updated_at, r.updated_at) AS updated_at
         FROM transactions t
         LEFT JOIN charges c ON t.object_type = 'charge' AND c.id = t.object_id
         LEFT JOIN transfers f ON t.object_type = 'transfer' AND f.id = t.object_id
         LEFT JOIN trades r ON t.object_type = 'trade' AND r.id = t.object_id
         LEFT JOIN collections k ON t.object_type = 'collection' AND k.id = t.object_id
         LEFT JOIN payouts p ON t.object_type = 'payout' AND p.id = t.object_id
         LEFT JOIN bills b ON t.object_type = 'bill' AND b.id = t.object_id
        WHERE ${where.join(' AND ')}
        ORDER BY t.seq DESC LIMIT ?`,
      [...params, query.limit],
    );
  }
}
