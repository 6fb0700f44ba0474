// The dashboard's security model, over HTTP: the session cookie's flags, CSRF refusals that
// change nothing, the Content-Security-Policy on every response, sign-in refusals, sandbox
// controls refused to a live key (hidden and refused), and no API key in any URL.
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

let sb: TestSandbox;
let liveKey: string;

beforeAll(async () => {
  sb = await startTestSandbox();
  const issued = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'collections:write', 'transfers:write', 'webhooks:write'] });
  expect(issued.status).toBe(201);
  liveKey = issued.body.data.key;
});
afterAll(async () => {
  await sb?.close();
});

type Agent = ReturnType<typeof supertest.agent>;

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
const sessionCookie = (res: supertest.Response) => ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('railyard_session='));

/** A browser-like agent (it keeps cookies) signed in with the key. */
async function signedIn(key = sb.key, signingSecret = ''): Promise<{ agent: Agent; csrf: string }> {
  const agent = supertest.agent(sb.baseUrl);
  const form = await agent.get('/dashboard/sign-in');
  const res = await agent
    .post('/dashboard/sign-in')
    .type('form')
    .send({ csrf: csrfOf(form.text), api_key: key, signing_secret: signingSecret });
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/dashboard');
  const home = await agent.get('/dashboard/wallet');
  expect(home.status).toBe(200);
  return { agent, csrf: csrfOf(home.text) };
}

const clockNow = async () => (await sb.get('/api/v1/sandbox/clock')).body.data.now as string;
const transactionCount = async () => (await sb.get('/api/v1/transactions')).body.data.length as number;

describe('dashboard sessions', () => {
  it('sends an unsigned-in visitor to the sign-in page', async () => {
    const res = await sb.http.get('/dashboard/wallet');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard/sign-in');
  });

  it('sets the session cookie HttpOnly, SameSite=Strict, on Path=/dashboard, and gives a new id at sign-in', async () => {
    const agent = supertest.agent(sb.baseUrl);
    const form = await agent.get('/dashboard/sign-in');
    const before = sessionCookie(form)!;
    expect(before).toMatch(/^railyard_session=[A-Za-z0-9_-]{43};/);
    expect(before).toContain('HttpOnly');
    expect(before).toContain('SameSite=Strict');
    expect(before).toContain('Path=/dashboard');
    // Plain http here: Secure is added only when the request came over https.
    expect(before).not.toContain('Secure');

    const res = await agent
      .post('/dashboard/sign-in')
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: sb.key });
    const after = sessionCookie(res)!;
    expect(after).toContain('HttpOnly');
    expect(after).toContain('SameSite=Strict');
    expect(after.split(';')[0]).not.toBe(before.split(';')[0]);
  });

  it('refuses a bad key at sign-in (401), and the session stays signed out', async () => {
    const agent = supertest.agent(sb.baseUrl);
    const form = await agent.get('/dashboard/sign-in');
    const res = await agent
      .post('/dashboard/sign-in')
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: 'sk_test_not_a_key_we_issued_000000' });
    expect(res.status).toBe(401);
    expect(res.text).toMatch(/role="alert"[^>]*>That API key was refused/);
    expect((await agent.get('/dashboard')).status).toBe(303);

    const malformed = await agent
      .post('/dashboard/sign-in')
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: 'hello' });
    expect(malformed.status).toBe(400);
  });

  it('signs out: the session is gone and the cookie cleared', async () => {
    const { agent, csrf } = await signedIn();
    const res = await agent.post('/dashboard/sign-out').type('form').send({ csrf });
    expect(res.status).toBe(303);
    expect(sessionCookie(res)).toMatch(/Max-Age=0/);
    expect((await agent.get('/dashboard/wallet')).status).toBe(303);
  });

  it('asks for a live key when switching to live without one', async () => {
    const { agent, csrf } = await signedIn();
    const res = await agent.post('/dashboard/mode').type('form').send({ csrf, mode: 'live' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard/sign-in?mode=live');
    const form = await agent.get('/dashboard/sign-in?mode=live');
    expect(form.text).toContain('sk_live_');
  });
});

describe('CSRF', () => {
  it('refuses a POST without the token (403) and changes nothing', async () => {
    const { agent } = await signedIn();
    const before = await clockNow();
    const res = await agent.post('/dashboard/sandbox/clock').type('form').send({ seconds: '3600' });
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/CSRF check failed/);
    expect(await clockNow()).toBe(before);
  });

  it("refuses a POST with another session's token (403) and creates no charge", async () => {
    const { agent } = await signedIn();
    const other = await signedIn();
    const count = await transactionCount();
    const res = await agent.post('/dashboard/wallet/fund').type('form').send({ csrf: other.csrf, channel: 'momo', amount: '10.00', msisdn: '0551234987' });
    expect(res.status).toBe(403);
    expect(await transactionCount()).toBe(count);
  });

  it('refuses a sign-in POST without the token', async () => {
    const agent = supertest.agent(sb.baseUrl);
    await agent.get('/dashboard/sign-in');
    const res = await agent.post('/dashboard/sign-in').type('form').send({ api_key: sb.key });
    expect(res.status).toBe(403);
  });

  it('puts the token in every form of every page', async () => {
    const { agent, csrf } = await signedIn();
    for (const path of ['/dashboard', '/dashboard/wallet', '/dashboard/objects', '/dashboard/webhooks', '/dashboard/requests', '/dashboard/developers', '/dashboard/sandbox']) {
      const page = (await agent.get(path)).text;
      const posts = [...page.matchAll(/<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/g)];
      for (const [, inner] of posts) expect(inner, path).toContain(`name="csrf" value="${csrf}"`);
    }
  });

  it('accepts the right token: the action happens', async () => {
    const { agent, csrf } = await signedIn();
    const before = await clockNow();
    const res = await agent.post('/dashboard/sandbox/clock').type('form').send({ csrf, seconds: '60' });
    expect(res.status).toBe(303);
    expect(Date.parse(await clockNow()) - Date.parse(before)).toBe(60_000);
  });
});

describe('response headers', () => {
  it('sends the CSP and the other security headers on every dashboard response', async () => {
    const { agent } = await signedIn();
    const answers = [
      await sb.http.get('/dashboard/sign-in'),
      await sb.http.get('/dashboard/wallet'),
      await agent.get('/dashboard'),
      await agent.get('/dashboard/webhooks'),
      await agent.get('/dashboard/assets/dashboard.css'),
      await agent.get('/dashboard/assets/dashboard.js'),
      await agent.get('/dashboard/no-such-page'),
      await agent.post('/dashboard/sandbox/clock').type('form').send({}),
    ];
    for (const res of answers) {
      expect(res.headers['content-security-policy']).toBe(CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('serves pages with no inline script or style (the CSP would block them)', async () => {
    const { agent } = await signedIn();
    for (const path of ['/dashboard', '/dashboard/wallet', '/dashboard/sandbox', '/dashboard/developers']) {
      const page = (await agent.get(path)).text;
      expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(page).not.toMatch(/<style|\sstyle="|\son[a-z]+="/);
    }
  });
});

describe('live keys and sandbox controls', () => {
  it('hides the sandbox page from a live key and refuses its actions, as the API does', async () => {
    const { agent, csrf } = await signedIn(liveKey);
    const home = await agent.get('/dashboard/wallet');
    expect(home.text).toContain('LIVE — real money');
    expect(home.text).toContain('class="mode-live"');
    expect(home.text).not.toContain('href="/dashboard/sandbox"');

    const page = await agent.get('/dashboard/sandbox');
    expect(page.status).toBe(403);
    expect(page.text).not.toContain('advance-form');

    const before = await clockNow();
    const action = await agent.post('/dashboard/sandbox/clock').type('form').send({ csrf, seconds: '3600' });
    expect(action.status).toBe(403);
    expect(await clockNow()).toBe(before);

    // And the API refuses the live key on its own.
    const direct = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 3600 }, { key: liveKey });
    expect(direct.status).toBe(403);
    expect(await clockNow()).toBe(before);
  });

  it('shows the test key the sandbox controls', async () => {
    const { agent } = await signedIn();
    const page = await agent.get('/dashboard/sandbox');
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="advance-form"');
    expect((await agent.get('/dashboard')).text).toContain('href="/dashboard/sandbox"');
  });
});

describe('keys never travel in URLs', () => {
  it('puts no key or signing secret in any link, form action, redirect or page', async () => {
    const agent = supertest.agent(sb.baseUrl);
    const form = await agent.get('/dashboard/sign-in');
    expect(form.text).toMatch(/<form method="post" action="\/dashboard\/sign-in"/);
    const signIn = await agent
      .post('/dashboard/sign-in')
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: sb.key, signing_secret: sb.signingSecret });
    const locations = [signIn.headers.location as string];
    const urls: string[] = [];
    for (const path of ['/dashboard', '/dashboard/wallet', '/dashboard/objects', '/dashboard/webhooks', '/dashboard/requests', '/dashboard/developers', '/dashboard/sandbox']) {
      const res = await agent.get(path);
      expect(res.text).not.toContain(sb.key);
      expect(res.text).not.toContain(sb.signingSecret);
      urls.push(...[...res.text.matchAll(/(?:href|action|src|data-live-fragment)="([^"]*)"/g)].map((m) => m[1]!));
    }
    const csrf = csrfOf((await agent.get('/dashboard/wallet')).text);
    const fund = await agent.post('/dashboard/wallet/fund').type('form').send({ csrf, channel: 'momo', amount: '10.00', msisdn: '0551234987' });
    locations.push(fund.headers.location as string);
    expect(urls.length).toBeGreaterThan(20);
    for (const url of [...urls, ...locations]) {
      expect(url).not.toMatch(/sk_(test|live)_|sig_/);
    }
  });
});

describe("a key's IP allowlist in the dashboard", () => {
  // Behind a proxy on loopback (server.trust_proxy), the browser's address comes in X-Forwarded-For;
  // the dashboard checks it against the key's allowlist and forwards it to the API, which checks it too.
  let proxied: TestSandbox;
  beforeAll(async () => {
    proxied = await startTestSandbox({ server: { trust_proxy: 'loopback' } });
  });
  afterAll(async () => {
    await proxied?.close();
  });

  const signInFrom = async (address: string, key: string) => {
    const agent = supertest.agent(proxied.baseUrl);
    const form = await agent.get('/dashboard/sign-in').set('X-Forwarded-For', address);
    const res = await agent
      .post('/dashboard/sign-in')
      .set('X-Forwarded-For', address)
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: key });
    return { agent, res };
  };

  it('lets a browser in from an allowed address, and refuses one from elsewhere (403), changing nothing', async () => {
    const issued = await proxied.post('/api/v1/keys', { environment: 'test', scopes: ['read'], ip_allowlist: ['203.0.113.0/24'] });
    expect(issued.status).toBe(201);
    const key = issued.body.data.key as string;

    const allowed = await signInFrom('203.0.113.9', key);
    expect(allowed.res.status).toBe(303);
    expect((await allowed.agent.get('/dashboard/wallet').set('X-Forwarded-For', '203.0.113.9')).status).toBe(200);
    // The same session from another address is refused.
    const moved = await allowed.agent.get('/dashboard/wallet').set('X-Forwarded-For', '198.51.100.4');
    expect(moved.status).toBe(403);

    const refused = await signInFrom('198.51.100.4', key);
    expect(refused.res.status).toBe(403);
    expect(refused.res.text).toMatch(/ip_not_allowed|allowlist/);
    expect((await refused.agent.get('/dashboard/wallet').set('X-Forwarded-For', '198.51.100.4')).status).toBe(303);
  });
});
