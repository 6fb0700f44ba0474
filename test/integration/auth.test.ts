import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signingPayload, signRequest } from '../../src/kernel/sign-request.ts';
import { requestHash } from '../../src/idempotency/idempotency-service.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

async function issueKey(environment: 'test' | 'live', scopes: string[]) {
  const res = await sb.post('/api/v1/sandbox/keys', { environment, scopes });
  expect(res.status).toBe(201);
  return res.body.data as { key: string; signing_secret: string; id: string };
}

const momoTransfer = { amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };

describe('API keys', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a non-Bearer scheme', 'Basic abc'],
    ['a key of the wrong shape', 'Bearer pk_test_abcdefghijklmnopqrstu'],
    ['an unknown test key', 'Bearer sk_test_unknownunknownunknown'],
    ['an unknown live key', 'Bearer sk_live_unknownunknownunknown'],
  ])('rejects %s with 401 unauthorized', async (_name, header) => {
    const req = sb.http.get('/api/v1/wallet');
    const res = header ? await req.set('Authorization', header) : await req;
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: false, error: { code: 'unauthorized' } });
    expect(typeof res.body.message).toBe('string');
  });

  it('stores keys only as hashes', async () => {
    const issued = await issueKey('test', ['read']);
    const rows = await sb.ry.store.all<{ key_hash: string }>('SELECT key_hash FROM api_keys');
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(issued.key);
    expect(dump).not.toContain(sb.key);
  });

  it('answers 403 forbidden, naming the scope, when the key lacks it', async () => {
    const readOnly = await issueKey('test', ['read']);
    const charge = await sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: readOnly.key });
    expect(charge.status).toBe(403);
    expect(charge.body.error).toEqual({ code: 'forbidden', details: { required_scope: 'collections:write' } });

    const transfer = await sb.transfer(momoTransfer, { key: readOnly.key, signingSecret: readOnly.signing_secret });
    expect(transfer.status).toBe(403);
    expect(transfer.body.error.details.required_scope).toBe('transfers:write');

    const collectOnly = await issueKey('test', ['collections:write']);
    const read = await sb.get('/api/v1/wallet', collectOnly.key);
    expect(read.status).toBe(403);
    expect(read.body.error.details.required_scope).toBe('read');
    const resolve = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0551234987' }, { key: collectOnly.key });
    expect(resolve.status).toBe(403);
  });

  it('lets a key grant only scopes it holds', async () => {
    const readOnly = await issueKey('test', ['read']);
    const res = await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read', 'transfers:write'] }, { key: readOnly.key });
    expect(res.status).toBe(403);
    expect(res.body.error.details.scopes).toEqual(['transfers:write']);
  });

  it('refuses a live key on every sandbox helper with 403', async () => {
    const live = await issueKey('live', ['read', 'collections:write', 'transfers:write']);
    for (const [method, path, body] of [
      ['post', '/api/v1/sandbox/wallet/fund', { amount: 100 }],
      ['post', '/api/v1/sandbox/clock/advance', { seconds: 1 }],
      ['get', '/api/v1/sandbox/clock', undefined],
      ['get', '/api/v1/sandbox/providers', undefined],
      ['post', '/api/v1/sandbox/providers/hubtel/outage', { down: true }],
      ['post', '/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] }],
    ] as const) {
      const res = method === 'get' ? await sb.get(path, live.key) : await sb.post(path, body, { key: live.key });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code, path).toBe('forbidden');
    }
  });

  it('keeps test and live data apart', async () => {
    const live = await issueKey('live', ['read', 'collections:write']);
    await sb.fund(10_000);
    const testCharge = await sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(testCharge.status).toBe(201);
    expect(testCharge.body.data.livemode).toBe(false);

    expect(await sb.wallet(live.key)).toEqual({ currency: 'GHS', available: 0, reserved: 0 });
    const liveList = await sb.get('/api/v1/transactions', live.key);
    expect(liveList.body.data).toEqual([]);
    const crossRead = await sb.get(`/api/v1/charges/${testCharge.body.data.id}`, live.key);
    expect(crossRead.status).toBe(404);

    const liveCharge = await sb.charge({ amount: 2000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: live.key });
    expect(liveCharge.status).toBe(201);
    expect(liveCharge.body.data.livemode).toBe(true);
    await sb.advance(10);
    expect((await sb.wallet(live.key)).available).toBe(2000 - liveCharge.body.data.fees);
    expect((await sb.wallet()).available).toBe(10_000 + 1000 - testCharge.body.data.fees);
    const testList = await sb.get('/api/v1/transactions');
    expect(testList.body.data.map((t: { id: string }) => t.id)).toEqual([testCharge.body.data.id]);
  });
});

describe('request signing on POST /api/v1/transfers', () => {
  beforeEach(() => sb.fund(100_000));

  it('accepts a correctly signed request', async () => {
    const res = await sb.transfer(momoTransfer);
    expect(res.status).toBe(201);
  });

  it('rejects a missing signature with 401 invalid_signature', async () => {
    const res = await sb.transfer(momoTransfer, { sign: false });
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual({ code: 'invalid_signature', details: { reason: 'missing' } });
  });

  it.each([
    ['301 s in the past', -301],
    // 302: the server reads its clock a moment after the client, and should that moment cross a
    // second boundary, a client's +301 is the server's +300, which is inside the window.
    ['302 s in the future', 302],
  ])('rejects a stale timestamp (%s)', async (_name, offset) => {
    const res = await sb.transfer(momoTransfer, { timestamp: Math.floor(sb.ry.wallClock.now() / 1000) + offset });
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('stale');
  });

  it('accepts a timestamp just inside the 300 s window', async () => {
    const res = await sb.transfer(momoTransfer, { timestamp: Math.floor(sb.ry.wallClock.now() / 1000) - 299 });
    expect(res.status).toBe(201);
  });

  /** A transfer sent exactly as given: what an HTTP client's automatic retry sends again. */
  function rawTransfer(headers: Record<string, string>, rawBody: string) {
    let req = sb.http.post('/api/v1/transfers').set('Authorization', `Bearer ${sb.key}`).set('Content-Type', 'application/json');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    return req.send(rawBody);
  }
  const signedHeaders = (idempotencyKey: string, rawBody: string, ts = String(Math.floor(sb.ry.wallClock.now() / 1000))) => ({
    'Idempotency-Key': idempotencyKey,
    'X-Service-Timestamp': ts,
    'X-Service-Signature': signRequest(sb.signingSecret, ts, { method: 'POST', pathAndQuery: '/api/v1/transfers', idempotencyKey, rawBody }),
  });

  it('signs timestamp, method, path and query, Idempotency-Key and raw body, joined by dots', () => {
    expect(signingPayload('1767225600', { method: 'post', pathAndQuery: '/api/v1/transfers?x=1', idempotencyKey: 'key-1', rawBody: '{"a":1}' })).toBe(
      '1767225600.POST./api/v1/transfers?x=1.key-1.{"a":1}',
    );
    expect(signingPayload('1767225600', { method: 'GET', pathAndQuery: '/p', rawBody: '' })).toBe('1767225600.GET./p..');
  });

  it('answers a byte-identical retry with the stored response, never a 401', async () => {
    const raw = JSON.stringify(momoTransfer);
    const headers = signedHeaders('retry-1', raw);
    const first = await rawTransfer(headers, raw);
    expect(first.status).toBe(201);
    const retry = await rawTransfer(headers, raw);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await sb.wallet()).toMatchObject({ reserved: momoTransfer.amount + first.body.data.fees });
  });

  it('answers a byte-identical retry of a request still in flight with 409 idempotency_conflict', async () => {
    const raw = JSON.stringify({ ...momoTransfer, msisdn: '0551234990' });
    const headers = signedHeaders('retry-in-flight', raw);
    // The first holds its key while the provider is slow (a hold-open number); the retry meets it.
    await sb.ry.store.run(
      "INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, boot, created_at, expires_at) VALUES ('test', ?, 'retry-in-flight', ?, 'in_flight', 'trf_inflight', ?, 0, ?)",
      [sb.ry.sandbox.merchantId, requestHash('POST', '/api/v1/transfers', JSON.parse(raw)), sb.ry.boot, sb.ry.clock.now() + 60_000],
    );
    const retry = await rawTransfer(headers, raw);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_conflict');
  });

  it('accepts two requests with identical bodies and distinct keys in the same second', async () => {
    const raw = JSON.stringify(momoTransfer);
    const ts = String(Math.floor(sb.ry.wallClock.now() / 1000));
    const a = await rawTransfer(signedHeaders('same-body-a', raw, ts), raw);
    const b = await rawTransfer(signedHeaders('same-body-b', raw, ts), raw);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
    expect(await sb.wallet()).toMatchObject({ reserved: 2 * (momoTransfer.amount + a.body.data.fees) });
  });

  it('refuses a captured signature replayed under a new Idempotency-Key, and changes nothing', async () => {
    const raw = JSON.stringify(momoTransfer);
    const captured = signedHeaders('captured-a', raw);
    expect((await rawTransfer(captured, raw)).status).toBe(201);
    const walletBefore = await sb.wallet();
    const replayed = await rawTransfer({ ...captured, 'Idempotency-Key': 'captured-b' }, raw);
    expect(replayed.status).toBe(401);
    expect(replayed.body.error).toMatchObject({ code: 'invalid_signature', details: { reason: 'mismatch' } });
    const dropped = await rawTransfer({ 'X-Service-Timestamp': captured['X-Service-Timestamp'], 'X-Service-Signature': captured['X-Service-Signature'] }, raw);
    expect(dropped.status).toBe(401);
    expect(await sb.wallet()).toEqual(walletBefore);
    expect((await sb.get('/api/v1/transactions')).body.data).toHaveLength(1);
  });

  it('rejects a tampered body, path, key or secret, and changes nothing', async () => {
    const signedBody = JSON.stringify(momoTransfer);
    const headers = signedHeaders('tamper-1', signedBody);
    const tampered = await rawTransfer(headers, JSON.stringify({ ...momoTransfer, amount: 99_000 }));
    expect(tampered.status).toBe(401);
    expect(tampered.body.error.details.reason).toBe('mismatch');

    const wrongPath = await sb.http.post('/api/v1/transfers?x=1').set('Authorization', `Bearer ${sb.key}`).set(headers).set('Content-Type', 'application/json').send(signedBody);
    expect(wrongPath.status).toBe(401);

    const wrongSecret = await sb.transfer(momoTransfer, { signingSecret: 'sig_test_not_the_right_secret_at_all' });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error.details.reason).toBe('mismatch');

    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });

  it('checks the signature before the scope-free body validation, so an unsigned bad body is 401 not 400', async () => {
    const res = await sb.transfer({ amount: 'lots' }, { sign: false });
    expect(res.status).toBe(401);
  });
});
