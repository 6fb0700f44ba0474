import { toMajorString } from '../kernel/money.ts';
import type { DashboardSession, Flash } from './dashboard-sessions.ts';
import { href, html, type Html, type HtmlValue } from './html.ts';
import type { ApiAnswer } from './dashboard-api.ts';

// The frame every dashboard page shares: the navigation, the test/live switch, the LIVE banner
// and the announced message of the last action. Pages pass their content as Html.

export type PageName = 'home' | 'wallet' | 'objects' | 'webhooks' | 'requests' | 'developers' | 'sandbox';

const NAV: { page: PageName; path: string; label: string; testOnly?: boolean }[] = [
  { page: 'home', path: '/dashboard', label: 'Service ladder' },
  { page: 'wallet', path: '/dashboard/wallet', label: 'Wallet' },
  { page: 'objects', path: '/dashboard/objects', label: 'Objects' },
  { page: 'webhooks', path: '/dashboard/webhooks', label: 'Webhooks' },
  { page: 'requests', path: '/dashboard/requests', label: 'Requests' },
  { page: 'developers', path: '/dashboard/developers', label: 'Developers' },
  { page: 'sandbox', path: '/dashboard/sandbox', label: 'Sandbox', testOnly: true },
];

export interface LayoutOptions {
  title: string;
  session: DashboardSession | null;
  page?: PageName;
  flash?: Flash | null;
}

export function layout(opts: LayoutOptions, content: Html): string {
  const { session } = opts;
  const live = session?.mode === 'live' && !!session.keys.live;
  const signedIn = !!session && !!session.keys[session.mode];
  const nav = signedIn
    ? html`<nav aria-label="Dashboard">
  <ul>
    ${NAV.filter((n) => !(n.testOnly && live)).map((n) => html`<li><a href="${n.path}" id="nav-${n.page}"${n.page === opts.page ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
  </ul>
</nav>`
    : '';
  const account =
    signedIn && session
      ? html`<div class="account">
  <form method="post" action="/dashboard/mode" class="switch" id="mode-switch">
    ${csrfField(session)}
    <span class="switch-label" id="mode-label">Environment</span>
    <div role="group" aria-labelledby="mode-label">
      <button type="submit" name="mode" value="test" id="mode-test" aria-pressed="${String(session.mode === 'test')}">Test</button>
      <button type="submit" name="mode" value="live" id="mode-live" class="live-button" aria-pressed="${String(session.mode === 'live')}">Live</button>
    </div>
  </form>
  <span class="key-hint" title="The API key this session uses">${session.keys[session.mode]!.hint}${session.keys[session.mode]!.role ? ` · ${session.keys[session.mode]!.role}` : ''}</span>
  <form method="post" action="/dashboard/sign-out">${csrfField(session)}<button type="submit" class="link" id="sign-out">Sign out</button></form>
</div>`
      : '';
  const banner = live
    ? html`<div class="live-banner" role="note" id="live-banner"><strong>LIVE — real money.</strong> Every action here moves real funds through real providers.</div>`
    : signedIn
      ? html`<div class="test-banner" id="test-banner">Test mode: sandbox data, simulated providers.</div>`
      : '';
  return `<!doctype html>
${
  html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${opts.title} · railyard dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body class="${live ? 'mode-live' : 'mode-test'}" data-mode="${session?.mode ?? 'none'}">
<a class="skip" href="#main">Skip to content</a>
${banner}
<header>
  <a class="brand" href="/dashboard">railyard <span>dashboard</span></a>
  ${account}
</header>
${nav}
<main id="main" tabindex="-1">
<h1>${opts.title}</h1>
${flashBox(opts.flash ?? null)}
${content}
</main>
</body>
</html>`.text
}
`;
}

export function csrfField(session: DashboardSession): Html {
  return html`<input type="hidden" name="csrf" value="${session.csrf}">`;
}

export function flashBox(flash: Flash | null): Html {
  if (!flash) return html`<div id="flash" class="flash" role="status" aria-live="polite"></div>`;
  return flash.kind === 'error'
    ? html`<div id="flash" class="flash error" role="alert">${flash.text}</div>`
    : html`<div id="flash" class="flash ok" role="status" aria-live="polite">${flash.text}</div>`;
}

/** An API refusal, announced where the data would have been. */
export function apiProblem(answer: ApiAnswer, what: string): Html {
  const code = answer.error?.code ?? `http_${answer.status}`;
  return html`<div class="flash error api-error" role="alert" data-code="${code}"><strong>${what}: </strong>${answer.message} <code>${code}</code></div>`;
}

export function money(minor: number | null | undefined, currency: 'GHS' | 'USDT' | 'USDC' = 'GHS'): string {
  if (minor === null || minor === undefined) return '—';
  return `${currency} ${toMajorString(minor, currency)}`;
}

export function statusBadge(status: string | null | undefined): Html {
  const s = status ?? 'unknown';
  if (/^\d{3}$/.test(s)) return html`<span class="badge ${Number(s) < 400 ? 'good' : 'bad'}" data-status="${s}">${s}</span>`;
  const tone = /success|settled|delivered|completed|live|^up$|^ok$|^enabled$|^passed$/.test(s)
    ? 'good'
    : /fail|revers|down|declin|revoked|disabled|expired/.test(s)
      ? 'bad'
      : /pending|requested|retry|sandbox/.test(s)
        ? 'wait'
        : 'neutral';
  return html`<span class="badge ${tone}" data-status="${s}">${s}</span>`;
}

export function when(value: string | null | undefined): Html {
  if (!value) return html`—`;
  return html`<time datetime="${value}">${value.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/** A link to the next page of a cursor-paged list, keeping its filters. */
export function pager(path: string, query: Record<string, string | undefined>, nextCursor: string | null | undefined): Html {
  if (!nextCursor) return html`<p class="pager muted">End of the list.</p>`;
  return html`<p class="pager"><a id="next-page" href="${href(path, { ...query, cursor: nextCursor })}">Next page →</a></p>`;
}

export function table(headers: string[], rows: HtmlValue[][], opts: { id?: string; caption?: string; empty?: string } = {}): Html {
  if (!rows.length) return html`<p class="empty" id="${opts.id ?? ''}">${opts.empty ?? 'Nothing yet.'}</p>`;
  return html`<div class="table-wrap"><table${opts.id ? html` id="${opts.id}"` : ''}>
${opts.caption ? html`<caption>${opts.caption}</caption>` : ''}
<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A one-button form posting to the dashboard (CSRF token included). */
export function actionButton(session: DashboardSession, action: string, label: string, opts: { fields?: Record<string, string>; danger?: boolean; id?: string; confirm?: string } = {}): Html {
  return html`<form method="post" action="${action}" class="inline"${opts.confirm ? html` data-confirm="${opts.confirm}"` : ''}>
${csrfField(session)}${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<button type="submit"${opts.id ? html` id="${opts.id}"` : ''} class="${opts.danger ? 'danger small' : 'small'}">${label}</button>
</form>`;
}

/** A secret shown once, with a copy button: it is in this response and nowhere else. */
export function secretOnce(label: string, value: string, id: string): Html {
  return html`<div class="secret" role="status">
<p><strong>${label}</strong> Store it now: it is not shown again.</p>
<div class="copy-row"><code id="${id}">${value}</code><button type="button" class="small" data-copy="${id}">Copy</button></div>
</div>`;
}
