import type { AuthContext } from '../auth/api-key-service.ts';
import { DEFAULT_PAGE_SIZE } from '../http/pagination.ts';
import { iso } from '../kernel/clock.ts';
import type { Store } from '../store/db.ts';
import { decodeCursor, keysetPage } from '../store/repositories/keyset-page.ts';
import { TransactionRepository, type TransactionListRow } from '../store/repositories/transaction-repository.ts';
import type { z } from 'zod';
import type { transactionItemSchema } from './wallet.schemas.ts';

type TransactionItem = z.infer<typeof transactionItemSchema>;

type Row = TransactionListRow & { object_type: TransactionItem['type'] };

/** Everything that moves the wallet (charges, transfers, trades, collections, payouts, bills) in one newest-first keyset-paged list. */
export class TransactionService {
  private readonly repo = new TransactionRepository();

  constructor(private readonly deps: { store: Store }) {}

  async list(auth: AuthContext, query: { cursor?: string; page_size?: number; type?: TransactionItem['type'] }) {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = (await this.repo.list(this.deps.store, {
      environment: auth.environment,
      merchantId: auth.merchantId,
      ...(before !== undefined ? { before } : {}),
      ...(query.type !== undefined ? { type: query.type } : {}),
      limit: pageSize + 1,
    })) as Row[];
    const { items, nextCursor } = keysetPage(rows, pageSize);
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
