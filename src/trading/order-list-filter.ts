import type { AuthContext } from '../auth/api-key-service.ts';
import type { MarketOrderFilter } from '../store/repositories/market-order-filter.ts';

/** What GET /api/v1/trades and GET /api/v1/trades/quotes filter on. */
export interface OrderListQuery {
  status?: string;
  side?: string;
  asset?: string;
  created_from?: string;
  created_to?: string;
}

/** A list query of the merchant's quotes or trades, below the cursor's seq. */
export function orderListFilter(auth: AuthContext, query: OrderListQuery, before: number | undefined): MarketOrderFilter {
  return {
    environment: auth.environment,
    merchantId: auth.merchantId,
    before,
    status: query.status,
    side: query.side,
    asset: query.asset,
    createdFrom: query.created_from ? Date.parse(query.created_from) : undefined,
    createdTo: query.created_to ? Date.parse(query.created_to) : undefined,
  };
}
