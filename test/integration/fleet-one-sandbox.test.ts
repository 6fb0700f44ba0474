// One sandbox, whatever instance answers (issue 23): what a user sets through one instance of a
// fleet on one PostgreSQL database, every other instance shows: the market, dashboard sessions,
// the requests inspector, and the clock's advances.
import { describe, expect, it } from 'vitest';
import { fleetHarness } from '../support/fleet-harness.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const { postgres, cleanups } = fleetHarness();

/** `n` served sandboxes on one fresh database, started one after another (as a fleet rolls out). */
async function fleet(n: number, overrides: Record<string, unknown> = {}): Promise<TestSandbox[]> {
  const db = await (await postgres()).createDatabase();
  const sandboxes: TestSandbox[] = [];
  for (let i = 0; i < n; i++) {
    const sb = await startTestSandbox({ db, ...overrides });
    cleanups.push(() => sb.close());
    sandboxes.push(sb);
  }
  return sandboxes;
}

const quote = (sb: TestSandbox) => sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });

describe('the market is the fleet’s', () => {
  it('walks the same prices on every instance: the same benchmark at the same virtual instant, wherever it is read', async () => {
    // Different configured seeds: the first start's seed is the database's.
    const [a] = await fleet(1, { seed: 7 });
    const b = await startTestSandbox({ db: a!.ry.config.db, seed: 8 });
    cleanups.push(() => b.close());
    for (let hour = 0; hour < 3; hour++) {
      const [onA, onB] = [await a!.get('/api/v1/sandbox/market'), await b.get('/api/v1/sandbox/market')];
      expect(onA.status).toBe(200);
      expect(onB.body.data.benchmarks).toEqual(onA.body.data.benchmarks);
      expect(onB.body.data.legs.map((l: { value: string }) => l.value)).toEqual(onA.body.data.legs.map((l: { value: string }) => l.value));
      const [qa, qb] = [await quote(a!), await quote(b)];
      expect(qb.body.data.benchmark_rate).toBe(qa.body.data.benchmark_rate);
      expect((await (hour % 2 ? a! : b).post('/api/v1/sandbox/clock/advance', { seconds: 3_600 + 37 })).status).toBe(200);
    }
  });

  it('quotes on one instance the price pinned through another, and shows a freeze, an FX rate and a resume everywhere', async () => {
    const [a, b, c] = await fleet(3);
    const pinned = await a!.http.put('/api/v1/sandbox/rates/usd/USDT').set('Authorization', `Bearer ${a!.key}`).send({ price: '1.0123' });
    expect(pinned.status).toBe(200);
    const fx = await c!.http.put('/api/v1/sandbox/rates/fx').set('Authorization', `Bearer ${c!.key}`).send({ rate: '15' });
    expect(fx.status).toBe(200);
    const onB = await quote(b!);
    expect(onB.status).toBe(201);
    expect(onB.body.data).toMatchObject({ benchmark_rate: 15.1845, fx_rate: 15 }); // 1.0123 × 15

    expect((await a!.post('/api/v1/sandbox/market/freeze', {})).status).toBe(200);
    const frozenOn = async (sb: TestSandbox) => (await sb.get('/api/v1/sandbox/market')).body.data;
    const onC = await frozenOn(c!);
    expect(onC.frozen).toBe(true);
    expect(onC.legs.find((l: { leg: string }) => l.leg === 'USDT')).toMatchObject({ value: '1.0123', source: 'pinned' });
    // Frozen long enough, the USDC leg goes stale everywhere: quoting halts on every instance.
    expect((await b!.post('/api/v1/sandbox/clock/advance', { seconds: 600 })).status).toBe(200);
    const stale = await c!.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDC', network: 'ERC20', fiat_amount: 100_000 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('rate_expired');

    expect((await b!.post('/api/v1/sandbox/market/resume', {})).status).toBe(200);
    const [afterA, afterC] = [await frozenOn(a!), await frozenOn(c!)];
    expect(afterA.frozen).toBe(false);
    expect(afterC).toEqual(afterA);
    expect(afterA.legs.find((l: { leg: string }) => l.leg === 'USDT')).toMatchObject({ value: '1.0123', source: 'market' });
    expect((await quote(c!)).status).toBe(201);
  });
});

describe('clock advances across the fleet', () => {
  it('adds up two advances asked for at once on two instances: the second waits for the first and starts where it ended', async () => {
    const [a, b] = await fleet(2);
    const start = a!.ry.clock.now();
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    const runs: string[] = [];
    // A job one second in holds the first advance until the test lets it go.
    a!.ry.scheduler.register('test.hold', async () => {
      runs.push('a');
      await held;
    });
    b!.ry.scheduler.register('test.hold', async () => {
      runs.push('b');
      await held;
    });
    await a!.ry.scheduler.schedule(a!.ry.store, { kind: 'test.hold', runAt: start + 1_000, payload: {} });
    const answered: string[] = [];
    const first = a!.post('/api/v1/sandbox/clock/advance', { seconds: 10, wait: true }).then((res) => (answered.push('a'), res));
    await expect.poll(() => runs).toEqual(['a']);
    const second = b!.post('/api/v1/sandbox/clock/advance', { seconds: 60, wait: true }).then((res) => (answered.push('b'), res));
    // Long enough for B's advance to have read the shared clock, had it not waited for its turn.
    await new Promise((done) => setTimeout(done, 300));
    release();
    const [onA, onB] = await Promise.all([first, second]);
    expect(onA.status).toBe(200);
    expect(onB.status).toBe(200);
    expect(answered).toEqual(['a', 'b']);
    expect(Date.parse(onA.body.data.now)).toBe(start + 10_000);
    expect(Date.parse(onB.body.data.now)).toBe(start + 70_000);
    expect(Date.parse((await a!.get('/api/v1/sandbox/clock')).body.data.now)).toBe(start + 70_000);
    expect(runs).toEqual(['a']);
  });
});

/** The session cookie an answer sets, as a browser would send it back. */
const cookieOf = (res: { headers: Record<string, unknown> }) =>
  ([] as string[])
    .concat((res.headers['set-cookie'] as string[] | undefined) ?? [])
    .find((c) => c.startsWith('railyard_session='))
    ?.split(';')[0] ?? '';
const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

describe('dashboard sessions across the fleet', () => {
  it('signs in on one instance and is served by another, its message and its sign-out seen by a third', async () => {
    const [a, b, c] = await fleet(3);
    // The sign-in form comes from A, the form is posted to B (as round-robin would send them).
    const form = await a!.http.get('/dashboard/sign-in');
    expect(form.status).toBe(200);
    const signIn = await b!.http
      .post('/dashboard/sign-in')
      .set('Cookie', cookieOf(form))
      .type('form')
      .send({ csrf: csrfOf(form.text), api_key: a!.key });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe('/dashboard');
    const cookie = cookieOf(signIn);
    expect(cookie).not.toBe(cookieOf(form));
    // C serves the page the redirect asks for, with the message B left in the session.
    const home = await c!.http.get('/dashboard').set('Cookie', cookie);
    expect(home.status).toBe(200);
    expect(home.text).toContain('Signed in with a test key');
    const wallet = await a!.http.get('/dashboard/wallet').set('Cookie', cookie);
    expect(wallet.status).toBe(200);
    // The pre-login id names nothing anywhere.
    expect((await a!.http.get('/dashboard').set('Cookie', cookieOf(form))).headers.location).toBe('/dashboard/sign-in');
    // Signed out on A, the session is gone on B too.
    const out = await a!.http
      .post('/dashboard/sign-out')
      .set('Cookie', cookie)
      .type('form')
      .send({ csrf: csrfOf(home.text) });
    expect(out.status).toBe(303);
    const after = await b!.http.get('/dashboard').set('Cookie', cookie);
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/dashboard/sign-in');
  });
});

describe('the requests inspector across the fleet', () => {
  const paths = async (sb: TestSandbox) => ((await sb.get('/api/v1/requests?page_size=100')).body.data as { path: string }[]).map((e) => e.path);

  it('lists on every instance the requests every instance served, newest first, in one ring per environment capped at max_requests', async () => {
    const [a, b] = await fleet(2, { inspector: { max_requests: 5 } });
    const charge = await a!.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'seen-anywhere' });
    expect(charge.status).toBe(201);
    // B lists A's request (written once A answered), with the mock call it caused.
    await expect.poll(async () => ((await b!.get('/api/v1/requests?kind=merchant')).body.data as { idempotency_key: string | null }[]).map((e) => e.idempotency_key)).toContain('seen-anywhere');
    const timeline = await b!.get(`/api/v1/objects/${charge.body.data.id}/timeline`);
    expect(timeline.body.data.entries.find((e: { kind: string }) => e.kind === 'request').details).toMatchObject({ idempotency_key: 'seen-anywhere', method: 'POST', path: '/api/v1/charges' });

    for (let i = 1; i <= 12; i++) {
      const serving = i % 2 ? a! : b!;
      expect((await serving.get(`/api/v1/charges/chg_missing${i}`)).status).toBe(404);
      // The instance that served a request lists it at once (entries are numbered as they are written).
      expect((await paths(serving))[0]).toBe(`/api/v1/charges/chg_missing${i}`);
    }
    const expected = [12, 11, 10, 9, 8].map((i) => `/api/v1/charges/chg_missing${i}`);
    expect(await paths(a!)).toEqual(expected);
    expect(await paths(b!)).toEqual(expected);
    // The ring never holds more than the cap: old entries were replaced in place.
    expect(await a!.ry.store.get("SELECT COUNT(*) AS n FROM request_log WHERE environment = 'test'")).toEqual({ n: 5 });
    // Pages follow one another across instances.
    const first = await a!.get('/api/v1/requests?page_size=2');
    const next = await b!.get(`/api/v1/requests?page_size=2&cursor=${first.body.meta.next_cursor}`);
    expect(next.body.data.map((e: { path: string }) => e.path)).toEqual(expected.slice(2, 4));
  });
});

describe('API keys across the fleet', () => {
  it('serves a key issued on one instance on every other, and refuses it everywhere from the moment it is revoked', async () => {
    const [a, b] = await fleet(2);
    const issued = await a!.post('/api/v1/keys', { environment: 'test', scopes: ['read'] });
    expect(issued.status).toBe(201);
    const { id, key } = issued.body.data as { id: string; key: string };
    // Each request reads its key with the fleet's state, in one statement: what any instance wrote.
    expect((await b!.get('/api/v1/transactions', key)).status).toBe(200);
    expect((await b!.post(`/api/v1/keys/${id}/revoke`, {})).status).toBe(200);
    expect((await a!.get('/api/v1/transactions', key)).status).toBe(401);
    expect((await b!.get('/api/v1/transactions', key)).status).toBe(401);
    // A key that never was is refused the same way, and the sandbox key still serves.
    expect((await a!.get('/api/v1/transactions', 'sk_test_never_issued_0000000000000000')).status).toBe(401);
    expect((await a!.get('/api/v1/transactions')).status).toBe(200);
  });
});

describe('the rails’ tuning across the fleet', () => {
  it('holds a tuning made on one instance on every other, and its reset too', async () => {
    const [a, b] = await fleet(2);
    const tuned = await a!.http
      .put('/api/v1/sandbox/rails')
      .set('Authorization', `Bearer ${a!.key}`)
      .send({ timeout_ms: 400, providers: { 'mtn-momo': { enabled: false } } });
    expect(tuned.status).toBe(200);
    const railsOn = async (sb: TestSandbox) => (await sb.get('/api/v1/sandbox/rails')).body.data;
    const onB = await railsOn(b!);
    expect(onB).toMatchObject({ timeout_ms: 400, timeout_overridden: true });
    expect(onB.providers.find((p: { name: string }) => p.name === 'mtn-momo').enabled).toBe(false);
    // B routes around the provider A switched off.
    const resolved = await b!.post('/api/v1/resolve/momo-name', { msisdn: '0551234987' });
    expect(resolved.status).toBe(200);
    expect(resolved.body.data.provider).not.toBe('mtn-momo');
    expect((await b!.http.put('/api/v1/sandbox/rails').set('Authorization', `Bearer ${b!.key}`).send({})).status).toBe(200);
    const onA = await railsOn(a!);
    expect(onA.timeout_overridden).toBe(false);
    expect(onA.providers.find((p: { name: string }) => p.name === 'mtn-momo').enabled).toBe(true);
  });
});
