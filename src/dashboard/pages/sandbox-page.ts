import type { ApiAnswer } from '../dashboard-api.ts';
import { actionButton, apiProblem, csrfField, statusBadge, table, when } from '../dashboard-layout.ts';
import { html, type Html } from '../html.ts';
import type { DashboardRoutes, PageContext } from '../page-context.ts';
import { field, queryText } from './form-field.ts';

// The sandbox controls, for test keys only: the virtual clock (with background advances and
// their progress), the market, provider outages, the loaded scenarios and their replays.

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
  last.steps.map((st) => [
    String(st.index),
    html`${st.label}${st.error ? html`<pre class="step-error">${st.error}</pre>` : ''}`,
    st.kind.replace(/_/g, ' '),
    statusBadge(st.passed ? 'passed' : 'failed'),
    html`<code>${st.at}</code>`,
  ]),
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

/** A fault on the merchant API, as GET /api/v1/sandbox/faults lists it. */
interface FaultView {
  id: string | null;
  file: string | null;
  name: string;
  action: string;
  matched: number;
  fired: number;
}

/** The sandbox page and its controls: test keys only (a live session gets 403). */
export function sandboxPage(routes: DashboardRoutes): void {
  const testOnly = { testOnly: true };
  // GET /api/v1/sandbox/clock, /providers, /market, /scenarios
  routes.page(
    '/dashboard/sandbox',
    async (ctx) => {
      const advanceId = queryText(ctx, 'advance');
      const [clock, providers, market, scenarios, replays, advance, faults] = await Promise.all([
        ctx.api.get<{ mode: string; now: string; pending_jobs: number; next_job_at: string | null }>('/api/v1/sandbox/clock', {}, ctx.call),
        ctx.api.get<{ name: string; channels: string[]; networks: string[]; priority: number; status: string; upstream: string }[]>('/api/v1/sandbox/providers', {}, ctx.call),
        ctx.api.get<{ frozen: boolean; legs: { leg: string; value: string; as_of: string; stale: boolean; source: string }[]; benchmarks: { asset: string; rate: string }[] }>(
          '/api/v1/sandbox/market',
          {},
          ctx.call,
        ),
        ctx.api.get<ScenarioFile[]>('/api/v1/sandbox/scenarios', {}, ctx.call),
        ctx.api.get<Replayable[]>('/api/v1/sandbox/replays', {}, ctx.call),
        advanceId && ADVANCE_ID.test(advanceId) ? ctx.api.get<AdvanceView>(`/api/v1/sandbox/clock/advances/${advanceId}`, {}, ctx.call) : null,
        ctx.api.get<FaultView[]>('/api/v1/sandbox/faults', {}, ctx.call),
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
              actionButton(ctx.session, `/dashboard/sandbox/providers/${p.name}`, p.status === 'down' ? 'Bring up' : 'Take down', {
                fields: { down: p.status === 'down' ? 'false' : 'true' },
                id: `provider-${p.name}`,
                danger: p.status !== 'down',
              }),
            ]),
            { id: 'providers' },
          )
        : apiProblem(providers, 'Providers could not be read');
      const marketCard = market.ok
        ? html`<p>Market is ${statusBadge(market.data.frozen ? 'frozen' : 'moving')} ${actionButton(ctx.session, '/dashboard/sandbox/market', market.data.frozen ? 'Resume the market' : 'Freeze the market', { fields: { action: market.data.frozen ? 'resume' : 'freeze' }, id: 'market-toggle' })}</p>
${table(
  ['Leg', 'Value', 'Source', 'As of', 'Stale'],
  market.data.legs.map((l) => [l.leg, html`<code>${l.value}</code>`, l.source, when(l.as_of), l.stale ? statusBadge('stale') : 'no']),
  { id: 'market-legs' },
)}
${table(
  ['Asset', 'Benchmark (GHS)'],
  market.data.benchmarks.map((b) => [b.asset, html`<code>${b.rate}</code>`]),
  { id: 'benchmarks' },
)}
<form method="post" action="/dashboard/sandbox/fx" class="filters" id="fx-form">${csrfField(ctx.session)}
  <div class="field"><label for="fx-rate">USD/GHS rate</label><input id="fx-rate" name="rate" inputmode="decimal" required placeholder="15.5"></div>
  <button type="submit" class="small">Set FX</button>
</form>`
        : apiProblem(market, 'The market could not be read');
      const scenarioCard = scenarios.ok
        ? scenarios.data.length
          ? html`${scenarios.data.map(
              (f) =>
                html`<h3><code>${f.file}</code></h3>${scenarioWarnings(f)}${table(
                  ['#', 'Rule', 'Provider', 'Match', 'Matched'],
                  f.rules.map((r) => [String(r.index), r.name, r.provider ?? 'any', html`<code>${JSON.stringify(r.match)}</code>`, html`<span class="count">${r.matched_count}</span>`]),
                  { empty: 'No rules.' },
                )}`,
            )}`
          : html`<p class="empty">No scenario files loaded.</p>`
        : apiProblem(scenarios, 'Scenarios could not be read');
      const faultCard = faults.ok
        ? html`${table(
            ['From', 'Fault', 'Action', 'Matched', 'Fired', ''],
            faults.data.map((f) => [
              f.id ? html`<code>${f.id}</code>` : html`<code>${f.file ?? ''}</code>`,
              f.name,
              f.action,
              html`<span class="count">${f.matched}</span>`,
              html`<span class="count">${f.fired}</span>`,
              f.id ? actionButton(ctx.session, '/dashboard/sandbox/faults/off', 'Switch off', { fields: { id: f.id }, id: `fault-${f.id}`, danger: true }) : '',
            ]),
            { id: 'faults', empty: 'No faults: the API answers promptly and correctly.' },
          )}${faults.data.some((f) => f.id) ? html`<div class="quick">${actionButton(ctx.session, '/dashboard/sandbox/faults/off', 'Switch all off', { id: 'faults-off', danger: true })}</div>` : ''}`
        : apiProblem(faults, 'Faults could not be read');
      ctx.render(
        { title: 'Sandbox', page: 'sandbox' },
        html`<div class="grid">
<section class="card"><h2>Virtual clock</h2>${clockCard}<p class="maps">GET /api/v1/sandbox/clock · POST /api/v1/sandbox/clock/advance · GET /api/v1/sandbox/clock/advances/:id</p></section>
<section class="card"><h2>Market</h2>${marketCard}<p class="maps">POST /api/v1/sandbox/market/freeze, /resume · PUT /api/v1/sandbox/rates/fx</p></section>
</div>
<section class="card"><h2>Providers</h2>${providerRows}<p class="maps">POST /api/v1/sandbox/providers/:name/outage</p></section>
<section class="card"><h2>Scenarios</h2>${scenarioCard}<p class="maps">GET /api/v1/sandbox/scenarios</p></section>
<section class="card"><h2>Faults on the API</h2>${faultCard}<p class="maps">GET /api/v1/sandbox/faults · DELETE /api/v1/sandbox/faults, /:id · railyard faults on|list|off</p></section>
<section class="card" id="replays"><h2>Replays</h2>${replaysCard(ctx, replays)}<p class="maps">GET /api/v1/sandbox/replays · POST /api/v1/sandbox/replays</p></section>`,
      );
    },
    testOnly,
  );

  // DELETE /api/v1/sandbox/faults/:id, or every fault switched on by hand
  routes.action(
    '/dashboard/sandbox/faults/off',
    async (ctx) => {
      const id = field(ctx, 'id');
      const answer = await ctx.api.delete<{ removed: number }>(id ? `/api/v1/sandbox/faults/${encodeURIComponent(id)}` : '/api/v1/sandbox/faults', ctx.call);
      ctx.done('/dashboard/sandbox', answer.ok ? { kind: 'ok', text: `Switched ${answer.data.removed} fault(s) off.` } : ctx.refusal(answer, 'No fault was switched off'));
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
      ctx.done(
        '/dashboard/sandbox',
        answer.ok ? { kind: 'ok', text: `Advanced ${seconds} s: now ${answer.data.now}; ran ${answer.data.jobs_run} job(s).` } : ctx.refusal(answer, 'The clock did not move'),
      );
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
        text: report.passed
          ? `The replay of ${file} passed: ${report.steps.length} steps.`
          : `The replay of ${file} ${report.status === 'invalid' ? 'could not load the file' : 'failed'}${failure ? ` at ${failure.label}` : ''}.`,
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
