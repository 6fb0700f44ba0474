import { apiProblem, pager, statusBadge, table } from '../dashboard-layout.ts';
import { html } from '../html.ts';
import type { DashboardRoutes } from '../page-context.ts';
import { queryText } from './form-field.ts';
import { matchCell, type ScenarioMatch } from './match-cell.ts';
import { objectHref } from './object-href.ts';

// The requests inspector: the merchant's requests and the provider mock calls, newest first,
// each with the scenario rule it matched.

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
  match: ScenarioMatch;
  /** A sandbox fault (a scenario `api:` rule) that fired on a merchant request. */
  fault?: { rule: string; file: string | null; action: string; dropped_after_commit?: boolean } | null;
}

/** The requests inspector. */
export function requestsPage(routes: DashboardRoutes): void {
  // GET /api/v1/requests
  routes.page('/dashboard/requests', async (ctx) => {
    const query = { kind: queryText(ctx, 'kind'), status: queryText(ctx, 'status'), object_id: queryText(ctx, 'object_id') };
    const answer = await ctx.api.get<InspectedRequest[]>('/api/v1/requests', { ...query, cursor: queryText(ctx, 'cursor'), page_size: '50' }, ctx.call);
    const filters = html`<form method="get" action="/dashboard/requests" class="filters" id="request-filters">
  <div class="field"><label for="req-kind">Kind</label><select id="req-kind" name="kind">${[
    ['', 'All'],
    ['merchant', 'Merchant requests'],
    ['mock', 'Provider mock calls'],
  ].map(([v, l]) => html`<option value="${v!}"${query.kind === v ? html` selected` : ''}>${l!}</option>`)}</select></div>
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
            r.fault
              ? html`<span class="match fault">fault <code>${r.fault.file ?? ''}</code> ${r.fault.rule} (${r.fault.action}${r.fault.dropped_after_commit ? ': answer dropped after commit' : ''})</span>`
              : matchCell(r.match),
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
