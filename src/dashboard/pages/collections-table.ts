import { money, statusBadge, table, when } from '../dashboard-layout.ts';
import type { Html } from '../html.ts';
import { objectHref } from './object-href.ts';

/** An item of GET /v1/collections, as the table shows it. */
export interface CollectionItem {
  id: string;
  status: string;
  /** Minor units (pesewas). */
  amount: number;
  /** The amount as sent, in major units: "110.50". */
  amount_major: string;
  channel: string;
  provider: string | null;
  created_at: string;
}

export function collectionsTable(items: CollectionItem[], id: string): Html {
  return table(
    ['Id', 'Status', 'Amount', 'Channel', 'Provider', 'Created'],
    items.map((c) => [objectHref(c.id), statusBadge(c.status), c.amount_major ? `GHS ${c.amount_major}` : money(c.amount), c.channel, c.provider ?? '—', when(c.created_at)]),
    { id, empty: 'No collections yet.' },
  );
}
