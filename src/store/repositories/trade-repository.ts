import type { Db, SqlValue } from '../db.ts';
import { marketOrderWhere, type MarketOrderFilter } from './market-order-filter.ts';

/** A trades row as stored; rates are decimal strings of fixed-point integers. */
export interface TradeRecord {
  seq: number;
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  quote_id: string;
  side: 'buy' | 'sell';
  asset: string;
  network: string;
  status: string;
  asset_amount: number;
  net_fiat_amount: number;
  applied_rate: string;
  benchmark_rate: string;
  delivery_address: string | null;
  deposit_address: string | null;
  transaction_id: string | null;
  deposited_amount: number | null;
  deposited_at: number | null;
  excess_amount: number | null;
  settled_fiat_amount: number | null;
  confirmations: number;
  failure_reason: string | null;
  created_at: number;
  updated_at: number;
}

export interface TradeStatusRecord {
  status: string;
  at: number;
  note: string | null;
}

export type TradeFilter = MarketOrderFilter;

// Trades that count toward limits: everything not failed or reversed.
const COUNTED = "status NOT IN ('failed', 'reversed')";

/**
 * Trades, their status history, and what trading reads of the ledger's journals and writes to the
 * merchant's transaction list: the SQL of the trade aggregate.
 */
export class TradeRepository {
  async insert(
    db: Db,
    t: {
      id: string;
      environment: string;
      merchantId: string;
      quoteId: string;
      side: string;
      asset: string;
      network: string;
      assetAmount: number;
      netFiatAmount: number;
      appliedRate: string;
      benchmarkRate: string;
      deliveryAddress: string | null;
      now: number;
    },
  ): Promise<void> {
    await db.run(
      `INSERT INTO trades (id, environment, merchant_id, quote_id, side, asset, network, status, asset_amount, net_fiat_amount,
           applied_rate, benchmark_rate, delivery_address, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'created', ?, ?, ?, ?, ?, ?, ?)`,
      [t.id, t.environment, t.merchantId, t.quoteId, t.side, t.asset, t.network, t.assetAmount, t.netFiatAmount, t.appliedRate, t.benchmarkRate, t.deliveryAddress, t.now, t.now],
    );
  }

  /** The trade's entry in the merchant's transaction list. */

  find(db: Db, id: string): Promise<TradeRecord | undefined> {
    return db.get<TradeRecord>('SELECT * FROM trades WHERE id = ?', [id]);
  }

  findOwned(db: Db, id: string, environment: string, merchantId: string): Promise<TradeRecord | undefined> {
    return db.get<TradeRecord>('SELECT * FROM trades WHERE id = ? AND environment = ? AND merchant_id = ?', [id, environment, merchantId]);
  }

  /** Sets the status and `fields` (column names chosen by the trade service, never by input). */
  async updateStatus(db: Db, id: string, status: string, now: number, fields: Record<string, SqlValue> = {}): Promise<void> {
    const sets = Object.keys(fields).map((k) => `${k} = ?`);
    await db.run(`UPDATE trades SET ${['status = ?', 'updated_at = ?', ...sets].join(', ')} WHERE id = ?`, [status, now, ...Object.values(fields), id]);
  }

  async insertStatusHistory(db: Db, tradeId: string, status: string, note: string | null, at: number): Promise<void> {
    await db.run('INSERT INTO trade_status_history (trade_id, status, note, at) VALUES (?, ?, ?, ?)', [tradeId, status, note, at]);
  }

  statusHistory(db: Db, tradeId: string): Promise<TradeStatusRecord[]> {
    return db.all<TradeStatusRecord>('SELECT status, at, note FROM trade_status_history WHERE trade_id = ? ORDER BY seq', [tradeId]);
  }

  async setConfirmations(db: Db, id: string, confirmations: number, now: number): Promise<void> {
    await db.run('UPDATE trades SET confirmations = ?, updated_at = ? WHERE id = ?', [confirmations, now, id]);
  }

  /** The merchant's trades, newest first, below the cursor's seq; `limit` rows at most. */
  list(db: Db, filter: TradeFilter, limit: number): Promise<TradeRecord[]> {
    const { where, params } = marketOrderWhere(filter);
    return db.all<TradeRecord>(`SELECT * FROM trades WHERE ${where} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
  }

  /**
   * What a trade is judged by, in one statement: the merchant's stage on the service ladder (null
   * when not on record); the cedis of its trades that count toward limits, created since `dayStart`
   * and since `monthStart` (at or before `dayStart`: one read of the month's range gives both); and,
   * given a treasury inventory account, that account's balance. One statement, not three: on a
   * shared database most of a small read's cost is the statement itself.
   */
  async standing(
    db: Db,
    environment: string,
    merchantId: string,
    since: { dayStart: number; monthStart: number },
    inventory?: { account: string; currency: string },
  ): Promise<{ stage: string | null; day: number; month: number; inventory: number }> {
    const row = await db.get<{ stage: string | null; day: number | null; month: number | null; inventory: number | null }>(
      `SELECT (SELECT trading_stage FROM merchants WHERE id = ?) AS stage, used.day, used.month, ${
        inventory ? '(SELECT balance FROM ledger_balances WHERE environment = ? AND account = ? AND currency = ?)' : 'NULL'
      } AS inventory
         FROM (SELECT SUM(CASE WHEN created_at >= ? THEN net_fiat_amount ELSE 0 END) AS day, SUM(net_fiat_amount) AS month
                 FROM trades WHERE environment = ? AND merchant_id = ? AND created_at >= ? AND ${COUNTED}) AS used`,
      [merchantId, ...(inventory ? [environment, inventory.account, inventory.currency] : []), since.dayStart, environment, merchantId, since.monthStart],
    );
    return { stage: row?.stage ?? null, day: Number(row?.day ?? 0), month: Number(row?.month ?? 0), inventory: Number(row?.inventory ?? 0) };
  }
}
