// A byte-identical retry of a signed request is answered from the store whatever the age of its
// timestamp (DESIGN.md, request signing): the stored answer, or 409 with Retry-After while the
// first is in flight. Only a key the server has never seen needs a fresh timestamp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/kernel/sign-request.ts';
import type { Clock } from '../../src/kernel/clock.ts';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

/** Real time, which the test moves on: the retry comes minutes after the original, without the wait. */
class LaterClock implements Clock {
  readonly kind = 'system' as const;
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  passSeconds(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

const sandboxes: TestSandbox[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(overrides: Record<string, unknown> = {}, clock = new LaterClock()): Promise<{ sb: TestSandbox; clock: LaterClock }> {
  const sb = await startTestSandbox(overrides, loadScenarios([SANDBOX_SCENARIOS]).rules, [], { wallClock: clock });
  sandboxes.push(sb);
  return { sb, clock };
}

/** A request exactly as a client sends it, and as its automatic retry sends it again. */
interface SignedBytes {
  path: string;
  contentType: string;
  rawBody: string;
  headers: Record<string, string>;
}

function signedNow(sb: TestSandbox, path: string, idempotencyKey: string, rawBody: string, contentType = 'application/json'): SignedBytes {
  return signedAt(sb, Math.floor(sb.ry.wallClock.now() / 1000), path, idempotencyKey, rawBody, contentType);
}

/** Signed by the merchant with the timestamp `unixSeconds`, which may be long past. */
function signedAt(sb: TestSandbox, unixSeconds: number, path: string, idempotencyKey: string, rawBody: string, contentType = 'application/json'): SignedBytes {
  const ts = String(unixSeconds);
  return {
    path,
    contentType,
    rawBody,
    headers: {
      'Idempotency-Key': idempotencyKey,
      'X-Service-Timestamp': ts,
      'X-Service-Signature': signRequest(sb.signingSecret, ts, { method: 'POST', pathAndQuery: path, idempotencyKey, rawBody }),
    },
  };
}

function send(sb: TestSandbox, bytes: SignedBytes) {
  return sb.http.post(bytes.path).set('Authorization', `Bearer ${sb.key}`).set('Content-Type', bytes.contentType).set(bytes.headers).send(bytes.rawBody);
}

/** Sends `original`, then the same bytes 301 s later: the retry gets the stored answer and moves no money. */
async function expectLateRetryReplayed(sb: TestSandbox, clock: LaterClock, original: SignedBytes) {
  const first = await send(sb, original);
  expect(first.status).toBe(201);
  const walletAfterFirst = await sb.wallet();
  clock.passSeconds(301);
  const retry = await send(sb, original);
  expect(retry.status).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(retry.body).toEqual(first.body);
  expect(await sb.wallet()).toEqual(walletAfterFirst);
  return { first, walletAfterFirst };
}

const transfer = JSON.stringify({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
const transferCount = async (sb: TestSandbox) => Number((await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM transfers'))!.n);

describe('a byte-identical retry of a signed transfer more than 300 s later', () => {
  it('gets the stored answer with Idempotent-Replayed: true, and moves no money', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const original = signedNow(sb, '/api/v1/transfers', 'late-retry', transfer);
    const { first } = await expectLateRetryReplayed(sb, clock, original);
    expect(await transferCount(sb)).toBe(1);

    clock.passSeconds(3 * 3600); // a long outage: still within the key's 24 hours
    const muchLater = await send(sb, original);
    expect(muchLater.status).toBe(201);
    expect(muchLater.body).toEqual(first.body);
    expect(await transferCount(sb)).toBe(1);
  });

  it('still refuses an old timestamp with 401 stale on a key the server has never seen, and moves nothing', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const neverSent = signedNow(sb, '/api/v1/transfers', 'never-seen', transfer);
    clock.passSeconds(301);
    const res = await send(sb, neverSent);
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual({ code: 'invalid_signature', details: { reason: 'stale' } });
    expect(await sb.wallet()).toMatchObject({ available: 50_000, reserved: 0 });
    expect(await transferCount(sb)).toBe(0);
  });

  it('refuses an old timestamp under a seen key when the request differs (a new attempt needs a fresh timestamp)', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const seenAt = Math.floor(sb.ry.wallClock.now() / 1000);
    expect((await send(sb, signedNow(sb, '/api/v1/transfers', 'seen-key', transfer))).status).toBe(201);
    clock.passSeconds(301);
    // Validly signed by the merchant, but with another body and the old timestamp.
    const other = JSON.stringify({ amount: 7_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    const res = await send(sb, signedAt(sb, seenAt, '/api/v1/transfers', 'seen-key', other));
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('stale');
    expect(await transferCount(sb)).toBe(1);
  });

  it('refuses an old timestamp on a body nested thousands deep 401 stale, never 500 (no such request was ever stored)', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const seenAt = Math.floor(sb.ry.wallClock.now() / 1000);
    expect((await send(sb, signedNow(sb, '/api/v1/transfers', 'deep-key', transfer))).status).toBe(201);
    clock.passSeconds(301);
    const deep = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`;
    const res = await send(sb, signedAt(sb, seenAt, '/api/v1/transfers', 'deep-key', deep));
    expect(res.status).toBe(401);
    expect(res.body.error.details.reason).toBe('stale');
    expect(await transferCount(sb)).toBe(1);
  });

  it('answers a wrong signature with an old timestamp on a seen key 401 mismatch, revealing nothing', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const original = signedNow(sb, '/api/v1/transfers', 'seen-then-forged', transfer);
    expect((await send(sb, original)).status).toBe(201);
    clock.passSeconds(301);
    const forged = await send(sb, { ...original, headers: { ...original.headers, 'X-Service-Signature': 'ab'.repeat(32) } });
    expect(forged.status).toBe(401);
    expect(forged.body.error).toEqual({ code: 'invalid_signature', details: { reason: 'mismatch' } });
    expect(forged.headers['idempotent-replayed']).toBeUndefined();
  });

  it('accepts a re-signed new attempt (fresh timestamp, same Idempotency-Key, same body) as the same request', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const first = await send(sb, signedNow(sb, '/api/v1/transfers', 're-signed', transfer));
    clock.passSeconds(600);
    const again = await send(sb, signedNow(sb, '/api/v1/transfers', 're-signed', transfer));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await transferCount(sb)).toBe(1);
  });

  it('answers 409 idempotency_conflict with Retry-After while the first is still in flight in this process', async () => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const original = signedNow(sb, '/api/v1/transfers', 'in-flight-late', transfer);
    const first = await send(sb, original);
    // Where the first stands while its provider call is still running here: its key in flight, this boot's.
    await sb.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', boot = ?, response_status = NULL, response_body = NULL WHERE resource_id = ?", [sb.ry.boot, first.body.data.id]);
    clock.passSeconds(301);
    const retry = await send(sb, original);
    expect(retry.status).toBe(409);
    expect(retry.body.error).toMatchObject({ code: 'idempotency_conflict', details: { idempotency_key: 'in-flight-late' } });
    expect(retry.headers['retry-after']).toBe('1');
    expect(await transferCount(sb)).toBe(1);
  });
});

describe('a byte-identical retry after a restart that took more than 300 s', () => {
  function tempDb(): string {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-signed-retry-'));
    dirs.push(dir);
    return join(dir, 'railyard.db');
  }

  it('is answered from the store on the restarted server, with no new transfer', async () => {
    const db = tempDb();
    const { sb: before } = await start({ db });
    await before.fund(50_000);
    const original = signedNow(before, '/api/v1/transfers', 'across-restart', transfer);
    const first = await send(before, original);
    expect(first.status).toBe(201);
    const port = Number(new URL(before.baseUrl).port);
    const virtualNow = before.ry.clock.now();
    await before.close();
    sandboxes.splice(sandboxes.indexOf(before), 1);

    const later = new LaterClock();
    later.passSeconds(10 * 60); // the outage
    const { sb: after } = await start({ db, port, virtual_start: new Date(virtualNow).toISOString() }, later);
    const retry = await send(after, original);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await transferCount(after)).toBe(1);
    expect(await after.wallet()).toMatchObject({ available: 50_000 - 5_000 - first.body.data.fees, reserved: 5_000 + first.body.data.fees });
  });

  it('is answered with the recovered claim when the stop cut the first off in flight', async () => {
    const db = tempDb();
    const { sb: before } = await start({ db });
    await before.fund(50_000);
    const original = signedNow(before, '/api/v1/transfers', 'orphaned-then-late', transfer);
    const first = await send(before, original);
    // What a stop between the claim and the provider's answer leaves: the key in flight, this boot's.
    await before.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', response_status = NULL, response_body = NULL WHERE resource_id = ?", [first.body.data.id]);
    await before.ry.store.run('UPDATE transfers SET provider = NULL, provider_reference = NULL WHERE id = ?', [first.body.data.id]);
    await before.ry.store.run('DELETE FROM rail_attempts WHERE ref_id = ?', [first.body.data.id]);
    const port = Number(new URL(before.baseUrl).port);
    const virtualNow = before.ry.clock.now();
    await before.close();
    sandboxes.splice(sandboxes.indexOf(before), 1);

    const later = new LaterClock();
    later.passSeconds(10 * 60);
    const { sb: after } = await start({ db, port, virtual_start: new Date(virtualNow).toISOString() }, later);
    const retry = await send(after, original);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending', provider: 'mtn-momo' });
    expect(await transferCount(after)).toBe(1);
  });
});

describe('every signed route answers a late byte-identical retry from the store', () => {
  it.each([
    ['POST /v1/payouts (form-encoded)', '/v1/payouts', 'application/x-www-form-urlencoded', 'amount=50.00&currency=GHS&channel=momo&msisdn=0551234987'],
    ['POST /v1/payouts/bulk', '/v1/payouts/bulk', 'application/json', JSON.stringify({ items: [{ amount: '20.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' }] })],
    ['POST /v1/bills', '/v1/bills', 'application/json', JSON.stringify({ category: 'airtime', customer: '0241234567', amount: '5.00', currency: 'GHS' })],
  ])('%s', async (_name, path, contentType, rawBody) => {
    const { sb, clock } = await start();
    await sb.fund(50_000);
    const original = signedNow(sb, path, `late-${path}`, rawBody, contentType);
    const { walletAfterFirst } = await expectLateRetryReplayed(sb, clock, original);

    const neverSeen = signedNow(sb, path, `never-${path}`, rawBody, contentType);
    clock.passSeconds(301);
    const stale = await send(sb, neverSeen);
    expect(stale.status).toBe(401);
    expect(stale.body.error.details.reason).toBe('stale');
    expect(await sb.wallet()).toEqual(walletAfterFirst);
  });

  it('POST /api/v1/trades', async () => {
    const { sb, clock } = await start({ trading: { market: { volatility_bps: 0 } } });
    await sb.fund(500_000);
    const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
    expect(quote.status).toBe(201);
    const rawBody = JSON.stringify({ quote_reference: quote.body.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' });
    const original = signedNow(sb, '/api/v1/trades', 'late-trade', rawBody);
    await expectLateRetryReplayed(sb, clock, original);
  });
});

describe('GET /openapi.json', () => {
  it('documents Retry-After on every 409 that can be idempotency_conflict', async () => {
    const { sb } = await start();
    const spec = (await sb.http.get('/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>> };
    const conflicts = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, op]) => op.responses['409']?.description.includes('idempotency_conflict'))
        .map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, retryAfter: op.responses['409']!.headers?.['Retry-After'] !== undefined })),
    );
    expect(conflicts.length).toBeGreaterThan(5);
    expect(conflicts.filter((c) => !c.retryAfter)).toEqual([]);
  });
});
