// Each dashboard action is an API call: posting the dashboard's form changes what the public API
// shows, and an API refusal (a role, a missing signing secret) comes back as an announced message
// that changed nothing. The browser test covers the main journey; this covers the other forms.
import { resolve } from 'node:path';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxReplays } from '../../src/replay/sandbox-replays.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

let sb: TestSandbox;
const ROOT = resolve(import.meta.dirname, '../..');

beforeAll(async () => {
  // Two scripted files to replay from the Sandbox page: one passes, one fails at step 3.
  const scripted = loadScenarios(
    ['pass/charge-success.yaml', 'fail/wrong-expectation.yaml'].map((f) => resolve(ROOT, 'test/fixtures/replay', f)),
    ROOT,
  );
  sb = await startTestSandbox({}, undefined, [], { replays: new SandboxReplays(() => scripted.files, { cwd: ROOT }) });
});
afterAll(async () => {
  await sb?.close();
});

type Agent = ReturnType<typeof supertest.agent>;
const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

/** A signed-in browser-like session: GET pages, POST forms (with the CSRF token), read the message shown next. */
async function dashboardAs(key = sb.key, signingSecret = '') {
  const agent: Agent = supertest.agent(sb.baseUrl);
  const form = await agent.get('/dashboard/sign-in');
  const signIn = await agent
    .post('/dashboard/sign-in')
    .type('form')
    .send({ csrf: csrfOf(form.text), api_key: key, signing_secret: signingSecret });
  expect(signIn.status).toBe(303);
  const csrf = csrfOf((await agent.get('/dashboard/wallet')).text);
  return {
    agent,
    get: (path: string) => agent.get(path),
    post: (path: string, fields: Record<string, string | string[]> = {}) =>
      agent
        .post(path)
        .type('form')
        .send({ csrf, ...fields }),
    /** The page a redirect leads to, and the message it announces. */
    async follow(res: supertest.Response) {
      expect(res.status).toBe(303);
      const page = await agent.get(res.headers.location as string);
      const message = /<div id="flash" class="flash (ok|error)"[^>]*>([^<]*)/.exec(page.text);
      return { location: res.headers.location as string, page, kind: message?.[1], message: message?.[2] ?? '' };
    },
  };
}

async function issueKey(body: Record<string, unknown>) {
  const res = await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read', 'collections:write', 'transfers:write', 'webhooks:write'], ...body });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; key: string; signing_secret: string };
}

describe('wallet actions', () => {
  it('withdraws by a signed transfer, the signing secret learnt from the API', async () => {
    await sb.fund(100_00);
    const d = await dashboardAs();
    const res = await d.post('/dashboard/wallet/withdraw', { idem: 'withdraw-once-0001', channel: 'momo', amount: '20.00', msisdn: '0551234987' });
    const next = await d.follow(res);
    expect(next.location).toMatch(/^\/dashboard\/objects\/trf_/);
    const transfer = (await sb.get(`/api/v1/transfers/${next.location.split('/').pop()}`)).body.data;
    expect(transfer).toMatchObject({ amount: 2000, channel: 'momo', status: 'pending' });

    // The same form sent twice is one transfer (its Idempotency-Key is in the form).
    const again = await d.follow(await d.post('/dashboard/wallet/withdraw', { idem: 'withdraw-once-0001', channel: 'momo', amount: '20.00', msisdn: '0551234987' }));
    expect(again.location).toBe(next.location);
  });

  it('refuses a withdrawal when the session has no signing secret, and sends nothing', async () => {
    const finance = await issueKey({ role: 'finance' });
    const d = await dashboardAs(finance.key);
    const before = (await sb.get('/api/v1/transactions?type=transfer')).body.data.length;
    const next = await d.follow(await d.post('/dashboard/wallet/withdraw', { channel: 'momo', amount: '5.00', msisdn: '0551234987' }));
    expect(next.kind).toBe('error');
    expect(next.message).toMatch(/signing secret/);
    expect((await sb.get('/api/v1/transactions?type=transfer')).body.data.length).toBe(before);

    // Given on the sign-in form, the secret signs the finance key's withdrawals.
    const withSecret = await dashboardAs(finance.key, finance.signing_secret);
    const sent = await withSecret.follow(await withSecret.post('/dashboard/wallet/withdraw', { channel: 'momo', amount: '5.00', msisdn: '0551234987' }));
    expect(sent.location).toMatch(/^\/dashboard\/objects\/trf_/);
  });

  it('funds by card with an OTP answered on the object page', async () => {
    const d = await dashboardAs();
    const next = await d.follow(await d.post('/dashboard/wallet/fund', { channel: 'card', amount: '12.50', card: '4000 0000 0000 3410' }));
    expect(next.location).toMatch(/^\/dashboard\/objects\/col_/);
    expect(next.page.text).toContain('id="otp-form"');
    const id = next.location.split('/').pop()!;
    const otp = await d.follow(await d.post(`/dashboard/objects/${id}/otp`, { otp: '123456' }));
    expect(otp.message).toMatch(/settled/);
    expect((await sb.get(`/v1/collections/${id}`)).body.data).toMatchObject({ status: 'settled', channel: 'card', amount: 1250 });
  });

  it('funds by bank debit through a collection', async () => {
    const d = await dashboardAs();
    const next = await d.follow(await d.post('/dashboard/wallet/fund', { channel: 'bank', amount: '30.00', account_number: '1000000001', bank_code: '040100' }));
    expect(next.location).toMatch(/^\/dashboard\/objects\/col_/);
    expect((await sb.get(`/v1/collections/${next.location.split('/').pop()}`)).body.data).toMatchObject({ channel: 'bank', amount: 3000 });
  });

  it('announces a refused amount, and charges nothing', async () => {
    const d = await dashboardAs();
    const before = (await sb.get('/api/v1/transactions')).body.data.length;
    const next = await d.follow(await d.post('/dashboard/wallet/fund', { channel: 'momo', amount: '1.234', msisdn: '0551234987' }));
    expect(next.kind).toBe('error');
    expect(next.page.text).toMatch(/role="alert">Amount /);
    expect((await sb.get('/api/v1/transactions')).body.data.length).toBe(before);
  });
});

describe('webhook endpoint actions', () => {
  it('creates, disables, enables, rotates (the secret shown once), replays and deletes', async () => {
    const d = await dashboardAs();
    const created = await d.post('/dashboard/webhooks/endpoints', { url: 'https://merchant.example/hooks', event_types: 'charge.success, charge.failed' });
    expect(created.status).toBe(200);
    const secret = /id="new-secret">(whsec_[^<]+)</.exec(created.text)![1]!;
    const [endpoint] = (await sb.get('/api/v1/webhook_endpoints')).body.data.filter((e: { url: string }) => e.url === 'https://merchant.example/hooks');
    expect(endpoint.event_types).toEqual(['charge.success', 'charge.failed']);
    expect((await d.get('/dashboard/webhooks')).text).not.toContain(secret);

    await d.follow(await d.post(`/dashboard/webhooks/endpoints/${endpoint.id}/disable`));
    expect((await sb.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body.data.enabled).toBe(false);
    await d.follow(await d.post(`/dashboard/webhooks/endpoints/${endpoint.id}/enable`));
    expect((await sb.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).body.data.enabled).toBe(true);

    const rotated = await d.post(`/dashboard/webhooks/endpoints/${endpoint.id}/rotate`);
    const newSecret = /id="new-secret">(whsec_[^<]+)</.exec(rotated.text)![1]!;
    expect(newSecret).not.toBe(secret);

    const replay = await d.follow(await d.post('/dashboard/webhooks/replay', { endpoint_id: endpoint.id, from: '2026-01-01T00:00', to: '2026-01-02T00:00' }));
    expect(replay.message).toMatch(/Replayed 0 failed deliveries/);

    await d.follow(await d.post(`/dashboard/webhooks/endpoints/${endpoint.id}/delete`));
    expect((await sb.get(`/api/v1/webhook_endpoints/${endpoint.id}`)).status).toBe(404);
  });
});

describe('developer actions', () => {
  it('issues a key (shown once), sets its allowlist, reveals its signing secret and revokes it', async () => {
    const d = await dashboardAs();
    const issued = await d.post('/dashboard/developers/keys', { environment: 'test', scopes: ['read', 'webhooks:write'], role: 'engineering', ip_allowlist: '127.0.0.1' });
    expect(issued.status).toBe(200);
    const key = /id="issued-key">([^<]+)</.exec(issued.text)![1]!;
    const secret = /id="issued-signing-secret">([^<]+)</.exec(issued.text)![1]!;
    const listed = (await sb.get('/api/v1/keys')).body.data.find((k: { key_hint: string; id: string }) => key.endsWith(k.key_hint.slice(-4)) && k.id !== 'key_sandbox_test');
    expect(listed).toMatchObject({ role: 'engineering', scopes: ['read', 'webhooks:write'], ip_allowlist: ['127.0.0.1'] });
    expect((await d.get('/dashboard/developers')).text).not.toContain(key);

    await d.follow(await d.post(`/dashboard/developers/keys/${listed.id}/allowlist`, { entries: '10.0.0.0/8, 127.0.0.1' }));
    expect((await sb.get('/api/v1/keys')).body.data.find((k: { id: string }) => k.id === listed.id).ip_allowlist).toEqual(['10.0.0.0/8', '127.0.0.1']);

    const revealed = await d.post(`/dashboard/developers/keys/${listed.id}/reveal`);
    expect(revealed.text).toContain(secret);

    await d.follow(await d.post(`/dashboard/developers/keys/${listed.id}/revoke`));
    expect((await sb.get('/api/v1/wallet', key)).status).toBe(401);
  });
});

describe('sandbox actions', () => {
  it('takes a provider down and up, freezes and resumes the market, and sets FX', async () => {
    const d = await dashboardAs();
    await d.follow(await d.post('/dashboard/sandbox/providers/mtn-momo', { down: 'true' }));
    expect((await sb.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo').status).toBe('down');
    await d.follow(await d.post('/dashboard/sandbox/providers/mtn-momo', { down: 'false' }));
    expect((await sb.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo').status).toBe('up');

    await d.follow(await d.post('/dashboard/sandbox/market', { action: 'freeze' }));
    expect((await sb.get('/api/v1/sandbox/market')).body.data.frozen).toBe(true);
    await d.follow(await d.post('/dashboard/sandbox/market', { action: 'resume' }));
    expect((await sb.get('/api/v1/sandbox/market')).body.data.frozen).toBe(false);

    await d.follow(await d.post('/dashboard/sandbox/fx', { rate: '15.25' }));
    expect((await sb.get('/api/v1/sandbox/market')).body.data.legs.find((l: { leg: string }) => l.leg === 'FX').value).toBe('15.25');
  });

  it('lists the scenario files with their rules and match counts', async () => {
    const d = await dashboardAs();
    await d.follow(await d.post('/dashboard/wallet/fund', { channel: 'momo', amount: '10.00', msisdn: '0551234987' }));
    const page = await d.get('/dashboard/sandbox');
    const rule = /<tr><td>\d+<\/td><td>momo number 0551234987 succeeds<\/td>.*?<span class="count">(\d+)<\/span>/.exec(page.text);
    expect(Number(rule?.[1])).toBeGreaterThan(0);
    expect(page.text).toContain('momo number 0551234989 times out at the primary');
  });
});

describe('faults on the Sandbox page', () => {
  it('lists the faults in force with their counts, and switches one off', async () => {
    const on = await sb.post('/api/v1/sandbox/faults', { profile: 'slow-responses', route: 'GET /api/v1/wallet', latency_ms: 1 });
    const d = await dashboardAs();
    const page = await d.get('/dashboard/sandbox');
    expect(page.text).toContain('Faults on the API');
    expect(page.text).toMatch(new RegExp(`<code>${on.body.data.id}</code></td><td>slow-responses on GET /api/v1/wallet</td><td>latency</td>`));
    const off = await d.follow(await d.post('/dashboard/sandbox/faults/off', { id: on.body.data.id }));
    expect(off).toMatchObject({ kind: 'ok', message: 'Switched 1 fault(s) off.' });
    expect((await sb.get('/api/v1/sandbox/faults')).body.data).toEqual([]);
    expect(off.page.text).toContain('No faults: the API answers promptly and correctly.');
  });
});

describe('replays on the Sandbox page', () => {
  const PASSING = 'test/fixtures/replay/pass/charge-success.yaml';
  const FAILING = 'test/fixtures/replay/fail/wrong-expectation.yaml';

  it('offers the scripted files, runs one in a sandbox of its own, and shows its steps and timeline', async () => {
    const d = await dashboardAs();
    const page = await d.get('/dashboard/sandbox');
    expect(page.text).toContain(`<option value="${PASSING}">`);
    expect(page.text).toContain(`<option value="${FAILING}">`);
    const clock = (await sb.get('/api/v1/sandbox/clock')).body.data.now;

    const next = await d.follow(await d.post('/dashboard/sandbox/replays', { file: PASSING }));
    expect(next.kind).toBe('ok');
    expect(next.message).toContain(`The replay of ${PASSING} passed`);
    expect(next.page.text).toContain('data-replay-status="passed"');
    const steps = /<table id="replay-steps">[\s\S]*?<\/table>/.exec(next.page.text)![0];
    expect(steps.match(/data-status="passed"/g)).toHaveLength(5);
    const timeline = /<table id="replay-timeline">[\s\S]*?<\/table>/.exec(next.page.text)![0];
    expect(timeline).toContain('POST /api/v1/charges');
    expect(timeline).toMatch(/callback chg_\w+: success -&gt; settled/);
    // This sandbox did not move.
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.now).toBe(clock);
  });

  it('shows a failing replay failed, naming the step and why (the API answers it 422 replay_failed, the report in its details)', async () => {
    const d = await dashboardAs();
    const next = await d.follow(await d.post('/dashboard/sandbox/replays', { file: FAILING }));
    expect(next.kind).toBe('error');
    expect(next.message).toBe(`The replay of ${FAILING} failed at step 3: expect_webhook charge.success.`);
    const steps = /<table id="replay-steps">[\s\S]*?<\/table>/.exec(next.page.text)![0];
    expect(steps.match(/data-status="passed"/g)).toHaveLength(2);
    expect(steps.match(/data-status="failed"/g)).toHaveLength(1);
    expect(next.page.text).toContain('data-replay-status="failed"');
    expect(next.page.text).toMatch(/class="flash error replay-failure"><strong>step 3[^<]*:<\/strong>/);
    expect(next.page.text).toContain('1 later step not run.');
  });

  it("announces the API's refusal of a file it does not know, and runs nothing", async () => {
    const d = await dashboardAs();
    const next = await d.follow(await d.post('/dashboard/sandbox/replays', { file: 'scenarios/nope.yaml' }));
    expect(next.kind).toBe('error');
    expect(next.message).toMatch(/not_found/);
    expect(next.page.text).not.toContain('id="replay-result"');
  });

  it('refuses the run without the CSRF token', async () => {
    const d = await dashboardAs();
    const res = await d.agent.post('/dashboard/sandbox/replays').type('form').send({ file: PASSING });
    expect(res.status).toBe(403);
  });
});

describe('the Quotes list on the Objects page', () => {
  it('lists quotes newest first, filters them by status and side, pages, and opens a quote with its timeline', async () => {
    const quotes: string[] = [];
    for (const side of ['buy', 'sell', 'buy'] as const) {
      const res = await sb.post('/api/v1/trades/quote', { side, asset: 'USDT', network: 'TRC20', fiat_amount: 50_000 });
      expect(res.status).toBe(201);
      quotes.push(res.body.data.reference);
    }
    const d = await dashboardAs();
    const all = await d.get('/dashboard/objects?kind=quotes');
    expect(all.text).toContain('id="kind-quotes" aria-current="page"');
    const listed = [...all.text.matchAll(/<a href="\/dashboard\/objects\/(qt_\w+)">/g)].map((m) => m[1]);
    expect(listed.slice(0, 3)).toEqual([...quotes].reverse());

    const sells = await d.get('/dashboard/objects?kind=quotes&side=sell');
    expect(sells.text).toContain(quotes[1]);
    expect(sells.text).not.toContain(quotes[0]);
    expect(sells.text).toContain('<option value="sell" selected>');
    expect((await d.get('/dashboard/objects?kind=quotes&status=expired')).text).toContain('No quotes with status expired.');

    // Twenty per page: the next page keeps the filter and holds the rest.
    for (let i = 0; i < 20; i++) expect((await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 50_000 })).status).toBe(201);
    const first = await d.get('/dashboard/objects?kind=quotes&side=buy');
    const nextHref = /id="next-page" href="([^"]+)"/.exec(first.text)?.[1]?.replace(/&amp;/g, '&');
    expect(nextHref).toContain('side=buy');
    const second = await d.get(nextHref!);
    const ids = (text: string) => [...text.matchAll(/<a href="\/dashboard\/objects\/(qt_\w+)">/g)].map((m) => m[1]);
    expect(ids(first.text)).toHaveLength(20);
    expect(ids(second.text)).toEqual([quotes[2], quotes[0]]);

    const object = await d.get(`/dashboard/objects/${quotes[0]}`);
    expect(object.status).toBe(200);
    expect(object.text).toContain(`<code>${quotes[0]}</code>`);
    expect(object.text).toContain('id="timeline"');
    // Read by GET /api/v1/trades/quotes/:reference: the quote's facts, and no trade yet.
    expect(object.text).toMatch(/<dt>Side<\/dt><dd>buy<\/dd>/);
    expect(object.text).toMatch(/<dt>Trade<\/dt><dd>—<\/dd>/);
  });
});

describe('roles, as the API decides them', () => {
  it('shows a finance key the refusal of engineering pages and actions, and changes nothing', async () => {
    const finance = await issueKey({ role: 'finance' });
    const d = await dashboardAs(finance.key);
    const webhooks = await d.get('/dashboard/webhooks');
    expect(webhooks.text).toMatch(/role="alert"[^>]*data-code="role_forbidden"/);
    const before = (await sb.get('/api/v1/sandbox/clock')).body.data.now;
    const advance = await d.follow(await d.post('/dashboard/sandbox/clock', { seconds: '60' }));
    expect(advance.kind).toBe('error');
    expect(advance.message).toMatch(/role_forbidden/);
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.now).toBe(before);
  });

  it('refuses an engineering key wallet funding, and charges nothing', async () => {
    const engineering = await issueKey({ role: 'engineering' });
    const d = await dashboardAs(engineering.key);
    const before = (await sb.get('/api/v1/transactions')).body.data.length;
    const fund = await d.follow(await d.post('/dashboard/wallet/fund', { channel: 'momo', amount: '10.00', msisdn: '0551234987' }));
    expect(fund.message).toMatch(/role_forbidden/);
    expect((await sb.get('/api/v1/transactions')).body.data.length).toBe(before);
  });

  it("refuses a ladder step out of order with the API's code", async () => {
    const d = await dashboardAs();
    const step = await d.follow(await d.post('/dashboard/ladder', { action: 'request_access' }));
    expect(step.kind).toBe('error');
    expect(step.message).toMatch(/ladder_out_of_order/);
  });
});
