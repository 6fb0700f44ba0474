import { parseMajorAmount } from '../kernel/money.ts';
import type { ApiAnswer } from './api-client.ts';
import type { DashboardRoutes, PageContext } from './page-context.ts';
import { actionButton, apiProblem, csrfField, money, pager, secretOnce, statusBadge, table, when } from './dashboard-layout.ts';
import { randomToken } from './dashboard-sessions.ts';
import { href, html, type Html } from './html.ts';

// The dashboard's pages and actions. Each reads and writes through the public API (ctx.api with
// the session's key); the comment above each action names the API call it makes.

const ID = /^[a-z]{2,4}_[0-9a-z]{6,40}$/;
const field = (ctx: PageContext, name: string): string => {
  const value = ctx.req.body?.[name];
  return typeof value === 'string' ? value.trim() : '';
};
const queryText = (ctx: PageContext, name: string): string | undefined => {
  const value = ctx.req.query[name];
  return typeof value === 'string' && value !== '' ? value.slice(0, 200) : undefined;
};
/** A fresh Idempotency-Key per rendered form: submitting the same form twice is one request. */
const idemField = () => html`<input type="hidden" name="idem" value="${randomToken(18)}">`;
const idemOf = (ctx: PageContext) => {
  const idem = field(ctx, 'idem');
  return /^[A-Za-z0-9_-]{8,64}$/.test(idem) ? `dash-${idem}` : `dash-${randomToken(18)}`;
};
const json = (value: unknown) => JSON.stringify(value, null, 2);
const objectHref = (id: string | null | undefined) => (id ? html`<a href="/dashboard/objects/${id}">${id}</a>` : html`—`);

export function registerPages(routes: DashboardRoutes): void {
  registerLadder(routes);
  registerWallet(routes);
  registerObjects(routes);
  registerWebhooks(routes);
  registerRequests(routes);
  registerDevelopers(routes);
  registerSandbox(routes);
}

// ---------------------------------------------------------------- service ladder

interface Merchant {
  id: string;
  name: string;
  stage: 'none' | 'requested' | 'sandbox' | 'live';
  environments: Record<'test' | 'live', { enabled: boolean; unlocks: string[] }>;
  next_action: 'request_access' | 'enable_sandbox' | 'go_live' | null;
  compliance: { trading_allowed: boolean; reason: string | null };
}

const LADDER: { action: 'request_access' | 'enable_sandbox' | 'go_live'; label: string; reaches: Merchant['stage']; explains: string }[] = [
  { action: 'request_access', label: 'Request access', reaches: 'requested', explains: 'Tells the service team who you are; nothing moves money yet.' },
  { action: 'enable_sandbox', label: 'Enable sandbox', reaches: 'sandbox', explains: 'Test keys, the simulated providers and the sandbox controls.' },
  { action: 'go_live', label: 'Go live', reaches: 'live', explains: 'Live keys: real charges, transfers and trades with real money.' },
];
const STAGE_ORDER: Merchant['stage'][] = ['none', 'requested', 'sandbox', 'live'];

function registerLadder(routes: DashboardRoutes): void {
  // GET /api/v1/merchant
  routes.page('/dashboard', async (ctx) => {
    const answer = await ctx.api.get<Merchant>('/api/v1/merchant', {}, ctx.call);
    if (!answer.ok) return ctx.render({ title: 'Service ladder', page: 'home' }, apiProblem(answer, 'The merchant could not be read'));
    const m = answer.data;
    const reached = STAGE_ORDER.indexOf(m.stage);
    const steps = LADDER.map((step, i) => {
      const done = reached >= STAGE_ORDER.indexOf(step.reaches);
      const next = m.next_action === step.action;
      const unlocks = step.action === 'enable_sandbox' ? m.environments.test.unlocks : step.action === 'go_live' ? m.environments.live.unlocks : [];
      return html`<li class="step ${done ? 'done' : next ? 'next' : 'later'}" data-action="${step.action}">
  <div class="step-head"><span class="step-no" aria-hidden="true">${done ? '✓' : i + 1}</span><h3>${step.label}</h3>${done ? html`<span class="badge good">done</span>` : next ? html`<span class="badge wait">next</span>` : ''}</div>
  <p>${step.explains}</p>
  ${unlocks.length ? html`<p class="unlocks"><strong>Unlocks:</strong></p><ul class="unlock-list">${unlocks.map((u) => html`<li>${u}</li>`)}</ul>` : ''}
  ${next ? actionButton(ctx.session, '/dashboard/ladder', step.label, { fields: { action: step.action }, id: `ladder-${step.action}` }) : ''}
</li>`;
    });
    const compliance = m.compliance.trading_allowed
      ? html`<p class="flash ok" id="compliance">Trading is allowed for ${ctx.key.environment} keys: quotes and trades are accepted.</p>`
      : html`<div class="flash error" id="compliance" role="note"><strong>Trading is refused with <code>compliance_block</code> (403).</strong> ${m.compliance.reason ?? 'The compliance checks for this merchant are not complete.'} Quotes and trades answer <code>403 compliance_block</code> until this is resolved; funding, withdrawals and webhooks keep working.</div>`;
    ctx.render(
      { title: 'Service ladder', page: 'home' },
      html`<section class="card">
  <p class="lead"><strong>${m.name}</strong> <code>${m.id}</code> is at stage <span id="stage">${statusBadge(m.stage)}</span></p>
  <table class="compact" id="environments"><thead><tr><th scope="col">Environment</th><th scope="col">Enabled</th><th scope="col">What it unlocks</th></tr></thead>
  <tbody>${(['test', 'live'] as const).map((env) => html`<tr><th scope="row">${env}</th><td>${m.environments[env].enabled ? statusBadge('enabled') : html`<span class="badge neutral">not yet</span>`}</td><td>${m.environments[env].unlocks.join(', ') || '—'}</td></tr>`)}</tbody></table>
</section>
<section class="card"><h2>Steps</h2><ol class="ladder">${steps}</ol></section>
<section class="card"><h2>Trading compliance</h2>${compliance}</section>`,
    );
  });

  // POST /api/v1/merchant/ladder {action}
  routes.action('/dashboard/ladder', async (ctx) => {
    const action = field(ctx, 'action');
    const answer = await ctx.api.post<Merchant>('/api/v1/merchant/ladder', { action }, ctx.call);
    ctx.done('/dashboard', answer.ok ? { kind: 'ok', text: `Done: ${action.replace(/_/g, ' ')}. Stage is now ${answer.data.stage}.` } : ctx.refusal(answer, 'The ladder did not move'));
  });
}

// ---------------------------------------------------------------- wallet

interface TransactionItem {
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

function registerWallet(routes: DashboardRoutes): void {
  // GET /api/v1/wallet, GET /api/v1/transactions, GET /v1/collections
  routes.page('/dashboard/wallet', async (ctx) => {
    const [wallet, recent, collections] = await Promise.all([
      ctx.api.get<{ available: number; reserved: number }>('/api/v1/wallet', {}, ctx.call),
      ctx.api.get<TransactionItem[]>('/api/v1/transactions', { page_size: '10' }, ctx.call),
      ctx.api.get<any[]>('/v1/collections', { page_size: '5' }, ctx.call),
    ]);
    const test = ctx.key.environment === 'test';
    const balance = wallet.ok
      ? html`<div class="balances" id="balances">
  <div class="balance"><span>Available</span><strong id="available">${money(wallet.data.available)}</strong></div>
  <div class="balance"><span>Reserved</span><strong id="reserved">${money(wallet.data.reserved)}</strong><small>held for pending withdrawals</small></div>
</div>`
      : apiProblem(wallet, 'The wallet could not be read');
    const hints = test
      ? html`<p class="hint">Sandbox numbers: <code>0551234987</code> succeeds, <code>0551234988</code> fails (insufficient funds), <code>0551234989</code> times out at MTN and fails over to Hubtel.</p>`
      : '';
    ctx.render(
      { title: 'Wallet', page: 'wallet' },
      html`<section class="card">${balance}</section>
<div class="grid">
<section class="card">
  <h2>Fund by mobile money</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-momo">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="momo">
    <div class="field"><label for="momo-amount">Amount (GHS)</label><input id="momo-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="momo-msisdn">Mobile money number</label><input id="momo-msisdn" name="msisdn" inputmode="tel" required placeholder="0551234987"></div>
    ${hints}
    <button type="submit" id="fund-momo-submit">Charge the number</button>
  </form>
  <p class="maps">POST /api/v1/charges</p>
</section>
<section class="card">
  <h2>Fund by card</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-card">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="card">
    <div class="field"><label for="card-amount">Amount (GHS)</label><input id="card-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="card-number">Card number</label><input id="card-number" name="card" inputmode="numeric" autocomplete="off" required placeholder="4084 0840 8408 4081"></div>
    ${test ? html`<p class="hint">Test cards: <code>4084 0840 8408 4081</code> pays, <code>4000 0000 0000 3410</code> asks for OTP <code>123456</code>.</p>` : ''}
    <button type="submit" id="fund-card-submit">Collect by card</button>
  </form>
  <p class="maps">POST /v1/collections (channel card)</p>
</section>
<section class="card">
  <h2>Fund by bank</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-bank">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="bank">
    <div class="field"><label for="bank-amount">Amount (GHS)</label><input id="bank-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="bank-account">Account number</label><input id="bank-account" name="account_number" inputmode="numeric" required placeholder="0012345678"></div>
    <div class="field"><label for="bank-code">Bank code (GhIPSS)</label><input id="bank-code" name="bank_code" inputmode="numeric" required placeholder="040100"></div>
    <button type="submit" id="fund-bank-submit">Collect by bank debit</button>
  </form>
  <p class="maps">POST /v1/collections (channel bank)</p>
</section>
<section class="card">
  <h2>Withdraw</h2>
  <form method="post" action="/dashboard/wallet/withdraw" id="withdraw">
    ${csrfField(ctx.session)}${idemField()}
    <fieldset><legend>To</legend>
      <label class="radio"><input type="radio" name="channel" value="momo" checked> Mobile money</label>
      <label class="radio"><input type="radio" name="channel" value="bank"> Bank account</label>
    </fieldset>
    <div class="field"><label for="wd-amount">Amount (GHS)</label><input id="wd-amount" name="amount" inputmode="decimal" required placeholder="20.00"></div>
    <div class="field"><label for="wd-msisdn">Mobile money number (momo)</label><input id="wd-msisdn" name="msisdn" inputmode="tel" placeholder="0551234987"></div>
    <div class="field"><label for="wd-account">Account number (bank)</label><input id="wd-account" name="account_number" inputmode="numeric"></div>
    <div class="field"><label for="wd-bank">Bank code (bank)</label><input id="wd-bank" name="bank_code" inputmode="numeric" placeholder="040100"></div>
    <div class="field"><label for="wd-name">Account name (bank)</label><input id="wd-name" name="bank_account_name"></div>
    ${ctx.key.signingSecret ? '' : html`<p class="hint warn">Withdrawals are signed requests: sign in again with this key's signing secret to send one.</p>`}
    <button type="submit" id="withdraw-submit">Send transfer</button>
  </form>
  <p class="maps">POST /api/v1/transfers (signed)</p>
</section>
</div>
<section class="card"><h2>Recent transactions</h2>
${recent.ok ? transactionsTable(recent.data, 'recent-transactions') : apiProblem(recent, 'Transactions could not be read')}
<p><a href="/dashboard/objects">All objects →</a></p></section>
<section class="card"><h2>Recent collections (card and bank)</h2>
${collections.ok ? collectionsTable(collections.data, 'recent-collections') : apiProblem(collections, 'Collections could not be read')}</section>`,
    );
  });

  // momo: POST /api/v1/charges; card and bank: POST /v1/collections
  routes.action('/dashboard/wallet/fund', async (ctx) => {
    const channel = field(ctx, 'channel');
    const amount = parseMajorAmount(field(ctx, 'amount'), 'GHS');
    if (!amount.ok) return ctx.done('/dashboard/wallet', { kind: 'error', text: `Amount ${amount.reason}. Nothing was sent.` });
    const call = { ...ctx.call, idempotencyKey: idemOf(ctx) };
    let answer: ApiAnswer<{ id: string; status: string }>;
    if (channel === 'momo') {
      answer = await ctx.api.post('/api/v1/charges', { amount: amount.minor, currency: 'GHS', channel: 'momo', msisdn: field(ctx, 'msisdn') }, call);
    } else if (channel === 'card' || channel === 'bank') {
      const customer = channel === 'card' ? field(ctx, 'card') : { account_number: field(ctx, 'account_number'), bank_code: field(ctx, 'bank_code') };
      answer = await ctx.api.post('/v1/collections', { amount: field(ctx, 'amount'), currency: 'GHS', channel, customer, description: 'Wallet funding from the dashboard' }, call);
    } else {
      return ctx.done('/dashboard/wallet', { kind: 'error', text: 'Choose momo, card or bank.' });
    }
    if (!answer.ok) return ctx.done('/dashboard/wallet', ctx.refusal(answer, 'The funding was refused'));
    ctx.done(`/dashboard/objects/${answer.data.id}`, { kind: 'ok', text: `${answer.data.id} created: ${answer.data.status}. It stays pending until the provider's callback.` });
  });

  // POST /api/v1/transfers, signed with the key's signing secret
  routes.action('/dashboard/wallet/withdraw', async (ctx) => {
    if (!ctx.key.signingSecret) return ctx.done('/dashboard/wallet', { kind: 'error', text: 'Withdrawals are signed: sign in again with the signing secret of this key. Nothing was sent.' });
    const amount = parseMajorAmount(field(ctx, 'amount'), 'GHS');
    if (!amount.ok) return ctx.done('/dashboard/wallet', { kind: 'error', text: `Amount ${amount.reason}. Nothing was sent.` });
    const channel = field(ctx, 'channel') === 'bank' ? 'bank' : 'momo';
    const body =
      channel === 'momo'
        ? { amount: amount.minor, currency: 'GHS', channel, msisdn: field(ctx, 'msisdn') }
        : { amount: amount.minor, currency: 'GHS', channel, account_number: field(ctx, 'account_number'), bank_code: field(ctx, 'bank_code'), bank_account_name: field(ctx, 'bank_account_name') };
    const answer = await ctx.api.post<{ id: string; status: string }>('/api/v1/transfers', body, { ...ctx.call, idempotencyKey: idemOf(ctx), signingSecret: ctx.key.signingSecret });
    if (!answer.ok) return ctx.done('/dashboard/wallet', ctx.refusal(answer, 'The withdrawal was refused'));
    ctx.done(`/dashboard/objects/${answer.data.id}`, { kind: 'ok', text: `${answer.data.id} created: ${answer.data.status}. It stays pending until the provider's callback.` });
  });
}

function transactionsTable(items: TransactionItem[], id: string): Html {
  return table(
    ['Id', 'Type', 'Direction', 'Status', 'Amount', 'Fees', 'Channel', 'Provider', 'Created'],
    items.map((t) => [objectHref(t.id), t.type, t.direction, statusBadge(t.status), money(t.amount), money(t.fees), t.channel, t.provider ?? '—', when(t.created_at)]),
    { id, empty: 'No transactions yet.' },
  );
}

function collectionsTable(items: any[], id: string): Html {
  return table(
    ['Id', 'Status', 'Amount', 'Channel', 'Provider', 'Created'],
    items.map((c) => [objectHref(c.id), statusBadge(c.status), c.amount_major ? `GHS ${c.amount_major}` : money(c.amount), c.channel, c.provider ?? '—', when(c.created_at)]),
    { id, empty: 'No collections yet.' },
  );
}

// ---------------------------------------------------------------- objects

interface ListKind {
  label: string;
  path: string;
  query?: Record<string, string>;
  statusFilter: boolean;
  /** Filters chosen from a list (the API's own values), each a query parameter of the list. */
  selects?: { name: string; label: string; options: string[] }[];
  columns: string[];
  row(item: any): Html[] | (Html | string)[];
}

const KINDS: Record<string, ListKind> = {
  transactions: { label: 'Transactions', path: '/api/v1/transactions', statusFilter: false, columns: [], row: () => [] },
  charges: { label: 'Charges', path: '/api/v1/transactions', query: { type: 'charge' }, statusFilter: false, columns: [], row: () => [] },
  transfers: { label: 'Transfers', path: '/api/v1/transactions', query: { type: 'transfer' }, statusFilter: false, columns: [], row: () => [] },
  trades: {
    label: 'Trades',
    path: '/api/v1/trades',
    statusFilter: true,
    columns: ['Id', 'Side', 'Asset', 'Status', 'Amount', 'Created'],
    row: (t) => [objectHref(t.reference), t.side ?? '—', t.asset ?? '—', statusBadge(t.status), typeof t.net_fiat_amount === 'number' ? money(t.net_fiat_amount) : '—', when(t.created_at)],
  },
  quotes: {
    label: 'Quotes',
    path: '/api/v1/trades/quotes',
    statusFilter: false,
    selects: [
      { name: 'status', label: 'Status', options: ['created', 'consumed', 'expired'] },
      { name: 'side', label: 'Side', options: ['buy', 'sell'] },
    ],
    columns: ['Id', 'Side', 'Asset', 'Status', 'GHS', 'Asset amount', 'Rate (GHS)', 'Trade', 'Expires', 'Created'],
    row: (q) => [
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
    ],
  },
  collections: { label: 'Collections', path: '/v1/collections', statusFilter: true, columns: [], row: () => [] },
  payouts: {
    label: 'Payouts',
    path: '/v1/payouts',
    statusFilter: true,
    columns: ['Id', 'Status', 'Amount', 'Channel', 'Provider', 'Created'],
    row: (p) => [objectHref(p.id), statusBadge(p.status), p.amount_major ? `GHS ${p.amount_major}` : money(p.amount), p.channel ?? '—', p.provider ?? '—', when(p.created_at)],
  },
  bills: { label: 'Bills', path: '/api/v1/transactions', query: { type: 'bill' }, statusFilter: false, columns: [], row: () => [] },
};

/** Where one object is read, by its id's prefix. */
const OBJECT_PATHS: Record<string, string> = {
  chg: '/api/v1/charges/',
  trf: '/api/v1/transfers/',
  trd: '/api/v1/trades/',
  qt: '/api/v1/trades/quotes/',
  col: '/v1/collections/',
  po: '/v1/payouts/',
  bil: '/v1/bills/',
  evt: '/api/v1/events/',
  wd: '/api/v1/webhook_deliveries/',
};

function registerObjects(routes: DashboardRoutes): void {
  // GET /api/v1/transactions (?type=), /api/v1/trades, /api/v1/trades/quotes, /v1/collections, /v1/payouts: cursor-paged
  routes.page('/dashboard/objects', async (ctx) => {
    const kindName = queryText(ctx, 'kind') ?? 'transactions';
    const kind = KINDS[kindName] ?? KINDS.transactions!;
    const status = kind.statusFilter ? queryText(ctx, 'status') : undefined;
    // A select's value goes to the API only when it is one of the listed options.
    const chosen = Object.fromEntries((kind.selects ?? []).map((f) => [f.name, f.options.find((o) => o === queryText(ctx, f.name))]));
    const cursor = queryText(ctx, 'cursor');
    const answer = await ctx.api.get<any[]>(kind.path, { ...kind.query, status, ...chosen, cursor, page_size: '20' }, ctx.call);
    const tabs = html`<nav class="tabs" aria-label="Object kinds"><ul>${Object.entries(KINDS).map(
      ([name, k]) => html`<li><a href="${href('/dashboard/objects', { kind: name })}" id="kind-${name}"${name === kindName ? html` aria-current="page"` : ''}>${k.label}</a></li>`,
    )}</ul></nav>`;
    const filters = html`<form method="get" action="/dashboard/objects" class="filters" id="object-filters">
  <input type="hidden" name="kind" value="${kindName}">
  ${kind.statusFilter ? html`<div class="field"><label for="filter-status">Status</label><input id="filter-status" name="status" value="${status ?? ''}" placeholder="e.g. settled"></div>` : ''}
  ${(kind.selects ?? []).map(
    (f) => html`<div class="field"><label for="filter-${f.name}">${f.label}</label><select id="filter-${f.name}" name="${f.name}"><option value="">Any</option>${f.options.map((o) => html`<option value="${o}"${chosen[f.name] === o ? ' selected' : ''}>${o}</option>`)}</select></div>`,
  )}
  ${kind.statusFilter || kind.selects ? html`<button type="submit" class="small" id="filter-submit">Filter</button>` : ''}
</form>
<form method="get" action="/dashboard/objects/find" class="filters" id="object-find">
  <div class="field"><label for="find-id">Open an object by id</label><input id="find-id" name="id" placeholder="chg_…, trf_…, qt_…, col_…" required></div>
  <button type="submit" class="small">Open</button>
</form>`;
    let list: Html;
    if (!answer.ok) list = apiProblem(answer, `${kind.label} could not be read`);
    else if (kind.path === '/api/v1/transactions') list = transactionsTable(answer.data, 'object-list');
    else if (kind.path === '/v1/collections') list = collectionsTable(answer.data, 'object-list');
    else list = table(kind.columns, answer.data.map(kind.row), { id: 'object-list', empty: `No ${kind.label.toLowerCase()}${status ? ` with status ${status}` : ''}${Object.entries(chosen).filter(([, v]) => v).map(([k, v]) => ` with ${k} ${v}`).join('')}.` });
    ctx.render(
      { title: 'Objects', page: 'objects' },
      html`${tabs}<section class="card">${filters}${list}${answer.ok ? pager('/dashboard/objects', { kind: kindName, status, ...chosen }, answer.meta?.next_cursor) : ''}
<p class="maps">GET ${kind.path}${kind.query ? `?type=${kind.query.type}` : ''}</p></section>`,
    );
  });

  routes.page('/dashboard/objects/find', async (ctx) => {
    const id = (queryText(ctx, 'id') ?? '').trim();
    if (!ID.test(id)) return ctx.done('/dashboard/objects', { kind: 'error', text: 'That is not an object id (chg_…, trf_…, trd_…, qt_…, col_…, po_…, bil_…).' });
    ctx.res.redirect(303, `/dashboard/objects/${id}`);
  });

  // GET the object (by prefix) and GET /api/v1/objects/:id/timeline
  routes.page('/dashboard/objects/:id', async (ctx) => {
    const id = String(ctx.req.params.id);
    const live = await objectLive(ctx, id);
    if (!live) return ctx.render({ title: 'Object not found', page: 'objects', status: 404, flash: { kind: 'error', text: `No object ${id} for this key's environment.` } }, html`<p><a href="/dashboard/objects">Back to the objects</a></p>`);
    ctx.render(
      { title: `Object ${id}`, page: 'objects' },
      html`<p><a href="/dashboard/objects">← Objects</a></p>
<div id="object-live" data-live-fragment="/dashboard/objects/${id}/live" aria-busy="false">${live}</div>
<p class="live-note muted" id="live-note">This page updates as events happen.</p>
<p id="live-status" class="visually-hidden" role="status" aria-live="polite"></p>`,
    );
  });

  routes.page('/dashboard/objects/:id/live', async (ctx) => {
    const live = await objectLive(ctx, String(ctx.req.params.id));
    ctx.res.status(live ? 200 : 404).type('html').send(live ? live.text : '');
  });

  // POST /v1/collections/:id/otp
  routes.action('/dashboard/objects/:id/otp', async (ctx) => {
    const id = String(ctx.req.params.id);
    if (!ID.test(id)) return ctx.done('/dashboard/objects', { kind: 'error', text: 'Unknown object.' });
    const answer = await ctx.api.post<{ status: string }>(`/v1/collections/${id}/otp`, { otp: field(ctx, 'otp') }, ctx.call);
    ctx.done(`/dashboard/objects/${id}`, answer.ok ? { kind: 'ok', text: `OTP sent: the collection is ${answer.data.status}.` } : ctx.refusal(answer, 'The OTP was refused'));
  });
}

interface TimelineEntry {
  at: string;
  kind: string;
  title: string;
  details: Record<string, unknown>;
}

/** The object's summary and timeline: the part of its page that live updates replace. */
async function objectLive(ctx: PageContext, id: string): Promise<Html | null> {
  if (!ID.test(id)) return null;
  const prefix = id.slice(0, id.indexOf('_'));
  const path = OBJECT_PATHS[prefix];
  const [object, timeline] = await Promise.all([
    path ? ctx.api.get<Record<string, any>>(`${path}${id}`, {}, ctx.call) : Promise.resolve(null),
    ctx.api.get<{ object: string; status: string; entries: TimelineEntry[] }>(`/api/v1/objects/${id}/timeline`, {}, ctx.call),
  ]);
  if ((!object || object.status === 404) && timeline.status === 404) return null;
  const data = object?.ok ? object.data : null;
  const status = data?.status ?? (timeline.ok ? timeline.data.status : null);
  const facts: [string, Html | string][] = data?.object === 'quote' || data?.object === 'trade'
    ? [
        ['Status', statusBadge(status)],
        ['Side', data.side],
        ['Asset', `${data.asset} · ${data.network}`],
        ['GHS', money(data.settled_fiat_amount ?? data.net_fiat_amount)],
        ['Asset amount', money(data.asset_amount, data.asset === 'USDC' ? 'USDC' : 'USDT')],
        ['Rate (GHS)', String(data.applied_rate)],
        data.object === 'quote' ? ['Trade', objectHref(data.trade_reference)] : ['Quote', objectHref(data.quote_reference)],
        data.object === 'quote' ? ['Expires', when(data.expires_at)] : ['Failure', data.failure_reason ?? '—'],
        ['Created', when(data.created_at)],
      ]
    : data
    ? [
        ['Status', statusBadge(status)],
        ['Amount', data.amount_major ? `GHS ${data.amount_major}` : typeof data.amount === 'number' ? money(data.amount) : '—'],
        ['Channel', data.channel ?? '—'],
        ['Provider', data.provider ?? '—'],
        ['Failure', data.failure_reason ?? '—'],
        ['Created', when(data.created_at)],
        ['Updated', when(data.updated_at)],
      ]
    : [['Status', statusBadge(status)]];
  const otp =
    data?.next_action?.type === 'otp'
      ? html`<form method="post" action="/dashboard/objects/${id}/otp" class="card" id="otp-form">${csrfField(ctx.session)}
  <p>${data.next_action.message ?? 'Enter the one-time password'}</p>
  <div class="field"><label for="otp">One-time password</label><input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit">Submit OTP</button></form>`
      : '';
  return html`<section class="card" id="object-summary" data-object-status="${status ?? ''}">
  <h2>${data?.object ?? (timeline.ok ? timeline.data.object : prefix)} <code>${id}</code></h2>
  <dl class="facts">${facts.map(([k, v]) => html`<div><dt>${k}</dt><dd${k === 'Status' ? html` id="object-status"` : ''}>${v}</dd></div>`)}</dl>
  ${data ? html`<details><summary>Raw object (JSON)</summary><pre>${json(data)}</pre></details>` : object && !object.ok && object.status !== 404 ? apiProblem(object, 'The object could not be read') : ''}
</section>
${otp}
<section class="card"><h2>Timeline</h2>${timeline.ok ? timelineList(timeline.data.entries) : apiProblem(timeline, 'The timeline could not be read')}
<p class="maps">GET /api/v1/objects/${id}/timeline</p></section>`;
}

function timelineList(all: TimelineEntry[]): Html {
  // Reads of the object (this page's own among them) change nothing in its life: counted, not listed.
  const entries = all.filter((e) => !(e.kind === 'request' && /^(GET|HEAD) /.test(e.title)));
  const reads = all.length - entries.length;
  if (!entries.length) return html`<p class="empty">Nothing has happened to this object yet.</p>`;
  return html`${reads ? html`<p class="muted" id="reads-hidden">${reads} read${reads === 1 ? '' : 's'} of this object (GET requests) not shown; the Requests page lists them.</p>` : ''}<ol class="timeline" id="timeline">${entries.map(
    (e) => html`<li class="entry kind-${e.kind}" data-kind="${e.kind}">
  <div class="entry-head">${when(e.at)} <span class="kind">${e.kind.replace(/_/g, ' ')}</span></div>
  <p class="entry-title">${e.title}</p>
  ${entryFacts(e)}
  ${Object.keys(e.details ?? {}).length ? html`<details><summary>Details</summary><pre>${json(e.details)}</pre></details>` : ''}
</li>`,
  )}</ol>`;
}

/** The facts of an entry worth seeing without opening its details, by kind. */
function entryFacts(e: TimelineEntry): Html {
  const d = e.details ?? {};
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);
  const facts: (Html | string)[] = [];
  const ms = text(d.latency_ms);
  if (e.kind === 'request' && text(d.idempotency_key)) facts.push(html`Idempotency-Key <code>${text(d.idempotency_key)}</code>`);
  if (text(d.status) && e.kind === 'request') facts.push(`answered ${text(d.status)}`);
  if (e.kind === 'failover' && text(d.reason)) facts.push(`because of a ${text(d.reason)}`);
  if (text(d.detail)) facts.push(text(d.detail)!);
  if (e.kind === 'delivery_attempt') {
    if (text(d.trigger)) facts.push(text(d.trigger)!);
    if (text(d.response_excerpt) ?? text(d.error)) facts.push(html`response <code>${text(d.response_excerpt) ?? text(d.error)}</code>`);
  }
  if (e.kind === 'mock_call' && d.match && typeof d.match === 'object') facts.push(matchCell(d.match as InspectedRequest['match']));
  if (ms) facts.push(`${ms} ms`);
  const postings = Array.isArray(d.postings) ? (d.postings as { account: string; currency: 'GHS' | 'USDT' | 'USDC'; amount: number }[]) : [];
  const facts_ = facts.length ? html`<p class="entry-facts">${facts.map((f, i) => html`${i ? ' · ' : ''}${f}`)}</p>` : html``;
  if (!postings.length) return facts_;
  return html`${facts_}<table class="postings compact"><thead><tr><th scope="col">Account</th><th scope="col">Posting</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td><code>${p.account}</code></td><td class="num">${p.amount < 0 ? '−' : '+'}${money(Math.abs(p.amount), p.currency)}</td></tr>`)}</tbody></table>`;
}

// ---------------------------------------------------------------- webhooks

interface Endpoint {
  id: string;
  url: string;
  event_types: string[] | null;
  enabled: boolean;
  failing: boolean;
  created_at: string;
}
interface Attempt {
  attempt: number;
  trigger: string;
  at: string;
  http_status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  attempt_log: Attempt[];
}

function registerWebhooks(routes: DashboardRoutes): void {
  // GET /api/v1/webhook_endpoints and GET /api/v1/webhook_deliveries
  routes.page('/dashboard/webhooks', async (ctx) => {
    const [endpoints, deliveries] = await Promise.all([ctx.api.get<Endpoint[]>('/api/v1/webhook_endpoints', {}, ctx.call), deliveriesFragment(ctx)]);
    const endpointRows = endpoints.ok
      ? table(
          ['Id', 'URL', 'Events', 'State', 'Actions'],
          endpoints.data.map((e) => [
            html`<code>${e.id}</code>`,
            html`<span class="url">${e.url}</span>`,
            e.event_types?.join(', ') ?? 'all',
            html`${statusBadge(e.enabled ? 'enabled' : 'disabled')} ${e.failing ? statusBadge('failing') : ''}`,
            html`<div class="actions">
  ${e.enabled
    ? actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/disable`, 'Disable', { id: `disable-${e.id}` })
    : actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/enable`, 'Enable', { id: `enable-${e.id}` })}
  ${actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/rotate`, 'Rotate secret', { id: `rotate-${e.id}` })}
  ${actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/delete`, 'Delete', { danger: true, id: `delete-${e.id}` })}
</div>`,
          ]),
          { id: 'endpoints', empty: 'No webhook endpoints yet.' },
        )
      : apiProblem(endpoints, 'Webhook endpoints could not be read');
    const endpointOptions = endpoints.ok ? endpoints.data : [];
    ctx.render(
      { title: 'Webhooks', page: 'webhooks' },
      html`<section class="card"><h2>Endpoints</h2>${endpointRows}
<details class="add"><summary id="add-endpoint">Add an endpoint</summary>
<form method="post" action="/dashboard/webhooks/endpoints" id="endpoint-form">${csrfField(ctx.session)}
  <div class="field"><label for="endpoint-url">URL</label><input id="endpoint-url" name="url" type="url" required placeholder="https://example.com/webhooks"></div>
  <div class="field"><label for="endpoint-events">Event types <span class="muted">(comma-separated; empty for all)</span></label><input id="endpoint-events" name="event_types" placeholder="charge.success, transfer.failed"></div>
  <button type="submit" id="endpoint-create">Create endpoint</button>
</form></details>
<p class="maps">POST /api/v1/webhook_endpoints · POST …/:id/disable, …/:id/enable · POST …/:id/rotate_secret · DELETE …/:id</p></section>
<section class="card"><h2>Replay failed deliveries</h2>
<form method="post" action="/dashboard/webhooks/replay" id="replay-form" class="filters">${csrfField(ctx.session)}
  <div class="field"><label for="replay-endpoint">Endpoint</label><select id="replay-endpoint" name="endpoint_id" required>${endpointOptions.map((e) => html`<option value="${e.id}">${e.url}</option>`)}</select></div>
  <div class="field"><label for="replay-from">From (UTC)</label><input id="replay-from" name="from" type="datetime-local" step="1"></div>
  <div class="field"><label for="replay-to">To (UTC)</label><input id="replay-to" name="to" type="datetime-local" step="1"></div>
  <button type="submit" class="small" id="replay-submit">Replay failed</button>
</form>
<p class="maps">POST /api/v1/webhook_endpoints/:id/replay_failed</p></section>
<section class="card"><h2>Delivery log</h2>
<form method="get" action="/dashboard/webhooks" class="filters" id="delivery-filters">
  <div class="field"><label for="filter-endpoint">Endpoint</label><select id="filter-endpoint" name="endpoint_id"><option value="">All</option>${endpointOptions.map((e) => html`<option value="${e.id}"${queryText(ctx, 'endpoint_id') === e.id ? html` selected` : ''}>${e.url}</option>`)}</select></div>
  <div class="field"><label for="filter-delivery-status">Status</label><select id="filter-delivery-status" name="status">${['', 'pending', 'delivered', 'failed'].map((s) => html`<option value="${s}"${queryText(ctx, 'status') === s ? html` selected` : ''}>${s || 'All'}</option>`)}</select></div>
  <button type="submit" class="small">Filter</button>
</form>
<div id="deliveries" data-live-fragment="${href('/dashboard/webhooks/deliveries', { endpoint_id: queryText(ctx, 'endpoint_id'), status: queryText(ctx, 'status'), cursor: queryText(ctx, 'cursor') })}" aria-busy="false">${deliveries}</div>
<p id="live-status" class="visually-hidden" role="status" aria-live="polite"></p>
<p class="live-note muted">The log updates as events happen. GET /api/v1/webhook_deliveries · POST /api/v1/webhook_deliveries/:id/redeliver</p></section>`,
    );
  });

  routes.page('/dashboard/webhooks/deliveries', async (ctx) => {
    ctx.res.status(200).type('html').send((await deliveriesFragment(ctx)).text);
  });

  // POST /api/v1/webhook_endpoints
  routes.action('/dashboard/webhooks/endpoints', async (ctx) => {
    const types = field(ctx, 'event_types').split(/[,\s]+/).filter(Boolean);
    const answer = await ctx.api.post<Endpoint & { secret: string }>('/api/v1/webhook_endpoints', { url: field(ctx, 'url'), ...(types.length ? { event_types: types } : {}) }, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/webhooks', ctx.refusal(answer, 'The endpoint was not created'));
    ctx.render({ title: 'Webhook endpoint created', page: 'webhooks', flash: { kind: 'ok', text: `Endpoint ${answer.data.id} created for ${answer.data.url}.` } }, html`${secretOnce('Signing secret (whsec_…).', answer.data.secret, 'new-secret')}<p><a href="/dashboard/webhooks" id="back-to-webhooks">Back to webhooks</a></p>`);
  });

  // POST /api/v1/webhook_endpoints/:id/disable and /enable
  for (const change of ['disable', 'enable'] as const) {
    routes.action(`/dashboard/webhooks/endpoints/:id/${change}`, async (ctx) => {
      const id = String(ctx.req.params.id);
      const answer = await ctx.api.post(`/api/v1/webhook_endpoints/${encodeURIComponent(id)}/${change}`, {}, ctx.call);
      ctx.done('/dashboard/webhooks', answer.ok ? { kind: 'ok', text: `Endpoint ${id} ${change}d.` } : ctx.refusal(answer, `The endpoint was not ${change}d`));
    });
  }

  // DELETE /api/v1/webhook_endpoints/:id
  routes.action('/dashboard/webhooks/endpoints/:id/delete', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.delete(`/api/v1/webhook_endpoints/${encodeURIComponent(id)}`, ctx.call);
    ctx.done('/dashboard/webhooks', answer.ok ? { kind: 'ok', text: `Endpoint ${id} deleted.` } : ctx.refusal(answer, 'The endpoint was not deleted'));
  });

  // POST /api/v1/webhook_endpoints/:id/rotate_secret: the new secret is shown in this answer only
  routes.action('/dashboard/webhooks/endpoints/:id/rotate', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.post<Endpoint & { secret: string }>(`/api/v1/webhook_endpoints/${encodeURIComponent(id)}/rotate_secret`, {}, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/webhooks', ctx.refusal(answer, 'The secret was not rotated'));
    ctx.render({ title: 'Webhook secret rotated', page: 'webhooks', flash: { kind: 'ok', text: `New secret for ${id}; the old one keeps signing during the grace period.` } }, html`${secretOnce('New signing secret.', answer.data.secret, 'new-secret')}<p><a href="/dashboard/webhooks">Back to webhooks</a></p>`);
  });

  // POST /api/v1/webhook_deliveries/:id/redeliver
  routes.action('/dashboard/webhooks/deliveries/:id/redeliver', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.post<Delivery>(`/api/v1/webhook_deliveries/${encodeURIComponent(id)}/redeliver`, undefined, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/webhooks', ctx.refusal(answer, 'The delivery was not redelivered'));
    const last = answer.data.attempt_log[answer.data.attempt_log.length - 1];
    ctx.done('/dashboard/webhooks', { kind: answer.data.status === 'delivered' ? 'ok' : 'error', text: `Redelivered ${id}: ${last?.http_status ?? last?.error ?? 'no answer'}; delivery is ${answer.data.status}.` });
  });

  // POST /api/v1/webhook_endpoints/:id/replay_failed {from?, to?}
  routes.action('/dashboard/webhooks/replay', async (ctx) => {
    const endpoint = field(ctx, 'endpoint_id');
    const range: Record<string, string> = {};
    for (const name of ['from', 'to'] as const) {
      const value = field(ctx, name);
      if (!value) continue;
      const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(value) ? `${value.length === 16 ? `${value}:00` : value}Z` : value;
      range[name] = iso;
    }
    const answer = await ctx.api.post<{ redelivered: number }>(`/api/v1/webhook_endpoints/${encodeURIComponent(endpoint)}/replay_failed`, range, ctx.call);
    ctx.done('/dashboard/webhooks', answer.ok ? { kind: 'ok', text: `Replayed ${answer.data.redelivered} failed deliveries to ${endpoint}.` } : ctx.refusal(answer, 'The replay was refused'));
  });
}

async function deliveriesFragment(ctx: PageContext): Promise<Html> {
  const query = { endpoint_id: queryText(ctx, 'endpoint_id'), status: queryText(ctx, 'status'), cursor: queryText(ctx, 'cursor') };
  const answer = await ctx.api.get<Delivery[]>('/api/v1/webhook_deliveries', { ...query, page_size: '20' }, ctx.call);
  if (!answer.ok) return apiProblem(answer, 'The delivery log could not be read');
  if (!answer.data.length) return html`<p class="empty" id="delivery-log">No deliveries yet.</p>`;
  return html`<ul class="deliveries" id="delivery-log">${answer.data.map(
    (d) => html`<li class="delivery" id="delivery-${d.id}" data-status="${d.status}">
  <div class="delivery-head"><code>${d.id}</code> ${statusBadge(d.status)} <strong>${d.event_type}</strong> <a href="/dashboard/objects/${d.event_id}">${d.event_id}</a> → <code>${d.endpoint_id}</code>
  ${d.next_attempt_at ? html`<span class="muted">next attempt ${when(d.next_attempt_at)}</span>` : ''}
  ${actionButton(ctx.session, `/dashboard/webhooks/deliveries/${d.id}/redeliver`, 'Redeliver', { id: `redeliver-${d.id}` })}</div>
  ${table(
    ['#', 'Trigger', 'At', 'HTTP status', 'Latency', 'Response'],
    d.attempt_log.map((a) => [String(a.attempt), a.trigger, when(a.at), html`<span class="http-status" data-http-status="${a.http_status ?? 'none'}">${a.http_status === null ? html`<span class="badge bad">${a.error ?? 'no answer'}</span>` : statusBadge(String(a.http_status))}</span>`, `${a.latency_ms} ms`, html`<code class="excerpt">${a.response_excerpt ?? a.error ?? ''}</code>`]),
    { empty: 'No attempt yet.' },
  )}
</li>`,
  )}</ul>${pager('/dashboard/webhooks', query, answer.meta?.next_cursor)}`;
}

// ---------------------------------------------------------------- requests inspector

interface InspectedRequest {
  id: string;
  at: string;
  kind: 'merchant' | 'mock';
  method: string;
  path: string;
  status: number | null;
  latency_ms: number;
  idempotency_key: string | null;
  object_id: string | null;
  provider: string | null;
  match: null | { matched: true; file: string; rule_index: number; rule_name: string } | { matched: false; nearest: { file: string; rule_index: number; rule_name: string } | null; failed: string };
}

function registerRequests(routes: DashboardRoutes): void {
  // GET /api/v1/requests
  routes.page('/dashboard/requests', async (ctx) => {
    const query = { kind: queryText(ctx, 'kind'), status: queryText(ctx, 'status'), object_id: queryText(ctx, 'object_id') };
    const answer = await ctx.api.get<InspectedRequest[]>('/api/v1/requests', { ...query, cursor: queryText(ctx, 'cursor'), page_size: '50' }, ctx.call);
    const filters = html`<form method="get" action="/dashboard/requests" class="filters" id="request-filters">
  <div class="field"><label for="req-kind">Kind</label><select id="req-kind" name="kind">${[['', 'All'], ['merchant', 'Merchant requests'], ['mock', 'Provider mock calls']].map(([v, l]) => html`<option value="${v!}"${query.kind === v ? html` selected` : ''}>${l!}</option>`)}</select></div>
  <div class="field"><label for="req-status">Status</label><input id="req-status" name="status" inputmode="numeric" value="${query.status ?? ''}" placeholder="e.g. 404"></div>
  <div class="field"><label for="req-object">Object id</label><input id="req-object" name="object_id" value="${query.object_id ?? ''}" placeholder="chg_…"></div>
  <button type="submit" class="small">Filter</button>
</form>`;
    const rows = answer.ok
      ? table(
          ['At', 'Request', 'Status', 'Latency', 'Idempotency-Key', 'Object', 'Scenario rule'],
          answer.data.map((r) => [
            html`<span class="nowrap" title="${r.at}">${r.at.slice(11, 19)}</span>`,
            html`<code class="request-line">${r.method} ${r.path}</code><br><span class="muted small">${r.kind === 'mock' ? `provider mock · ${r.provider ?? ''}` : 'merchant request'}</span>`,
            r.status === null ? html`<span class="badge bad" data-status="none">no answer</span>` : statusBadge(String(r.status)),
            html`<span class="nowrap">${r.latency_ms} ms</span>`,
            r.idempotency_key ? html`<code class="clip" title="${r.idempotency_key}">${r.idempotency_key}</code>` : '—',
            objectHref(r.object_id),
            matchCell(r.match),
          ]),
          { id: 'request-log', empty: 'No requests recorded yet.' },
        )
      : apiProblem(answer, 'The request log could not be read');
    ctx.render(
      { title: 'Requests', page: 'requests' },
      html`<section class="card">${filters}${rows}${answer.ok ? pager('/dashboard/requests', query, answer.meta?.next_cursor) : ''}
<p class="maps">GET /api/v1/requests: the newest first, capped in memory.</p></section>`,
    );
  });
}

function matchCell(match: InspectedRequest['match']): Html {
  if (!match) return html`—`;
  if (match.matched) return html`<span class="match ok">matched <code>${match.file}</code> #${match.rule_index} ${match.rule_name}</span>`;
  return html`<span class="match none"><strong>no rule matched</strong>${match.nearest ? html`; nearest <code>${match.nearest.file}</code> #${match.nearest.rule_index} ${match.nearest.rule_name}` : ''}<br><span class="failed">${match.failed}</span></span>`;
}

// ---------------------------------------------------------------- developers

interface KeyItem {
  id: string;
  environment: 'test' | 'live';
  key_hint: string;
  scopes: string[];
  role: string;
  ip_allowlist: string[];
  created_at: string;
  revoked_at: string | null;
  current?: boolean;
}

function registerDevelopers(routes: DashboardRoutes): void {
  // GET /api/v1/keys
  routes.page('/dashboard/developers', async (ctx) => {
    const keys = await ctx.api.get<KeyItem[]>('/api/v1/keys', {}, ctx.call);
    ctx.render({ title: 'Developers', page: 'developers' }, developersContent(ctx, keys));
  });

  // POST /api/v1/keys: the key and its signing secret are shown in this answer only
  routes.action('/dashboard/developers/keys', async (ctx) => {
    const raw = ctx.req.body?.scopes;
    const scopes = (Array.isArray(raw) ? raw : raw ? [raw] : []).filter((s): s is string => typeof s === 'string');
    const role = field(ctx, 'role') || undefined;
    const entries = field(ctx, 'ip_allowlist').split(/[\s,]+/).filter(Boolean);
    const answer = await ctx.api.post<{ id: string; key: string; signing_secret: string; environment: string }>(
      '/api/v1/keys',
      { environment: field(ctx, 'environment'), scopes, ...(role ? { role } : {}), ...(entries.length ? { ip_allowlist: entries } : {}) },
      ctx.call,
    );
    if (!answer.ok) return ctx.done('/dashboard/developers', ctx.refusal(answer, 'The key was not issued'));
    ctx.render(
      { title: 'API key issued', page: 'developers', flash: { kind: 'ok', text: `Key ${answer.data.id} (${answer.data.environment}) issued.` } },
      html`${secretOnce('API key.', answer.data.key, 'issued-key')}${secretOnce('Signing secret.', answer.data.signing_secret, 'issued-signing-secret')}<p><a href="/dashboard/developers" id="back-to-developers">Back to developers</a></p>`,
    );
  });

  // POST /api/v1/keys/:id/revoke
  routes.action('/dashboard/developers/keys/:id/revoke', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.post(`/api/v1/keys/${encodeURIComponent(id)}/revoke`, {}, ctx.call);
    ctx.done('/dashboard/developers', answer.ok ? { kind: 'ok', text: `Key ${id} revoked.` } : ctx.refusal(answer, 'The key was not revoked'));
  });

  // PUT /api/v1/keys/:id/ip_allowlist {entries}
  routes.action('/dashboard/developers/keys/:id/allowlist', async (ctx) => {
    const id = String(ctx.req.params.id);
    const entries = field(ctx, 'entries').split(/[\s,]+/).filter(Boolean);
    const answer = await ctx.api.put(`/api/v1/keys/${encodeURIComponent(id)}/ip_allowlist`, { entries }, ctx.call);
    if (answer.ok && id === ctx.key.keyId) ctx.key.ipAllowlist = entries;
    ctx.done('/dashboard/developers', answer.ok ? { kind: 'ok', text: entries.length ? `Key ${id} now accepts requests from ${entries.join(', ')} only.` : `Key ${id} accepts requests from any address.` } : ctx.refusal(answer, 'The allowlist was not changed'));
  });

  // GET /api/v1/keys/:id/signing_secret: an explicit reveal, shown in this answer only
  routes.action('/dashboard/developers/keys/:id/reveal', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.get<{ signing_secret: string }>(`/api/v1/keys/${encodeURIComponent(id)}/signing_secret`, {}, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/developers', ctx.refusal(answer, 'The signing secret was not revealed'));
    ctx.render({ title: 'Signing secret', page: 'developers', flash: null }, html`${secretOnce(`Signing secret of ${id}.`, answer.data.signing_secret, 'revealed-secret')}<p><a href="/dashboard/developers">Back to developers</a></p>`);
  });
}

function developersContent(ctx: PageContext, keys: ApiAnswer<KeyItem[]>): Html {
  const current = keys.ok ? keys.data.find((k) => k.current) : undefined;
  const grantable = current?.scopes ?? [];
  const list = keys.ok
    ? table(
        ['Id', 'Environment', 'Key', 'Role', 'Scopes', 'IP allowlist', 'Created', 'Actions'],
        keys.data.map((k) => [
          html`<code>${k.id}</code>${k.current ? html` <span class="badge neutral">this session</span>` : ''}`,
          k.environment,
          html`<code>${k.key_hint}</code>`,
          k.role,
          html`<span class="scopes">${k.scopes.join(' ')}</span>`,
          k.revoked_at
            ? statusBadge('revoked')
            : html`<form method="post" action="/dashboard/developers/keys/${k.id}/allowlist" class="inline allowlist">${csrfField(ctx.session)}
  <label for="allow-${k.id}" class="visually-hidden">IP allowlist of ${k.id}</label>
  <input id="allow-${k.id}" name="entries" value="${k.ip_allowlist.join(', ')}" placeholder="any address">
  <button type="submit" class="small">Save</button></form>`,
          when(k.created_at),
          k.revoked_at
            ? html`revoked ${when(k.revoked_at)}`
            : html`<div class="actions">${actionButton(ctx.session, `/dashboard/developers/keys/${k.id}/reveal`, 'Reveal signing secret', { id: `reveal-${k.id}` })}${k.current ? '' : actionButton(ctx.session, `/dashboard/developers/keys/${k.id}/revoke`, 'Revoke', { danger: true, id: `revoke-${k.id}` })}</div>`,
        ]),
        { id: 'keys', empty: 'No keys.' },
      )
    : apiProblem(keys, 'The keys could not be read');
  const example = signingExample();
  return html`<section class="card"><h2>API keys</h2>${list}
<p class="maps">GET /api/v1/keys · POST /api/v1/keys/:id/revoke · PUT /api/v1/keys/:id/ip_allowlist · GET /api/v1/keys/:id/signing_secret</p></section>
<section class="card"><h2>Issue a key</h2>
<form method="post" action="/dashboard/developers/keys" id="issue-key">${csrfField(ctx.session)}
  <div class="field"><label for="key-environment">Key environment</label><select id="key-environment" name="environment"><option value="test">test (sk_test_…)</option><option value="live">live (sk_live_…)</option></select></div>
  <fieldset><legend>Scopes</legend>${grantable.length ? grantable.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}" checked> ${s}</label>`) : html`<p class="hint">This key cannot list its own scopes.</p>`}</fieldset>
  <div class="field"><label for="key-role">Role</label><select id="key-role" name="role" aria-describedby="role-hint"><option value="admin">admin: everything its scopes allow</option><option value="finance">finance: wallet, charges, transfers, collections, payouts, bills, settlements</option><option value="engineering">engineering: keys, webhooks, sandbox, scenarios, requests</option></select>
  <p class="hint" id="role-hint">Each role is refused the other's actions (403 role_forbidden).</p></div>
  <div class="field"><label for="key-allowlist">IP allowlist <span class="muted">(addresses or CIDR, comma-separated; empty for any)</span></label><input id="key-allowlist" name="ip_allowlist" placeholder="203.0.113.7, 10.0.0.0/8"></div>
  <button type="submit" id="issue-key-submit">Issue key</button>
</form><p class="maps">POST /api/v1/keys</p></section>
<section class="card"><h2>Signing scheme</h2>
<p>Transfers, trades and payouts are signed: <code>X-Service-Timestamp</code> is the Unix time in seconds (within ±300 s), and <code>X-Service-Signature</code> is the hex HMAC-SHA256, keyed with the key's signing secret, of</p>
<pre class="payload">\${timestamp}.\${METHOD}.\${path_and_query}.\${idempotency_key}.\${raw_body}</pre>
<p>The Idempotency-Key is part of it (empty when the request has none), so a byte-identical retry is an idempotent retry, never a 401.</p>
<div class="copy-row"><pre id="signing-example">${example}</pre><button type="button" class="small" data-copy="signing-example">Copy</button></div>
</section>`;
}

function signingExample(): string {
  return [
    'RAILYARD_URL=http://localhost:4010; API_KEY=sk_test_...',
    'SECRET=your_signing_secret   # Developers > Reveal signing secret',
    'BODY=\'{"amount":2000,"currency":"GHS","channel":"momo","msisdn":"0551234987"}\'',
    'TS=$(date +%s); IDEM=$(uuidgen)',
    'SIG=$(printf \'%s\' "$TS.POST./api/v1/transfers.$IDEM.$BODY" | openssl dgst -sha256 -hmac "$SECRET" -hex | sed \'s/^.* //\')',
    'curl -X POST "$RAILYARD_URL/api/v1/transfers" \\',
    '  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\',
    '  -H "Idempotency-Key: $IDEM" -H "X-Service-Timestamp: $TS" -H "X-Service-Signature: $SIG" \\',
    '  -d "$BODY"',
  ].join('\n');
}

// ---------------------------------------------------------------- sandbox (test keys only)

interface ScenarioFile {
  file: string;
  /** What `railyard scenarios lint` says of the file (absent from servers older than it). */
  warnings?: { line: number; column: number; severity: 'error' | 'warning'; code: string; message: string; rule_index: number | null }[];
  rules: { index: number; name: string; provider: string | null; match: unknown; matched_count: number }[];
}

/** The lint warnings of a scenario file, each with its line, above its rules. */
function scenarioWarnings(f: ScenarioFile) {
  if (!f.warnings?.length) return '';
  return html`<ul class="scenario-warnings" aria-label="Warnings for ${f.file}">${f.warnings.map(
    (w) => html`<li class="hint warn"><strong>${w.severity === 'error' ? 'Never matches' : 'Warning'}</strong> line ${String(w.line)}: ${w.message} <code>${w.code}</code></li>`,
  )}</ul>`;
}

interface Replayable {
  file: string;
  name: string;
  description: string | null;
  steps: number;
}

interface ReplayView {
  file: string;
  name: string | null;
  status: string;
  passed: boolean;
  seed: number | null;
  steps: { index: number; label: string; kind: string; passed: boolean; error: string | null; at: string }[];
  failures: { index: number | null; label: string; message: string }[];
  not_run: number;
  timeline: { at: string; from: string; to: string; what: string }[];
}

/** The Replays card: pick a scripted file, run it, and the last run's steps and timeline. */
function replaysCard(ctx: PageContext, files: ApiAnswer<Replayable[]>): Html {
  if (!files.ok) return apiProblem(files, 'The replays could not be read');
  const form = files.data.length
    ? html`<form method="post" action="/dashboard/sandbox/replays" class="filters" id="replay-run-form">${csrfField(ctx.session)}
  <div class="field"><label for="replay-file">Scenario file</label><select id="replay-file" name="file" required>${files.data.map(
    (f) => html`<option value="${f.file}">${f.file} — ${f.name} (${f.steps} step${f.steps === 1 ? '' : 's'})</option>`,
  )}</select></div>
  <button type="submit" class="small" id="replay-run">Run the replay</button>
</form>
<p class="muted">Each run is a fresh sandbox with its own store and virtual clock: this sandbox's clock, wallet and objects do not change.</p>`
    : html`<p class="empty">No loaded scenario file has a script.</p>`;
  const last = ctx.session.lastReplay as ReplayView | undefined;
  if (!last) return form;
  const result = html`<div id="replay-result" data-replay-status="${last.status}">
<h3>${statusBadge(last.status)} <code>${last.file}</code>${last.seed !== null ? html` <span class="muted">seed ${String(last.seed)}</span>` : ''}</h3>
${last.failures.map((f) => html`<p class="flash error replay-failure"><strong>${f.label}:</strong> ${f.message}</p>`)}
${table(
  ['#', 'Step', 'Kind', 'Result', 'At'],
  last.steps.map((st) => [String(st.index), html`${st.label}${st.error ? html`<pre class="step-error">${st.error}</pre>` : ''}`, st.kind.replace(/_/g, ' '), statusBadge(st.passed ? 'passed' : 'failed'), html`<code>${st.at}</code>`]),
  { id: 'replay-steps', empty: 'No step ran.' },
)}
${last.not_run ? html`<p class="muted" id="replay-not-run">${String(last.not_run)} later step${last.not_run === 1 ? '' : 's'} not run.</p>` : ''}
<h3>Timeline</h3>
${table(
  ['At', 'From', 'To', 'What'],
  last.timeline.map((e) => [html`<code>${e.at}</code>`, e.from, e.to, e.what]),
  { id: 'replay-timeline', empty: 'Nothing happened.' },
)}
</div>`;
  return html`${form}${result}`;
}

const ADVANCE_ID = /^adv_\d{1,12}_\d{1,12}$/;

interface AdvanceView {
  id: string;
  state: 'running' | 'succeeded' | 'failed';
  seconds: number;
  from: string;
  to: string;
  jobs_done: number;
  jobs_total: number;
  error: string | null;
}

/** A background advance's progress: what the page shows and what its script fetches again while it runs. */
function advanceProgressInner(a: AdvanceView): Html {
  const total = Math.max(a.jobs_total, a.jobs_done);
  const pct = total === 0 ? 100 : Math.floor((a.jobs_done / total) * 100);
  return html`<p data-advance-state="${a.state}">${statusBadge(a.state)} <strong id="advance-count">${String(a.jobs_done)} of ${String(total)} job(s)</strong> (${String(pct)}%) · ${when(a.from)} → ${when(a.to)}</p>
<progress id="advance-bar" max="${String(total)}" value="${String(a.jobs_done)}" aria-label="Jobs run">${String(pct)}%</progress>${a.error ? html`<p class="flash error">${a.error}</p>` : ''}`;
}

function advanceProgress(a: AdvanceView): Html {
  return html`<div id="advance-progress" data-poll-fragment="/dashboard/sandbox/advances/${a.id}" aria-live="polite" aria-busy="false">${advanceProgressInner(a)}</div>`;
}

function registerSandbox(routes: DashboardRoutes): void {
  const testOnly = { testOnly: true };
  // GET /api/v1/sandbox/clock, /providers, /market, /scenarios
  routes.page(
    '/dashboard/sandbox',
    async (ctx) => {
      const advanceId = queryText(ctx, 'advance');
      const [clock, providers, market, scenarios, replays, advance] = await Promise.all([
        ctx.api.get<{ mode: string; now: string; pending_jobs: number; next_job_at: string | null }>('/api/v1/sandbox/clock', {}, ctx.call),
        ctx.api.get<{ name: string; channels: string[]; networks: string[]; priority: number; status: string; upstream: string }[]>('/api/v1/sandbox/providers', {}, ctx.call),
        ctx.api.get<{ frozen: boolean; legs: { leg: string; value: string; as_of: string; stale: boolean; source: string }[]; benchmarks: { asset: string; rate: string }[] }>('/api/v1/sandbox/market', {}, ctx.call),
        ctx.api.get<ScenarioFile[]>('/api/v1/sandbox/scenarios', {}, ctx.call),
        ctx.api.get<Replayable[]>('/api/v1/sandbox/replays', {}, ctx.call),
        advanceId && ADVANCE_ID.test(advanceId) ? ctx.api.get<AdvanceView>(`/api/v1/sandbox/clock/advances/${advanceId}`, {}, ctx.call) : null,
      ]);
      const progress = advance ? (advance.ok ? advanceProgress(advance.data) : apiProblem(advance, 'The advance could not be read')) : '';
      const clockCard = clock.ok
        ? html`<dl class="facts" id="clock"><div><dt>Mode</dt><dd>${clock.data.mode}</dd></div><div><dt>Now</dt><dd id="clock-now">${when(clock.data.now)}</dd></div><div><dt>Jobs waiting</dt><dd id="pending-jobs">${clock.data.pending_jobs}</dd></div><div><dt>Next job at</dt><dd id="next-job">${when(clock.data.next_job_at)}</dd></div></dl>
<form method="post" action="/dashboard/sandbox/clock" class="filters" id="advance-form">${csrfField(ctx.session)}
  <div class="field"><label for="advance-seconds">Advance by (seconds)</label><input id="advance-seconds" name="seconds" inputmode="numeric" value="60" required></div>
  <div class="field"><label><input type="checkbox" name="background" value="1" id="advance-background"> In the background, with progress</label></div>
  <button type="submit" class="small" id="advance-submit">Advance the clock</button>
</form>${progress}
<div class="quick">${[10, 60, 3600, 86400].map((s) => actionButton(ctx.session, '/dashboard/sandbox/clock', `+${s >= 86400 ? `${s / 86400} d` : s >= 3600 ? `${s / 3600} h` : s >= 60 ? `${s / 60} min` : `${s} s`}`, { fields: { seconds: String(s) }, id: `advance-${s}` }))}</div>`
        : apiProblem(clock, 'The clock could not be read');
      const providerRows = providers.ok
        ? table(
            ['Provider', 'Channels', 'Networks', 'Priority', 'Upstream', 'Status', ''],
            providers.data.map((p) => [
              html`<strong>${p.name}</strong>`,
              p.channels.join(', '),
              p.networks.join(', ') || '—',
              String(p.priority),
              p.upstream,
              statusBadge(p.status),
              actionButton(ctx.session, `/dashboard/sandbox/providers/${p.name}`, p.status === 'down' ? 'Bring up' : 'Take down', { fields: { down: p.status === 'down' ? 'false' : 'true' }, id: `provider-${p.name}`, danger: p.status !== 'down' }),
            ]),
            { id: 'providers' },
          )
        : apiProblem(providers, 'Providers could not be read');
      const marketCard = market.ok
        ? html`<p>Market is ${statusBadge(market.data.frozen ? 'frozen' : 'moving')} ${actionButton(ctx.session, '/dashboard/sandbox/market', market.data.frozen ? 'Resume the market' : 'Freeze the market', { fields: { action: market.data.frozen ? 'resume' : 'freeze' }, id: 'market-toggle' })}</p>
${table(['Leg', 'Value', 'Source', 'As of', 'Stale'], market.data.legs.map((l) => [l.leg, html`<code>${l.value}</code>`, l.source, when(l.as_of), l.stale ? statusBadge('stale') : 'no']), { id: 'market-legs' })}
${table(['Asset', 'Benchmark (GHS)'], market.data.benchmarks.map((b) => [b.asset, html`<code>${b.rate}</code>`]), { id: 'benchmarks' })}
<form method="post" action="/dashboard/sandbox/fx" class="filters" id="fx-form">${csrfField(ctx.session)}
  <div class="field"><label for="fx-rate">USD/GHS rate</label><input id="fx-rate" name="rate" inputmode="decimal" required placeholder="15.5"></div>
  <button type="submit" class="small">Set FX</button>
</form>`
        : apiProblem(market, 'The market could not be read');
      const scenarioCard = scenarios.ok
        ? scenarios.data.length
          ? html`${scenarios.data.map((f) => html`<h3><code>${f.file}</code></h3>${scenarioWarnings(f)}${table(['#', 'Rule', 'Provider', 'Match', 'Matched'], f.rules.map((r) => [String(r.index), r.name, r.provider ?? 'any', html`<code>${JSON.stringify(r.match)}</code>`, html`<span class="count">${r.matched_count}</span>`]), { empty: 'No rules.' })}`)}`
          : html`<p class="empty">No scenario files loaded.</p>`
        : apiProblem(scenarios, 'Scenarios could not be read');
      ctx.render(
        { title: 'Sandbox', page: 'sandbox' },
        html`<div class="grid">
<section class="card"><h2>Virtual clock</h2>${clockCard}<p class="maps">GET /api/v1/sandbox/clock · POST /api/v1/sandbox/clock/advance · GET /api/v1/sandbox/clock/advances/:id</p></section>
<section class="card"><h2>Market</h2>${marketCard}<p class="maps">POST /api/v1/sandbox/market/freeze, /resume · PUT /api/v1/sandbox/rates/fx</p></section>
</div>
<section class="card"><h2>Providers</h2>${providerRows}<p class="maps">POST /api/v1/sandbox/providers/:name/outage</p></section>
<section class="card"><h2>Scenarios</h2>${scenarioCard}<p class="maps">GET /api/v1/sandbox/scenarios</p></section>
<section class="card" id="replays"><h2>Replays</h2>${replaysCard(ctx, replays)}<p class="maps">GET /api/v1/sandbox/replays · POST /api/v1/sandbox/replays</p></section>`,
      );
    },
    testOnly,
  );

  // GET /api/v1/sandbox/clock/advances/:id: the progress the page polls while the advance runs
  routes.page(
    '/dashboard/sandbox/advances/:id',
    async (ctx) => {
      const id = String(ctx.req.params.id);
      const answer = ADVANCE_ID.test(id) ? await ctx.api.get<AdvanceView>(`/api/v1/sandbox/clock/advances/${id}`, {}, ctx.call) : null;
      ctx.res
        .status(answer?.ok ? 200 : 404)
        .type('html')
        .send(answer?.ok ? advanceProgressInner(answer.data).text : '');
    },
    testOnly,
  );

  // POST /api/v1/sandbox/clock/advance {seconds}: a large backlog (or "in the background") answers
  // 202, and the page follows the advance's progress.
  routes.action(
    '/dashboard/sandbox/clock',
    async (ctx) => {
      const seconds = Number(field(ctx, 'seconds'));
      if (!Number.isFinite(seconds) || seconds < 0) return ctx.done('/dashboard/sandbox', { kind: 'error', text: 'Seconds must be a number, zero or more.' });
      const background = field(ctx, 'background') === '1';
      const answer = await ctx.api.post<{ now: string; jobs_run: number } & AdvanceView>('/api/v1/sandbox/clock/advance', background ? { seconds, async: true } : { seconds }, ctx.call);
      if (answer.ok && answer.status === 202) {
        return ctx.done(`/dashboard/sandbox?advance=${encodeURIComponent(answer.data.id)}`, { kind: 'ok', text: `Advancing ${seconds} s in the background: ${answer.data.jobs_total} job(s) due.` });
      }
      ctx.done('/dashboard/sandbox', answer.ok ? { kind: 'ok', text: `Advanced ${seconds} s: now ${answer.data.now}; ran ${answer.data.jobs_run} job(s).` } : ctx.refusal(answer, 'The clock did not move'));
    },
    testOnly,
  );

  // POST /api/v1/sandbox/providers/:name/outage {down}
  routes.action(
    '/dashboard/sandbox/providers/:name',
    async (ctx) => {
      const name = String(ctx.req.params.name);
      const down = field(ctx, 'down') === 'true';
      const answer = await ctx.api.post(`/api/v1/sandbox/providers/${encodeURIComponent(name)}/outage`, { down }, ctx.call);
      ctx.done('/dashboard/sandbox', answer.ok ? { kind: 'ok', text: `${name} is ${down ? 'down' : 'up'}.` } : ctx.refusal(answer, 'The provider did not change'));
    },
    testOnly,
  );

  // POST /api/v1/sandbox/market/freeze or /resume
  routes.action(
    '/dashboard/sandbox/market',
    async (ctx) => {
      const action = field(ctx, 'action') === 'resume' ? 'resume' : 'freeze';
      const answer = await ctx.api.post(`/api/v1/sandbox/market/${action}`, {}, ctx.call);
      ctx.done('/dashboard/sandbox', answer.ok ? { kind: 'ok', text: action === 'freeze' ? 'Market frozen.' : 'Market resumed.' } : ctx.refusal(answer, 'The market did not change'));
    },
    testOnly,
  );

  // POST /api/v1/sandbox/replays {file}
  routes.action(
    '/dashboard/sandbox/replays',
    async (ctx) => {
      const file = field(ctx, 'file');
      if (!file) return ctx.done('/dashboard/sandbox#replays', { kind: 'error', text: 'Choose a scenario file to replay.' });
      const answer = await ctx.api.post<ReplayView>('/api/v1/sandbox/replays', { file }, { ...ctx.call, timeoutMs: 90_000 });
      // A replay that ran and failed is 422 replay_failed, its report in the error's details.
      const report = answer.ok ? answer.data : answer.error?.code === 'replay_failed' ? (answer.error.details as unknown as ReplayView) : null;
      if (!report) return ctx.done('/dashboard/sandbox#replays', ctx.refusal(answer, 'The replay did not run'));
      ctx.session.lastReplay = report;
      const failure = report.failures[0];
      ctx.done('/dashboard/sandbox#replays', {
        kind: report.passed ? 'ok' : 'error',
        text: report.passed ? `The replay of ${file} passed: ${report.steps.length} steps.` : `The replay of ${file} ${report.status === 'invalid' ? 'could not load the file' : 'failed'}${failure ? ` at ${failure.label}` : ''}.`,
      });
    },
    testOnly,
  );

  // PUT /api/v1/sandbox/rates/fx {rate}
  routes.action(
    '/dashboard/sandbox/fx',
    async (ctx) => {
      const answer = await ctx.api.put('/api/v1/sandbox/rates/fx', { rate: field(ctx, 'rate') }, ctx.call);
      ctx.done('/dashboard/sandbox', answer.ok ? { kind: 'ok', text: `USD/GHS set at ${field(ctx, 'rate')}.` } : ctx.refusal(answer, 'The rate was not set'));
    },
    testOnly,
  );
}
