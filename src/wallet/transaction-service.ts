import type { AuthContext } from '../auth/api-key-service.ts';
import { decodeCursor, DEFAULT_PAGE_SIZE, page } from '../http/pagination.ts';
import { iso } from '../kernel/clock.ts';
import type { Db } from '../store/db.ts';
import type { z } from 'zod';
import type { transactionItemSchema } from './wallet.schemas.ts';

type TransactionItem = z.infer<typeof transactionItemSchema>;

interface Row {
  seq: number;
  object_type: TransactionItem['type'];
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

/** Everything that moves the wallet (charges, transfers, trades, collections, payouts, bills) in one newest-first keyset-paged list. */
export class TransactionService {
  async list(db: Db, auth: AuthContext, query: { cursor?: string; page_size?: number; type?: TransactionItem['type'] }) {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    // Each filter is a plain condition, present or absent: an `(? IS NULL OR …)` hides the seq
    // bound from SQLite's planner, and a cursor page deep in a million rows then scans them.
    const where = ['t.environment = ?', 't.merchant_id = ?'];
    const params: (string | number)[] = [auth.environment, auth.merchantId];
    if (before !== undefined) (where.push('t.seq < ?'), params.push(before));
    if (query.type !== undefined) (where.push('t.object_type = ?'), params.push(query.type));
    const rows = await db.all<Row>(
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
      [...params, pageSize + 1],
    );
    const { items, nextCursor } = page(rows, pageSize);
    return { items: items.map(present), nextCursor };
  }
}

function present(row: Row): TransactionItem {
  return {
    id: row.id,
    type: row.object_type,
    // Money into the wallet is a credit: a charge, a collection, or a sell's proceeds.
    direction: row.object_type === 'charge' || row.object_type === 'collection' || row.side === 'sell' ? 'credit' : 'debit',
    status: row.status,
    amount: row.amount,
    fees: row.fees,
    currency: 'GHS',
    channel: row.channel,
    provider: row.provider,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
