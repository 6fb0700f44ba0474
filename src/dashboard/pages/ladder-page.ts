import { actionButton, apiProblem, statusBadge } from '../dashboard-layout.ts';
import { html } from '../html.ts';
import type { DashboardRoutes } from '../page-context.ts';
import { field } from './form-field.ts';

// The home page: the merchant's service ladder (request access, enable sandbox, go live) and
// whether trading is allowed. Like every page, it reads and writes through the public API with
// the session's key; the comment above each handler names the call it makes.

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

/** The service ladder (/dashboard) and its one action. */
export function ladderPage(routes: DashboardRoutes): void {
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
