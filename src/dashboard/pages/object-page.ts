import type { ObjectTimeline, ObjectTimelineEntry } from '../../kernel/object-timeline.ts';
import { apiProblem, csrfField, money, statusBadge, when } from '../dashboard-layout.ts';
import { html, type Html, type HtmlValue } from '../html.ts';
import type { DashboardRoutes, PageContext } from '../page-context.ts';
import { field } from './form-field.ts';
import { matchCell, type ScenarioMatch } from './match-cell.ts';
import { OBJECT_ID, objectHref } from './object-href.ts';

// One object's page: its summary and its timeline (requests, provider calls, failovers,
// callbacks, journals, events, deliveries), which the page's script fetches again as events
// happen; and the card OTP form of a collection that asks for one.

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

type Asset = 'USDT' | 'USDC';

/** A quote (GET /api/v1/trades/quotes/:reference): the fields the summary shows. */
interface QuoteView {
  object: 'quote';
  status: string;
  side: string;
  asset: Asset;
  network: string;
  net_fiat_amount: number;
  asset_amount: number;
  applied_rate: number;
  trade_reference: string | null;
  expires_at: string;
  created_at: string;
}

/** A trade (GET /api/v1/trades/:reference): the fields the summary shows. */
interface TradeView {
  object: 'trade';
  status: string;
  side: string;
  asset: Asset;
  network: string;
  net_fiat_amount: number;
  settled_fiat_amount: number | null;
  asset_amount: number;
  applied_rate: number;
  quote_reference: string;
  failure_reason: string | null;
  created_at: string;
}

/** Any other object (a charge, transfer, collection, payout, bill, event or delivery): each has some of these. */
interface MoneyView {
  object?: string;
  status?: string;
  amount?: number;
  amount_major?: string | null;
  channel?: string | null;
  provider?: string | null;
  failure_reason?: string | null;
  created_at?: string;
  updated_at?: string;
  /** A collection's card OTP, while it waits for one. */
  next_action?: { type: string; message?: string | null } | null;
}

type ObjectView = QuoteView | TradeView | MoneyView;

const isMarketObject = (o: ObjectView): o is QuoteView | TradeView => o.object === 'quote' || o.object === 'trade';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** One object's page, its live fragment and its OTP action. */
export function objectPage(routes: DashboardRoutes): void {
  // GET the object (by prefix) and GET /api/v1/objects/:id/timeline
  routes.page('/dashboard/objects/:id', async (ctx) => {
    const id = String(ctx.req.params.id);
    const live = await objectLive(ctx, id);
    if (!live)
      return ctx.render(
        { title: 'Object not found', page: 'objects', status: 404, flash: { kind: 'error', text: `No object ${id} for this key's environment.` } },
        html`<p><a href="/dashboard/objects">Back to the objects</a></p>`,
      );
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
    ctx.res
      .status(live ? 200 : 404)
      .type('html')
      .send(live ? live.text : '');
  });

  // POST /v1/collections/:id/otp
  routes.action('/dashboard/objects/:id/otp', async (ctx) => {
    const id = String(ctx.req.params.id);
    if (!OBJECT_ID.test(id)) return ctx.done('/dashboard/objects', { kind: 'error', text: 'Unknown object.' });
    const answer = await ctx.api.post<{ status: string }>(`/v1/collections/${id}/otp`, { otp: field(ctx, 'otp') }, ctx.call);
    ctx.done(`/dashboard/objects/${id}`, answer.ok ? { kind: 'ok', text: `OTP sent: the collection is ${answer.data.status}.` } : ctx.refusal(answer, 'The OTP was refused'));
  });
}

/** The object's summary and timeline: the part of its page that live updates replace. */
async function objectLive(ctx: PageContext, id: string): Promise<Html | null> {
  if (!OBJECT_ID.test(id)) return null;
  const prefix = id.slice(0, id.indexOf('_'));
  const path = OBJECT_PATHS[prefix];
  const [object, timeline] = await Promise.all([
    path ? ctx.api.get<ObjectView>(`${path}${id}`, {}, ctx.call) : Promise.resolve(null),
    ctx.api.get<ObjectTimeline>(`/api/v1/objects/${id}/timeline`, {}, ctx.call),
  ]);
  if ((!object || object.status === 404) && timeline.status === 404) return null;
  const data = object?.ok ? object.data : null;
  const status = data?.status ?? (timeline.ok ? timeline.data.status : null);
  const facts: [string, HtmlValue][] =
    data && isMarketObject(data)
      ? [
          ['Status', statusBadge(status)],
          ['Side', data.side],
          ['Asset', `${data.asset} · ${data.network}`],
          ['GHS', money(data.object === 'trade' ? (data.settled_fiat_amount ?? data.net_fiat_amount) : data.net_fiat_amount)],
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
  const nextAction = data && !isMarketObject(data) ? data.next_action : null;
  const otp =
    nextAction?.type === 'otp'
      ? html`<form method="post" action="/dashboard/objects/${id}/otp" class="card" id="otp-form">${csrfField(ctx.session)}
  <p>${nextAction.message ?? 'Enter the one-time password'}</p>
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

function timelineList(all: ObjectTimelineEntry[]): Html {
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
function entryFacts(e: ObjectTimelineEntry): Html {
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
  if (e.kind === 'mock_call' && d.match && typeof d.match === 'object') facts.push(matchCell(d.match as ScenarioMatch));
  if (ms) facts.push(`${ms} ms`);
  const postings = Array.isArray(d.postings) ? (d.postings as { account: string; currency: 'GHS' | 'USDT' | 'USDC'; amount: number }[]) : [];
  const facts_ = facts.length ? html`<p class="entry-facts">${facts.map((f, i) => html`${i ? ' · ' : ''}${f}`)}</p>` : html``;
  if (!postings.length) return facts_;
  return html`${facts_}<table class="postings compact"><thead><tr><th scope="col">Account</th><th scope="col">Posting</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td><code>${p.account}</code></td><td class="num">${p.amount < 0 ? '−' : '+'}${money(Math.abs(p.amount), p.currency)}</td></tr>`)}</tbody></table>`;
}
