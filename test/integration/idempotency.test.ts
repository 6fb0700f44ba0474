import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios, parseRule } from '../../src/railyard-scenarios.ts';

// A number whose provider answers slowly, so a second request can arrive while the first is in flight.
const slow = parseRule({
  name: 'slow provider',
  match: { msisdn: '0241234567' },
  collect: { any: { respond: 'accept', latency_ms: 400, callback: { after_seconds: 5, status: 'success', drop: false } } },
});

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox({ rails: { timeout_ms: 3000 } }, [slow, ...loadScenarios([SANDBOX_SCENARIOS]).rules]);
});
afterEach(() => sb.close());

const charge = { amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };

describe('Idempotency-Key', () => {
  it('is required on POST /api/v1/charges and /api/v1/transfers', async () => {
    const res = await sb.charge(charge, { idempotencyKey: null });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'Idempotency-Key', message: 'required' }] } });
    const transfer = await sb.transfer({ ...charge }, { idempotencyKey: null });
    expect(transfer.status).toBe(400);
  });

  it('replays the stored response for the same key and request, without repeating the action', async () => {
    const first = await sb.charge(charge, { idempotencyKey: 'same-1' });
    expect(first.status).toBe(201);
    await sb.advance(10); // the charge settles meanwhile
    const again = await sb.charge(charge, { idempotencyKey: 'same-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body); // the stored response, not today's state
    expect((await sb.get('/api/v1/transactions')).body.data).toHaveLength(1);
    expect((await sb.wallet()).available).toBe(5000 - first.body.data.fees);
  });

  it('treats a reordered but equal JSON body as the same request', async () => {
    const first = await sb.charge(charge, { idempotencyKey: 'order-1' });
    const reordered = await sb.post('/api/v1/charges', undefined, {
      idempotencyKey: 'order-1',
      rawBody: JSON.stringify({ msisdn: charge.msisdn, channel: 'momo', currency: 'GHS', amount: 5000 }),
    });
    expect(reordered.status).toBe(201);
    expect(reordered.body).toEqual(first.body);
  });

  it('refuses the same key with a different request: 422 idempotency_key_reused', async () => {
    await sb.charge(charge, { idempotencyKey: 'reuse-1' });
    const res = await sb.charge({ ...charge, amount: 6000 }, { idempotencyKey: 'reuse-1' });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'idempotency_key_reused', details: { idempotency_key: 'reuse-1' } });
    expect((await sb.get('/api/v1/transactions')).body.data).toHaveLength(1);
  });

  it('refuses the same key while the first request is in flight: 409 idempotency_conflict', async () => {
    const body = { ...charge, msisdn: '0241234567' };
    const first = sb.charge(body, { idempotencyKey: 'flight-1' }).then((r) => r);
    await new Promise((r) => setTimeout(r, 100)); // the first is now waiting on the slow provider
    const second = await sb.charge(body, { idempotencyKey: 'flight-1' });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('idempotency_conflict');
    expect((await first).status).toBe(201);
    const third = await sb.charge(body, { idempotencyKey: 'flight-1' });
    expect(third.status).toBe(201);
    expect(third.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store requests that fail validation, so the key can be used again', async () => {
    const bad = await sb.charge({ ...charge, amount: -1 }, { idempotencyKey: 'fix-me' });
    expect(bad.status).toBe(400);
    const good = await sb.charge(charge, { idempotencyKey: 'fix-me' });
    expect(good.status).toBe(201);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store an insufficient_funds refusal, which created nothing', async () => {
    const transfer = { amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };
    const refused = await sb.transfer(transfer, { idempotencyKey: 'broke-1' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('insufficient_funds');
    await sb.fund(5000);
    // The retry is signed afresh (the harness gives each signature its own timestamp): the
    // same signature twice would be a replay.
    const retried = await sb.transfer(transfer, { idempotencyKey: 'broke-1' });
    expect(retried.status).toBe(201);
  });

  it('stores a provider_unavailable response with the failed charge it recorded', async () => {
    await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true });
    await sb.post('/api/v1/sandbox/providers/hubtel/outage', { down: true });
    const first = await sb.charge(charge, { idempotencyKey: 'down-1' });
    expect(first.status).toBe(502);
    await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: false });
    const again = await sb.charge(charge, { idempotencyKey: 'down-1' });
    expect(again.status).toBe(502);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('scopes keys per environment: the same key in live is a different request', async () => {
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['collections:write', 'read'] })).body.data;
    const inTest = await sb.charge(charge, { idempotencyKey: 'shared-key' });
    const inLive = await sb.charge(charge, { idempotencyKey: 'shared-key', key: live.key });
    expect(inLive.status).toBe(201);
    expect(inLive.headers['idempotent-replayed']).toBeUndefined();
    expect(inLive.body.data.id).not.toBe(inTest.body.data.id);
  });

  it('forgets keys after 24 hours', async () => {
    const first = await sb.charge(charge, { idempotencyKey: 'old-1' });
    await sb.advance(24 * 3600 + 1);
    const later = await sb.charge(charge, { idempotencyKey: 'old-1' });
    expect(later.status).toBe(201);
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });
});
