import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/auth/scopes.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

describe('sandbox helpers', () => {
  it('funds the test wallet with a balanced journal', async () => {
    const res = await sb.post('/api/v1/sandbox/wallet/fund', { amount: 12_345 });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ currency: 'GHS', available: 12_345, reserved: 0 });
    expectBalanced(await sb.trialBalance());
    expect((await sb.trialBalance()).GHS).toBe(0);
  });

  it('reports the virtual clock and advances it, running due jobs in order', async () => {
    const before = await sb.get('/api/v1/sandbox/clock');
    expect(before.body.data).toEqual({ mode: 'virtual', now: '2026-01-01T00:00:00.000Z', pending_jobs: 0, next_job_at: null });
    const a = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }); // settles at +5 s
    await sb.post('/api/v1/sandbox/clock/advance', { seconds: 2 });
    const b = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234988' }); // fails at +7 s
    const mid = await sb.get('/api/v1/sandbox/clock');
    expect(mid.body.data).toMatchObject({ now: '2026-01-01T00:00:02.000Z', next_job_at: '2026-01-01T00:00:05.000Z' });

    const res = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 10 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'virtual', now: '2026-01-01T00:00:12.000Z', jobs_run: 2 });
    const first = (await sb.get(`/api/v1/charges/${a.body.data.id}`)).body.data;
    const second = (await sb.get(`/api/v1/charges/${b.body.data.id}`)).body.data;
    expect(first).toMatchObject({ status: 'success', updated_at: '2026-01-01T00:00:05.000Z' });
    expect(second).toMatchObject({ status: 'failed', updated_at: '2026-01-01T00:00:07.000Z' });
  });

  it('refuses to advance a system clock', async () => {
    await sb.close();
    sb = await startTestSandbox({ clock: 'system' });
    const res = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.mode).toBe('system');
  });

  it('lists providers with channels, networks, priority, status and base URL', async () => {
    const res = await sb.get('/api/v1/sandbox/providers');
    const mock = expect.objectContaining({ base_url: expect.any(String), credentials: expect.any(Array), notes: expect.any(Array) });
    expect(res.body.data).toEqual([
      { name: 'bank-rail', channels: ['bank'], networks: [], priority: 1, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/bank-rail`, upstream: 'mock', mock },
      { name: 'bills', channels: ['bills'], networks: [], priority: 1, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/bills`, upstream: 'mock', mock },
      { name: 'card-processor', channels: ['card'], networks: [], priority: 1, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/card-processor`, upstream: 'mock', mock },
      { name: 'direct-debit', channels: ['bank_debit'], networks: [], priority: 1, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/direct-debit`, upstream: 'mock', mock },
      { name: 'mtn-momo', channels: ['momo'], networks: ['MTN'], priority: 1, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/mtn-momo`, upstream: 'mock', mock },
      { name: 'hubtel', channels: ['momo'], networks: ['MTN', 'TELECEL', 'AT'], priority: 2, enabled: true, status: 'up', base_url: `${sb.baseUrl}/mocks/hubtel`, upstream: 'mock', mock },
      { name: 'paystack', channels: ['momo', 'bank'], networks: ['MTN', 'TELECEL', 'AT'], priority: 3, enabled: false, status: 'up', base_url: `${sb.baseUrl}/mocks/paystack`, upstream: 'mock', mock },
    ]);
  });

  it("shows each mock's base URL and the credentials it accepts, so a provider's own SDK can be pointed at it", async () => {
    const providers: { name: string; mock: { base_url: string; credentials: { name: string; where: string; value: string | null }[]; notes: string[] } }[] = (await sb.get('/api/v1/sandbox/providers'))
      .body.data;
    const mock = (name: string) => providers.find((p) => p.name === name)!.mock;
    const value = (name: string, credential: string) => mock(name).credentials.find((c) => c.name === credential)?.value;

    expect(mock('mtn-momo').base_url).toBe(`${sb.baseUrl}/mocks/mtn-momo`);
    expect(value('mtn-momo', 'collection subscription key')).toBe('railyard-mtn-collection-key');
    expect(value('mtn-momo', 'disbursement subscription key')).toBe('railyard-mtn-disbursement-key');
    expect(value('mtn-momo', 'API user')).toBe('railyard-mtn-api-user');
    expect(value('mtn-momo', 'API key')).toBe('railyard-mtn-api-key');
    expect(value('mtn-momo', 'target environment')).toBe('sandbox');
    expect(mock('mtn-momo').credentials[0]!.where).toContain('Ocp-Apim-Subscription-Key');
    expect(mock('mtn-momo').notes.join(' ')).toContain('POST /v1_0/apiuser');

    expect(mock('hubtel').base_url).toBe(`${sb.baseUrl}/mocks/hubtel`);
    expect(mock('hubtel').credentials.map((c) => [c.name, c.value])).toEqual([
      ['client id', 'railyard-hubtel-client'],
      ['client secret', 'railyard-hubtel-secret'],
      ['POS Sales ID', '2017101'],
      ['Prepaid Deposit ID', '2017102'],
    ]);
    expect(mock('bank-rail').credentials.map((c) => [c.name, c.value])).toEqual([
      ['participant id', 'railyard-bank-participant'],
      ['signing secret', 'railyard-bank-secret'],
    ]);
    expect(mock('paystack').base_url).toBe(`${sb.baseUrl}/mocks/paystack`);
    expect(mock('paystack').credentials.map((c) => [c.name, c.value])).toEqual([['secret key', 'sk_test_railyard_paystack']]);
    expect(mock('paystack').notes.join(' ')).toContain('0551234987');
    expect(mock('card-processor').credentials.map((c) => [c.name, c.value])).toEqual([
      ['api key', 'ck_test_railyard_card_processor'],
      ['webhook secret', 'whsec_railyard_card_processor'],
    ]);
    expect(mock('card-processor').notes.join(' ')).toContain('4084 0840 8408 4081');
    expect(mock('direct-debit').credentials.map((c) => [c.name, c.value])).toEqual([
      ['api key', 'dd_test_railyard_direct_debit'],
      ['signing secret', 'dds_railyard_direct_debit'],
    ]);
    expect(mock('direct-debit').notes.join(' ')).toContain('/api/v1/sandbox/collections/{id}/approve');
    expect(mock('bills').base_url).toBe(`${sb.baseUrl}/mocks/bills`);
    expect(mock('bills').credentials.map((c) => [c.name, c.value])).toEqual([
      ['api key', 'bk_test_railyard_bills'],
      ['callback signing secret', 'railyard-bills-callback-secret'],
    ]);
  });

  it('takes the credentials it shows: the MTN subscription key it lists gets a token from its mock', async () => {
    const mtn = (await sb.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo').mock;
    const credential = (name: string) => mtn.credentials.find((c: { name: string }) => c.name === name).value as string;
    const token = await fetch(`${mtn.base_url}/collection/token/`, {
      method: 'POST',
      headers: {
        'Ocp-Apim-Subscription-Key': credential('collection subscription key'),
        Authorization: `Basic ${Buffer.from(`${credential('API user')}:${credential('API key')}`).toString('base64')}`,
      },
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ token_type: 'access_token', expires_in: 3600 });
  });

  it('shows a real upstream when an adapter is pointed at one by configuration, and then hides the secrets its mock shares with it', async () => {
    await sb.close();
    sb = await startTestSandbox({ providers: { 'mtn-momo': { base_url: 'https://sandbox.momodeveloper.mtn.com', currency: 'EUR', api_key: 'real-mtn-api-key' } } });
    const mtn = (await sb.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo');
    expect(mtn).toMatchObject({ base_url: 'https://sandbox.momodeveloper.mtn.com', upstream: 'real' });
    expect(mtn.mock.base_url).toBe(`${sb.baseUrl}/mocks/mtn-momo`);
    const shown = Object.fromEntries(mtn.mock.credentials.map((c: { name: string; value: string | null }) => [c.name, c.value]));
    expect(shown).toMatchObject({ 'API key': null, 'collection subscription key': null, 'API user': 'railyard-mtn-api-user', 'target environment': 'sandbox' });
    expect(JSON.stringify(mtn)).not.toContain('real-mtn-api-key');
  });

  it('takes a provider down and brings it back', async () => {
    const down = await sb.post('/api/v1/sandbox/providers/hubtel/outage', { down: true });
    expect(down.body.data).toMatchObject({ name: 'hubtel', status: 'down' });
    // The mock itself answers 503 while down, as the real upstream would.
    const mock = await sb.http.get('/mocks/hubtel/txnstatus/transactions/2017101/status?clientReference=x');
    expect(mock.status).toBe(503);
    const up = await sb.post('/api/v1/sandbox/providers/hubtel/outage', { down: false });
    expect(up.body.data.status).toBe('up');
  });

  it('answers 404 for an unknown provider', async () => {
    const res = await sb.post('/api/v1/sandbox/providers/acme/outage', { down: true });
    expect(res.status).toBe(404);
  });

  it('issues restricted keys whose signing secret signs transfers', async () => {
    const res = await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['transfers:write'] });
    expect(res.status).toBe(201);
    const issued = res.body.data;
    expect(issued.key).toMatch(/^sk_test_[A-Za-z0-9]{16,}$/);
    expect(issued.signing_secret).toMatch(/^sig_test_/);
    expect(issued.scopes).toEqual(['transfers:write']);
    await sb.fund(10_000);
    const transfer = await sb.transfer({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: issued.key, signingSecret: issued.signing_secret });
    expect(transfer.status).toBe(201);
  });
});

describe('sandbox controls that isolate a test run (contract verification against a running railyard uses them)', () => {
  const put = (path: string, body: unknown) =>
    sb.http
      .put(path)
      .set('authorization', `Bearer ${sb.key}`)
      .send(body as object);

  it('creates a fresh merchant whose test key sees an empty wallet, no events and no Idempotency-Keys of the sandbox merchant', async () => {
    await sb.fund(50_000);
    const first = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'order-1' });
    expect(first.status).toBe(201);

    const res = await sb.post('/api/v1/sandbox/merchants', { name: 'contract state' });
    expect(res.status).toBe(201);
    const merchant = res.body.data;
    expect(merchant).toMatchObject({
      id: expect.stringMatching(/^mch_/),
      name: 'contract state',
      environment: 'test',
      key: expect.stringMatching(/^sk_test_/),
      signing_secret: expect.stringMatching(/^sig_test_/),
    });
    expect(merchant.scopes).toEqual([...SCOPES]);
    expect(merchant.role).toBe('admin');

    expect(await sb.wallet(merchant.key)).toEqual({ currency: 'GHS', available: 0, reserved: 0 });
    expect((await sb.get('/api/v1/events', merchant.key)).body.data).toEqual([]);
    // The same Idempotency-Key is a new request for the new merchant, not a replay of the sandbox merchant's.
    const again = await sb.charge({ amount: 7000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: merchant.key, idempotencyKey: 'order-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.id).not.toBe(first.body.data.id);
    expect((await sb.get(`/api/v1/charges/${first.body.data.id}`, merchant.key)).status).toBe(404);
    // And its key signs: a transfer from the new merchant's own (funded) wallet.
    await sb.fund(10_000, merchant.key);
    const transfer = await sb.transfer({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: merchant.key, signingSecret: merchant.signing_secret });
    expect(transfer.status).toBe(201);
    expect(await sb.wallet()).toMatchObject({ available: 50_000 });
  });

  it("gives the new merchant's key only the role of the key that asked: an engineering key mints no finance power", async () => {
    const engineering = (await sb.post('/api/v1/keys', { environment: 'test', scopes: [...SCOPES], role: 'engineering' })).body.data;
    const res = await sb.post('/api/v1/sandbox/merchants', {}, { key: engineering.key });
    expect(res.status).toBe(201);
    expect(res.body.data.role).toBe('engineering');
    const fund = await sb.post('/api/v1/sandbox/wallet/fund', { amount: 1_000 }, { key: res.body.data.key });
    expect(fund.status).toBe(403);
    expect(fund.body.error.code).toBe('role_forbidden');
  });

  it('refuses live keys: merchants, rails and scenario restarts are test-mode helpers', async () => {
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    for (const res of [
      await sb.post('/api/v1/sandbox/merchants', {}, { key: live }),
      await sb.post('/api/v1/sandbox/scenarios/restart', {}, { key: live }),
      await sb.http.put('/api/v1/sandbox/rails').set('authorization', `Bearer ${live}`).send({}),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
  });

  it('tunes the rails from the configuration: Paystack switched on and first, a short timeout; {} restores the configuration', async () => {
    const tuned = await put('/api/v1/sandbox/rails', { timeout_ms: 100, providers: { paystack: { enabled: true, priority: 1 }, 'mtn-momo': { priority: 2 } } });
    expect(tuned.status).toBe(200);
    expect(tuned.body.data).toMatchObject({ timeout_ms: 100, timeout_overridden: true });
    expect(tuned.body.data.providers.find((p: { name: string }) => p.name === 'paystack')).toMatchObject({ enabled: true, priority: 1 });
    const charge = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(charge.body.data.provider).toBe('paystack');

    // A new tuning starts from the configuration: Paystack is off again, and only the timeout holds.
    const shorter = await put('/api/v1/sandbox/rails', { timeout_ms: 50 });
    expect(shorter.body.data.providers.find((p: { name: string }) => p.name === 'paystack')).toMatchObject({ enabled: false, priority: 3 });
    // mtn-momo holds 0551234989 past the timeout: the attempt says which timeout applied.
    const slow = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' });
    expect(slow.body.data.provider).toBe('hubtel');
    const timeline = (await sb.get(`/api/v1/objects/${slow.body.data.id}/timeline`)).body.data;
    expect(JSON.stringify(timeline)).toContain('within 50 ms');

    const restored = await put('/api/v1/sandbox/rails', {});
    expect(restored.body.data).toMatchObject({ timeout_ms: 250, timeout_overridden: false });
    expect((await sb.get('/api/v1/sandbox/rails')).body.data).toEqual(restored.body.data);
    expect((await sb.get('/api/v1/sandbox/providers')).body.data.map((p: { name: string; priority: number; enabled: boolean }) => [p.name, p.priority, p.enabled])).toEqual(
      restored.body.data.providers.map((p: { name: string; priority: number; enabled: boolean }) => [p.name, p.priority, p.enabled]),
    );
  });

  it('answers a tuning naming an unknown provider with a validation_error naming it, and changes nothing', async () => {
    const res = await put('/api/v1/sandbox/rails', { timeout_ms: 100, providers: { acme: { priority: 1 } } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields).toContainEqual({ field: 'providers.acme', message: 'no provider named acme' });
    expect((await sb.get('/api/v1/sandbox/rails')).body.data.timeout_overridden).toBe(false);
  });
});

describe('restarting the scenario rules', () => {
  it('starts every sequence at its first behaviour again', async () => {
    await sb.close();
    sb = await startTestSandbox({}, [
      {
        name: 'first fails, then succeeds',
        match: { msisdn: { equals: '0551234987' } },
        collect: {
          any: [
            { respond: 'accept', callback: { after_seconds: 1, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } },
            { respond: 'accept', callback: { after_seconds: 1, status: 'success' } },
          ],
        },
      },
    ] as never);
    const status = async () => {
      const charge = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
      await sb.advance(2);
      return (await sb.get(`/api/v1/charges/${charge.body.data.id}`)).body.data.status;
    };
    expect([await status(), await status()]).toEqual(['failed', 'success']);
    const res = await sb.post('/api/v1/sandbox/scenarios/restart', {});
    expect(res.status).toBe(200);
    expect(await status()).toBe('failed');
  });
});

describe('service basics', () => {
  it('answers /healthz', async () => {
    const res = await sb.http.get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', clock: 'virtual' });
  });

  it('answers unknown routes with the not_found envelope', async () => {
    const res = await sb.get('/api/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: false, message: 'No route for GET /api/v1/nope', error: { code: 'not_found' } });
  });
});
