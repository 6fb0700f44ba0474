import type { ApiAnswer } from '../dashboard-api.ts';
import { apiProblem, money, pager, statusBadge, table, when } from '../dashboard-layout.ts';
import { href, html, type Html, type HtmlValue } from '../html.ts';
import type { DashboardRoutes, PageContext } from '../page-context.ts';
import { collectionsTable, type CollectionItem } from './collections-table.ts';
import { queryText } from './form-field.ts';
import { OBJECT_ID, objectHref } from './object-href.ts';
import { transactionsTable, type TransactionItem } from './transactions-table.ts';

// Objects: the cursor-paged list of each kind (transactions, charges, transfers, trades, quotes,
// collections, payouts, bills), with its filters, and the form that opens an object by id. Like
// every page, it reads through the public API with the session's key.

type Asset = 'USDT' | 'USDC';

/** A trade as GET /api/v1/trades lists it (the fields the list shows). */
interface TradeItem {
  reference: string;
  side: string;
  asset: Asset;
  status: string;
  net_fiat_amount: number;
  created_at: string;
}

/** A quote as GET /api/v1/trades/quotes lists it: with the trade that executed it, if any. */
interface QuoteItem {
  reference: string;
  side: string;
  asset: Asset;
  network: string;
  status: string;
  net_fiat_amount: number;
  asset_amount: number;
  applied_rate: number;
  trade_reference: string | null;
  expires_at: string;
  created_at: string;
}

/** A payout as GET /v1/payouts lists it. */
interface PayoutItem {
  id: string;
  status: string;
  amount: number;
  amount_major: string;
  channel: string;
  provider: string | null;
  created_at: string;
}

/** A kind of object the page lists: where the API lists it, its filters, and how one page of it reads. */
interface ListKind {
  label: string;
  path: string;
  query?: Record<string, string>;
  statusFilter: boolean;
  /** Filters chosen from a list (the API's own values), each a query parameter of the list. */
  selects?: { name: string; label: string; options: string[] }[];
  /** One page of the list (the query is the filters, cursor and page size), as a table or the API's refusal. */
  read(ctx: PageContext, query: Record<string, string | undefined>, empty: string): Promise<{ answer: ApiAnswer<unknown>; list: Html }>;
}

const LIST_ID = 'object-list';

/** A list kind whose items have the type T the API answers with; its table renders them. */
function listKind<T>(kind: Omit<ListKind, 'read'> & { table(items: T[], empty: string): Html }): ListKind {
  const { table: render, ...described } = kind;
  return {
    ...described,
    async read(ctx, query, empty) {
      const answer = await ctx.api.get<T[]>(kind.path, { ...kind.query, ...query }, ctx.call);
      return { answer, list: answer.ok ? render(answer.data, empty) : apiProblem(answer, `${kind.label} could not be read`) };
    },
  };
}

/** A table of the given columns, one row per item, and the message of an empty list. */
function columns<T>(headers: string[], row: (item: T) => HtmlValue[]): (items: T[], empty: string) => Html {
  return (items, empty) => table(headers, items.map(row), { id: LIST_ID, empty });
}

const transactions = (items: TransactionItem[]) => transactionsTable(items, LIST_ID);

const KINDS: Record<string, ListKind> = {
  transactions: listKind({ label: 'Transactions', path: '/api/v1/transactions', statusFilter: false, table: transactions }),
  charges: listKind({ label: 'Charges', path: '/api/v1/transactions', query: { type: 'charge' }, statusFilter: false, table: transactions }),
  transfers: listKind({ label: 'Transfers', path: '/api/v1/transactions', query: { type: 'transfer' }, statusFilter: false, table: transactions }),
  trades: listKind({
    label: 'Trades',
    path: '/api/v1/trades',
    statusFilter: true,
    table: columns<TradeItem>(['Id', 'Side', 'Asset', 'Status', 'Amount', 'Created'], (t) => [
      objectHref(t.reference),
      t.side ?? '—',
      t.asset ?? '—',
      statusBadge(t.status),
      typeof t.net_fiat_amount === 'number' ? money(t.net_fiat_amount) : '—',
      when(t.created_at),
    ]),
  }),
  quotes: listKind({
    label: 'Quotes',
    path: '/api/v1/trades/quotes',
    statusFilter: false,
    selects: [
      { name: 'status', label: 'Status', options: ['created', 'consumed', 'expired'] },
      { name: 'side', label: 'Side', options: ['buy', 'sell'] },
    ],
    table: columns<QuoteItem>(['Id', 'Side', 'Asset', 'Status', 'GHS', 'Asset amount', 'Rate (GHS)', 'Trade', 'Expires', 'Created'], (q) => [
      objectHref(q.reference),
      q.side,
      `${q.asset} · ${q.network}`,
      statusBadge(q.status),
      money(q.net_fiat_amount),
      money(q.asset_amount, q.asset === 'USDC' ? 'USDC' : 'USDT'),
      String(q.applied_rate),
      objectHref(q.trade_reference),
      when(q.expires_at),
      when(q.created_at),
    ]),
  }),
  collections: listKind({ label: 'Collections', path: '/v1/collections', statusFilter: true, table: (items: CollectionItem[]) => collectionsTable(items, LIST_ID) }),
  payouts: listKind({
    label: 'Payouts',
    path: '/v1/payouts',
    statusFilter: true,
    table: columns<PayoutItem>(['Id', 'Status', 'Amount', 'Channel', 'Provider', 'Created'], (p) => [
      objectHref(p.id),
      statusBadge(p.status),
      p.amount_major ? `GHS ${p.amount_major}` : money(p.amount),
      p.channel ?? '—',
      p.provider ?? '—',
      when(p.created_at),
    ]),
  }),
  bills: listKind({ label: 'Bills', path: '/api/v1/transactions', query: { type: 'bill' }, statusFilter: false, table: transactions }),
};

/** The object lists and the open-by-id form. */
export function objectsPage(routes: DashboardRoutes): void {
  // GET /api/v1/transactions (?type=), /api/v1/trades, /api/v1/trades/quotes, /v1/collections, /v1/payouts: cursor-paged
  routes.page('/dashboard/objects', async (ctx) => {
    const kindName = queryText(ctx, 'kind') ?? 'transactions';
    const kind = KINDS[kindName] ?? KINDS.transactions!;
    const status = kind.statusFilter ? queryText(ctx, 'status') : undefined;
    // A select's value goes to the API only when it is one of the listed options.
    const chosen = Object.fromEntries((kind.selects ?? []).map((f) => [f.name, f.options.find((o) => o === queryText(ctx, f.name))]));
    const cursor = queryText(ctx, 'cursor');
    const empty = `No ${kind.label.toLowerCase()}${status ? ` with status ${status}` : ''}${Object.entries(chosen)
      .filter(([, v]) => v)
      .map(([k, v]) => ` with ${k} ${v}`)
      .join('')}.`;
    const { answer, list } = await kind.read(ctx, { status, ...chosen, cursor, page_size: '20' }, empty);
    const tabs = html`<nav class="tabs" aria-label="Object kinds"><ul>${Object.entries(KINDS).map(
      ([name, k]) => html`<li><a href="${href('/dashboard/objects', { kind: name })}" id="kind-${name}"${name === kindName ? html` aria-current="page"` : ''}>${k.label}</a></li>`,
    )}</ul></nav>`;
    const filters = html`<form method="get" action="/dashboard/objects" class="filters" id="object-filters">
  <input type="hidden" name="kind" value="${kindName}">
  ${kind.statusFilter ? html`<div class="field"><label for="filter-status">Status</label><input id="filter-status" name="status" value="${status ?? ''}" placeholder="e.g. settled"></div>` : ''}
  ${(kind.selects ?? []).map(
    (f) =>
      html`<div class="field"><label for="filter-${f.name}">${f.label}</label><select id="filter-${f.name}" name="${f.name}"><option value="">Any</option>${f.options.map((o) => html`<option value="${o}"${chosen[f.name] === o ? ' selected' : ''}>${o}</option>`)}</select></div>`,
  )}
  ${kind.statusFilter || kind.selects ? html`<button type="submit" class="small" id="filter-submit">Filter</button>` : ''}
</form>
<form method="get" action="/dashboard/objects/find" class="filters" id="object-find">
  <div class="field"><label for="find-id">Open an object by id</label><input id="find-id" name="id" placeholder="chg_…, trf_…, qt_…, col_…" required></div>
  <button type="submit" class="small">Open</button>
</form>`;
    ctx.render(
      { title: 'Objects', page: 'objects' },
      html`${tabs}<section class="card">${filters}${list}${answer.ok ? pager('/dashboard/objects', { kind: kindName, status, ...chosen }, answer.meta?.next_cursor) : ''}
<p class="maps">GET ${kind.path}${kind.query ? `?type=${kind.query.type}` : ''}</p></section>`,
    );
  });

  routes.page('/dashboard/objects/find', async (ctx) => {
    const id = (queryText(ctx, 'id') ?? '').trim();
    if (!OBJECT_ID.test(id)) return ctx.done('/dashboard/objects', { kind: 'error', text: 'That is not an object id (chg_…, trf_…, trd_…, qt_…, col_…, po_…, bil_…).' });
    ctx.res.redirect(303, `/dashboard/objects/${id}`);
  });
}
