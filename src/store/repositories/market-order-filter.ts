import type { SqlValue } from '../db.ts';

/** How a merchant lists quotes or trades: both tables share these columns and the insertion seq. */
export interface MarketOrderFilter {
  environment: string;
  merchantId: string;
  /** Keyset cursor: rows below this seq. */
  before?: number;
  status?: string;
  side?: string;
  asset?: string;
  createdFrom?: number;
  createdTo?: number;
}

/**
 * The WHERE clause and parameters of a quotes or trades list. Each filter is a plain condition,
 * present or absent: an `(? IS NULL OR …)` hides the seq bound from the planner.
 */
export function marketOrderWhere(filter: MarketOrderFilter): { where: string; params: SqlValue[] } {
  const where = ['environment = ?', 'merchant_id = ?'];
  const params: SqlValue[] = [filter.environment, filter.merchantId];
  if (filter.before !== undefined) where.push('seq < ?'), params.push(filter.before);
  if (filter.status) where.push('status = ?'), params.push(filter.status);
  if (filter.side) where.push('side = ?'), params.push(filter.side);
  if (filter.asset) where.push('asset = ?'), params.push(filter.asset);
  if (filter.createdFrom !== undefined) where.push('created_at >= ?'), params.push(filter.createdFrom);
  if (filter.createdTo !== undefined) where.push('created_at < ?'), params.push(filter.createdTo);
  return { where: where.join(' AND '), params };
}
