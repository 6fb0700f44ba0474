import { money, statusBadge, table, when } from '../dashboard-layout.ts';
import type { Html } from '../html.ts';
import { objectHref } from './object-href.ts';

/** An item of GET /api/v1/transactions, as the table shows it. */
export interface TransactionItem {
  id: string;
  type: string;
  direction: string;
  status: string;
  amount: number;
  fees: number;
  channel: string;
  provider: string | null;
  created_at: string;
}

export function transactionsTable(items: TransactionItem[], id: string): Html {
  return table(
    ['Id', 'Type', 'Direction', 'Status', 'Amount', 'Fees', 'Channel', 'Provider', 'Created'],
    items.map((t) => [objectHref(t.id), t.type, t.direction, statusBadge(t.status), money(t.amount), money(t.fees), t.channel, t.provider ?? '—', when(t.created_at)]),
    { id, empty: 'No transactions yet.' },
  );
}
