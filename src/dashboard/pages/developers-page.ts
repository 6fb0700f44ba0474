import type { ApiAnswer } from '../dashboard-api.ts';
import { actionButton, apiProblem, csrfField, secretOnce, statusBadge, table, when } from '../dashboard-layout.ts';
import { html, type Html } from '../html.ts';
import type { DashboardRoutes, PageContext } from '../page-context.ts';
import { field } from './form-field.ts';

// Developers: the API keys (issue, revoke, IP allowlist, reveal the signing secret) and the
// request-signing scheme with a copyable example.

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

/** The developers page and its key actions. */
export function developersPage(routes: DashboardRoutes): void {
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
    const entries = field(ctx, 'ip_allowlist')
      .split(/[\s,]+/)
      .filter(Boolean);
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
    const entries = field(ctx, 'entries')
      .split(/[\s,]+/)
      .filter(Boolean);
    const answer = await ctx.api.put(`/api/v1/keys/${encodeURIComponent(id)}/ip_allowlist`, { entries }, ctx.call);
    if (answer.ok && id === ctx.key.keyId) ctx.key.ipAllowlist = entries;
    ctx.done(
      '/dashboard/developers',
      answer.ok
        ? { kind: 'ok', text: entries.length ? `Key ${id} now accepts requests from ${entries.join(', ')} only.` : `Key ${id} accepts requests from any address.` }
        : ctx.refusal(answer, 'The allowlist was not changed'),
    );
  });

  // GET /api/v1/keys/:id/signing_secret: an explicit reveal, shown in this answer only
  routes.action('/dashboard/developers/keys/:id/reveal', async (ctx) => {
    const id = String(ctx.req.params.id);
    const answer = await ctx.api.get<{ signing_secret: string }>(`/api/v1/keys/${encodeURIComponent(id)}/signing_secret`, {}, ctx.call);
    if (!answer.ok) return ctx.done('/dashboard/developers', ctx.refusal(answer, 'The signing secret was not revealed'));
    ctx.render(
      { title: 'Signing secret', page: 'developers', flash: null },
      html`${secretOnce(`Signing secret of ${id}.`, answer.data.signing_secret, 'revealed-secret')}<p><a href="/dashboard/developers">Back to developers</a></p>`,
    );
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
