import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { readAssetFile } from '../kernel/asset-file.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Logger } from '../kernel/logger.ts';
import { DashboardApi } from './dashboard-api.ts';
import { layout } from './dashboard-layout.ts';
import type { DashboardPage, DashboardRoutes, PageContext } from './page-context.ts';
import { csrfMatches, DashboardSessions, SESSION_COOKIE, type DashboardSession, type Flash, type SessionKey, type SessionVault } from './dashboard-sessions.ts';
import type { Environment } from '../kernel/environment.ts';
import { html } from './html.ts';
import { developersPage } from './pages/developers-page.ts';
import { ladderPage } from './pages/ladder-page.ts';
import { objectPage } from './pages/object-page.ts';
import { objectsPage } from './pages/objects-page.ts';
import { requestsPage } from './pages/requests-page.ts';
import { sandboxPage } from './pages/sandbox-page.ts';
import { walletPage } from './pages/wallet-page.ts';
import { webhooksPage } from './pages/webhooks-page.ts';

// /dashboard: server-rendered pages for merchants. The dashboard is a client of railyard's own
// public API (no private back door): every page reads, and every action writes, through
// /api/v1/... and /v1/... over HTTP with the session's API key. Its own security: an HttpOnly,
// SameSite=Strict session cookie, a CSRF token in every form, and a strict CSP.

export const DASHBOARD_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Each page registers its GETs and form POSTs, in the navigation's order (the object lists before one object). */
const PAGES: readonly DashboardPage[] = [ladderPage, walletPage, objectsPage, objectPage, webhooksPage, requestsPage, developersPage, sandboxPage];

export interface DashboardDeps {
  /** railyard's own base URL: where the dashboard calls the API. */
  baseUrl: () => string;
  /** Real time: session idle expiry and request-signature timestamps. */
  wallClock: Clock;
  logger: Logger;
  /** Idle minutes before a session expires (default 30). */
  idleMinutes?: number;
  /** Where sessions are kept: the database, so that any instance of a fleet serves any session. */
  sessions: SessionVault;
}

/** The key of res.locals holding the request's session, saved before the answer is sent. */
const SESSION_LOCAL = 'dashboardSession';

export function dashboard(deps: DashboardDeps): Router {
  const router = express.Router();
  const api = new DashboardApi({ baseUrl: deps.baseUrl, wallClock: deps.wallClock });
  const sessions = new DashboardSessions({ clock: deps.wallClock, idleMs: (deps.idleMinutes ?? 30) * 60_000, max: 1000, vault: deps.sessions });
  const form = express.urlencoded({ extended: false, limit: '20kb', parameterLimit: 100 });

  // What a request changed in its session is written before its answer leaves (as express-session
  // does): the next request, a redirect's GET say, may reach another instance.
  router.use('/dashboard', (_req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const session = res.locals[SESSION_LOCAL] as DashboardSession | undefined;
      if (!session) return end(...args);
      res.locals[SESSION_LOCAL] = undefined;
      sessions.save(session).then(
        () => end(...args),
        (err: unknown) => {
          deps.logger.error('dashboard session not saved', { error: (err as Error).message });
          end(...args);
        },
      );
      return res;
    }) as Response['end'];
    next();
  });

  router.use('/dashboard', (_req, res, next) => {
    res.set({
      'Content-Security-Policy': DASHBOARD_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
    });
    next();
  });

  // One stylesheet and one script, no CDN, no fonts, no framework: files in assets/ beside this
  // module, which `npm run build` copies to dist/ (a missing one fails here, at start-up).
  const css = readAssetFile(import.meta.url, './assets/dashboard.css');
  const js = readAssetFile(import.meta.url, './assets/dashboard.js');
  router.get('/dashboard/assets/dashboard.css', (_req, res) => void res.type('text/css; charset=utf-8').send(css));
  router.get('/dashboard/assets/dashboard.js', (_req, res) => void res.type('text/javascript; charset=utf-8').send(js));

  /** The request's session, kept on res.locals so that its changes are saved before the answer. */
  const sessionOf = async (req: Request, res: Response) => {
    const session = await sessions.find(readCookie(req, SESSION_COOKIE));
    res.locals[SESSION_LOCAL] = session ?? undefined;
    return session;
  };
  const setCookie = (req: Request, res: Response, session: DashboardSession) => {
    res.append('Set-Cookie', `${SESSION_COOKIE}=${session.id}; Path=/dashboard; HttpOnly; SameSite=Strict${req.secure ? '; Secure' : ''}`);
  };
  const send = (res: Response, status: number, body: string) => void res.status(status).type('html').send(body);
  const takeFlash = (session: DashboardSession) => {
    const flash = session.flash;
    session.flash = null;
    return flash;
  };

  /** A POST without the session's CSRF token: refused before anything happens. */
  const refuseForgery = (res: Response, session: DashboardSession | null) =>
    send(
      res,
      403,
      layout(
        {
          title: 'Request refused',
          session,
          flash: { kind: 'error', text: 'This form is out of date or did not come from this dashboard (CSRF check failed). Nothing was changed. Reload the page and try again.' },
        },
        html`<p><a href="/dashboard">Back to the dashboard</a></p>`,
      ),
    );

  const contextFor = (req: Request, res: Response, session: DashboardSession, key: SessionKey): PageContext => ({
    req,
    res,
    session,
    key,
    call: { key: key.key, forwardedFor: req.ip },
    api,
    render(opts, content) {
      send(res, opts.status ?? 200, layout({ title: opts.title, session, page: opts.page, flash: opts.flash === undefined ? takeFlash(session) : opts.flash }, content));
    },
    done(location, flash) {
      session.flash = flash;
      res.redirect(303, location);
    },
    refusal(answer, what) {
      return { kind: 'error', text: `${what}: ${answer.message} (${answer.error?.code ?? answer.status})` };
    },
  });

  /** The signed-in session of a page or action, or the answer that replaces the handler. */
  const signedIn = async (req: Request, res: Response, known?: DashboardSession): Promise<{ session: DashboardSession; key: SessionKey } | null> => {
    const session = known ?? (await sessionOf(req, res));
    const key = session?.keys[session.mode];
    if (!session || !key) {
      if (req.method === 'GET') res.redirect(303, '/dashboard/sign-in');
      else refuseForgery(res, null);
      return null;
    }
    if (!addressAllowed(req.ip, key.ipAllowlist)) {
      send(res, 403, layout({ title: 'Address not allowed', session: null, flash: { kind: 'error', text: `This key's IP allowlist does not include your address (${req.ip}).` } }, html``));
      return null;
    }
    return { session, key };
  };

  const liveRefusal = (ctx: PageContext) =>
    ctx.render(
      {
        title: 'Sandbox controls are for test keys',
        status: 403,
        flash: { kind: 'error', text: 'Sandbox controls are not available in live mode: a live key cannot use them, and the API refuses them (403 forbidden).' },
      },
      html`<p><a href="/dashboard">Back to the service ladder</a></p>`,
    );

  const routes: DashboardRoutes = {
    page(path, handler, opts = {}) {
      router.get(path, async (req, res) => {
        const who = await signedIn(req, res);
        if (!who) return;
        const ctx = contextFor(req, res, who.session, who.key);
        if (opts.testOnly && who.key.environment !== 'test') return liveRefusal(ctx);
        await handler(ctx);
      });
    },
    action(path, handler, opts = {}) {
      router.post(path, form, async (req, res) => {
        const session = await sessionOf(req, res);
        if (!session || !csrfMatches(session, req.body?.csrf)) return refuseForgery(res, session);
        const who = await signedIn(req, res, session);
        if (!who) return;
        const ctx = contextFor(req, res, who.session, who.key);
        if (opts.testOnly && who.key.environment !== 'test') return liveRefusal(ctx);
        await handler(ctx);
      });
    },
  };

  // Sign-in: the form's CSRF token lives in a pre-login session; signing in renews its id.
  router.get('/dashboard/sign-in', async (req, res) => {
    let session = await sessionOf(req, res);
    if (!session) {
      session = await sessions.create();
      res.locals[SESSION_LOCAL] = session;
      setCookie(req, res, session);
    }
    const wanted: Environment | null = req.query.mode === 'live' || req.query.mode === 'test' ? req.query.mode : null;
    send(res, 200, signInPage(session, wanted, takeFlash(session)));
  });

  router.post('/dashboard/sign-in', form, async (req, res) => {
    const session = await sessionOf(req, res);
    if (!session || !csrfMatches(session, req.body?.csrf)) return refuseForgery(res, session);
    const keyText = typeof req.body.api_key === 'string' ? req.body.api_key.trim() : '';
    const secretText = typeof req.body.signing_secret === 'string' ? req.body.signing_secret.trim() : '';
    const refuse = (status: number, text: string) => send(res, status, signInPage(session, null, { kind: 'error', text }));
    const match = /^sk_(test|live)_[A-Za-z0-9_-]{8,200}$/.exec(keyText);
    if (!match) return refuse(400, 'That is not an API key: keys look like sk_test_… or sk_live_….');
    const environment = match[1] as Environment;
    // Any key the API accepts may open a session; the wallet balance is readable by every role.
    const probe = await api.get('/api/v1/wallet', {}, { key: keyText, forwardedFor: req.ip });
    if (probe.status === 401) return refuse(401, 'That API key was refused (unknown or revoked). Nothing was stored.');
    if (!probe.ok) return refuse(probe.status, `That API key cannot open the dashboard: ${probe.message} (${probe.error?.code ?? probe.status})`);
    const key: SessionKey = { key: keyText, environment, keyId: null, role: null, ipAllowlist: [], signingSecret: secretText || null, hint: `${keyText.slice(0, 8)}…${keyText.slice(-4)}` };
    const listed = await api.get<KeyItem[]>('/api/v1/keys', {}, { key: keyText, forwardedFor: req.ip });
    const current = listed.ok && Array.isArray(listed.data) ? listed.data.find((k) => k.current) : undefined;
    if (current) {
      key.keyId = current.id;
      key.role = current.role ?? null;
      key.ipAllowlist = current.ip_allowlist ?? [];
      if (!key.signingSecret) {
        const revealed = await api.get<{ signing_secret: string }>(`/api/v1/keys/${encodeURIComponent(current.id)}/signing_secret`, {}, { key: keyText, forwardedFor: req.ip });
        if (revealed.ok) key.signingSecret = revealed.data.signing_secret;
      }
    }
    if (!addressAllowed(req.ip, key.ipAllowlist)) return refuse(403, `This key's IP allowlist does not include your address (${req.ip}).`);
    const renewed = await sessions.renew(session);
    res.locals[SESSION_LOCAL] = renewed;
    renewed.keys = { ...renewed.keys, [environment]: key };
    renewed.mode = environment;
    renewed.flash = { kind: 'ok', text: `Signed in with a ${environment} key${key.role ? ` (role ${key.role})` : ''}.` };
    setCookie(req, res, renewed);
    res.redirect(303, '/dashboard');
  });

  router.post('/dashboard/sign-out', form, async (req, res) => {
    const session = await sessionOf(req, res);
    if (!session || !csrfMatches(session, req.body?.csrf)) return refuseForgery(res, session);
    res.locals[SESSION_LOCAL] = undefined;
    await sessions.destroy(session.id);
    res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0${req.secure ? '; Secure' : ''}`);
    res.redirect(303, '/dashboard/sign-in');
  });

  // The test/live switch: to the other environment's key, or to the form asking for it.
  router.post('/dashboard/mode', form, async (req, res) => {
    const session = await sessionOf(req, res);
    if (!session || !csrfMatches(session, req.body?.csrf)) return refuseForgery(res, session);
    const mode = req.body.mode === 'live' ? 'live' : 'test';
    if (!session.keys[mode]) {
      session.flash = { kind: 'ok', text: `Sign in with a ${mode} key (sk_${mode}_…) to switch to ${mode} mode.` };
      return res.redirect(303, `/dashboard/sign-in?mode=${mode}`);
    }
    session.mode = mode;
    session.flash = { kind: 'ok', text: mode === 'live' ? 'Switched to LIVE mode: real money.' : 'Switched to test mode.' };
    res.redirect(303, '/dashboard');
  });

  // Live updates: the API's event stream for this key, relayed to the page (which refreshes its fragments).
  router.get('/dashboard/events', async (req, res) => {
    const session = await sessionOf(req, res);
    const key = session?.keys[session.mode];
    if (!session || !key) return void res.status(401).type('text/plain').send('Sign in first');
    relayEvents(deps, key.key, req, res);
  });

  for (const page of PAGES) page(routes);

  router.use('/dashboard', async (req, res) => {
    send(
      res,
      404,
      layout({ title: 'Page not found', session: await sessionOf(req, res) }, html`<p>No dashboard page at <code>${req.originalUrl}</code>. <a href="/dashboard">Go to the dashboard</a>.</p>`),
    );
  });
  router.use('/dashboard', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    deps.logger.error('dashboard page failed', { error: (err as Error).message });
    send(
      res,
      500,
      layout(
        { title: 'Something went wrong', session: null, flash: { kind: 'error', text: 'The dashboard could not render this page.' } },
        html`<p><a href="/dashboard">Back to the dashboard</a></p>`,
      ),
    );
  });
  return router;
}

interface KeyItem {
  id: string;
  current?: boolean;
  role?: string;
  ip_allowlist?: string[];
}

function signInPage(session: DashboardSession, wanted: Environment | null, flash: Flash | null): string {
  const signedInWith = (['test', 'live'] as const).filter((e) => session.keys[e]);
  const intro = wanted
    ? html`<p>Enter your <strong>${wanted}</strong> API key (<code>sk_${wanted}_…</code>) to use ${wanted} mode.</p>`
    : html`<p>Sign in with a railyard API key. The key stays on the server, in this session: it is never put in a URL or in the browser's storage.</p>`;
  return layout(
    { title: 'Sign in', session: signedInWith.length ? session : null, flash },
    html`<section class="card narrow">
${intro}
${signedInWith.length ? html`<p class="muted">This session already holds a ${signedInWith.join(' and a ')} key.</p>` : ''}
<form method="post" action="/dashboard/sign-in" id="sign-in-form" autocomplete="off">
  <input type="hidden" name="csrf" value="${session.csrf}">
  <div class="field">
    <label for="api_key">API key</label>
    <input type="password" id="api_key" name="api_key" required spellcheck="false" autocomplete="off" aria-describedby="api_key_hint">
    <p class="hint" id="api_key_hint">sk_test_… for the sandbox, sk_live_… for live. The test key of a fresh railyard is printed when it starts.</p>
  </div>
  <div class="field">
    <label for="signing_secret">Signing secret <span class="muted">(optional)</span></label>
    <input type="password" id="signing_secret" name="signing_secret" spellcheck="false" autocomplete="off" aria-describedby="signing_secret_hint">
    <p class="hint" id="signing_secret_hint">Signs withdrawals and payouts. Leave it empty when the key may read its own secret (GET /api/v1/keys/:id/signing_secret).</p>
  </div>
  <button type="submit" id="sign-in">Sign in</button>
</form>
</section>`,
  );
}

function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The key's IP allowlist, applied to the browser's address (the API sees only the server's). */
export function addressAllowed(ip: string | undefined, entries: readonly string[]): boolean {
  if (!entries.length) return true;
  if (!ip) return false;
  const address = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const entry of entries) {
    const [base, bits] = entry.split('/');
    const kind = isIP(base ?? '');
    if (!kind) continue;
    const type = kind === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(bits), type);
  }
  return list.check(address, family);
}

/**
 * GET /api/v1/events/stream with the session's key, relayed as server-sent events. Event names
 * are dropped (each message's data says its type), so the page's one `message` listener sees all.
 */
function relayEvents(deps: DashboardDeps, key: string, req: Request, res: Response): void {
  const url = new URL('/api/v1/events/stream', deps.baseUrl());
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let upstream: ClientRequest | null = null;
  upstream = send(url, { method: 'GET', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(req.ip ? { 'x-forwarded-for': req.ip } : {}) }, agent: false }, (answer) => {
    if (answer.statusCode !== 200) {
      res.status(502).type('text/plain').send('The event stream is not available');
      answer.resume();
      return;
    }
    res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.flushHeaders();
    let buffered = '';
    answer.setEncoding('utf8');
    answer.on('data', (chunk: string) => {
      buffered += chunk;
      for (let cut = buffered.indexOf('\n\n'); cut >= 0; cut = buffered.indexOf('\n\n')) {
        const block = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 2);
        res.write(
          `${block
            .split('\n')
            .filter((line) => !line.startsWith('event:'))
            .join('\n')}\n\n`,
        );
      }
    });
    answer.on('end', () => res.end());
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.status(502).type('text/plain').send('The event stream is not available');
    else res.end();
  });
  upstream.end();
  req.on('close', () => upstream?.destroy());
}
