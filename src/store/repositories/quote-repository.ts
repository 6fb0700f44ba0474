import type { Db } from '../db.ts';
import { marketOrderWhere, type MarketOrderFilter } from './market-order-filter.ts';

/** A quotes row as stored; rates are decimal strings of fixed-point integers. */
export interface QuoteRecord {
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  side: 'buy' | 'sell';
  asset: string;
  network: string;
  asset_amount: number;
  net_fiat_amount: number;
  applied_rate: string;
  benchmark_rate: string;
  usd_price: string;
  fx_rate: string;
  status: string;
  trade_id: string | null;
  expires_at: number;
  created_at: number;
}

export type QuoteFilter = MarketOrderFilter;

/** Quotes, from created to consumed by a trade or expired: the SQL of the quote aggregate. */
export class QuoteRepository {
  async insert(db: Db, row: QuoteRecord): Promise<void> {
    await db.run(
      `INSERT INTO quotes (id, environment, merchant_id, side, asset, network, asset_amount, net_fiat_amount, applied_rate,
           benchmark_rate, usd_price, fx_rate, status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.environment,
        row.merchant_id,
        row.side,
        row.asset,
        row.network,
        row.asset_amount,
        row.net_fiat_amount,
        row.applied_rate,
        row.benchmark_rate,
        row.usd_price,
        row.fx_rate,
        row.status,
        row.expires_at,
        row.created_at,
      ],
    );
  }

  find(db: Db, id: string): Promise<QuoteRecord | undefined> {
    return db.get<QuoteRecord>('SELECT * FROM quotes WHERE id = ?', [id]);
  }

  /** The merchant's quotes, newest first, below the cursor's seq; `limit` rows at most. */
  list(db: Db, filter: QuoteFilter, limit: number): Promise<(QuoteRecord & { seq: number })[]> {
    const { where, params } = marketOrderWhere(filter);
    return db.all<QuoteRecord & { seq: number }>(`SELECT * FROM quotes WHERE ${where} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
  }

  /** created -> consumed by the trade, only if still created; the number of rows changed (0 or 1). */
  async consume(db: Db, id: string, tradeId: string): Promise<number> {
    const r = await db.run("UPDATE quotes SET status = 'consumed', trade_id = ? WHERE id = ? AND status = 'created'", [tradeId, id]);
    return r.changes;
  }

  /** created -> expired, only if still created; the number of rows changed (0 or 1). */
  async expire(db: Db, id: string): Promise<number> {
    const r = await db.run("UPDATE quotes SET status = 'expired' WHERE id = ? AND status = 'created'", [id]);
    return r.changes;
  }
}
