import { actionButton, apiProblem, csrfField, pager, secretOnce, statusBadge, table, when } from '../dashboard-layout.ts';
import { href, html, type Html } from '../html.ts';
import type { DashboardRoutes, PageContext } from '../page-context.ts';
import { field, queryText } from './form-field.ts';

// Webhooks: the endpoints (add, enable, disable, rotate, delete), the replay of failed
// deliveries, and the delivery log with each attempt, updated live.

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

/** The webhooks page, its live delivery log and its actions. */
export function webhooksPage(routes: DashboardRoutes): void {
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
  ${
    e.enabled
      ? actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/disable`, 'Disable', { id: `disable-${e.id}` })
      : actionButton(ctx.session, `/dashboard/webhooks/endpoints/${e.id}/enable`, 'Enable', { id: `enable-${e.id}` })
  }
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
    ctx.res
      .status(200)
      .type('html')
      .send((await deliveriesFragment(ctx)).text);
  });

  // POST /api/v1/webhook_endpoints
  routes.action('/dashboard/webhooks/endpoints', async (ctx) => {
    const types = field(ctx, 'event_types')
      .split(/[,\s]+/)
      .filter(Boolean);
    const answer = await ctx.api.post<Endpoint & { secret: string }>('/api/v1/webhook_endpoints', { url: field(ctx, 'url'), ...(types.length ? { event_types: types } : {}) }, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/webhooks', ctx.refusal(answer, 'The endpoint was not created'));
    ctx.render(
      { title: 'Webhook endpoint created', page: 'webhooks', flash: { kind: 'ok', text: `Endpoint ${answer.data.id} created for ${answer.data.url}.` } },
      html`${secretOnce('Signing secret (whsec_…).', answer.data.secret, 'new-secret')}<p><a href="/dashboard/webhooks" id="back-to-webhooks">Back to webhooks</a></p>`,
    );
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
    ctx.render(
      { title: 'Webhook secret rotated', page: 'webhooks', flash: { kind: 'ok', text: `New secret for ${id}; the old one keeps signing during the grace period.` } },
      html`${secretOnce('New signing secret.', answer.data.secret, 'new-secret')}<p><a href="/dashboard/webhooks">Back to webhooks</a></p>`,
    );
  });

  // POST /api/v1/webhook_deliveries/:id/redeliver
  routes.action('/dashboard/webhooks/deliveries/:id/redeliver', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.post<Delivery>(`/api/v1/webhook_deliveries/${encodeURIComponent(id)}/redeliver`, undefined, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/webhooks', ctx.refusal(answer, 'The delivery was not redelivered'));
    const last = answer.data.attempt_log[answer.data.attempt_log.length - 1];
    ctx.done('/dashboard/webhooks', {
      kind: answer.data.status === 'delivered' ? 'ok' : 'error',
      text: `Redelivered ${id}: ${last?.http_status ?? last?.error ?? 'no answer'}; delivery is ${answer.data.status}.`,
    });
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
    d.attempt_log.map((a) => [
      String(a.attempt),
      a.trigger,
      when(a.at),
      html`<span class="http-status" data-http-status="${a.http_status ?? 'none'}">${a.http_status === null ? html`<span class="badge bad">${a.error ?? 'no answer'}</span>` : statusBadge(String(a.http_status))}</span>`,
      `${a.latency_ms} ms`,
      html`<code class="excerpt">${a.response_excerpt ?? a.error ?? ''}</code>`,
    ]),
    { empty: 'No attempt yet.' },
  )}
</li>`,
  )}</ul>${pager('/dashboard/webhooks', query, answer.meta?.next_cursor)}`;
}
