import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

const body = (msisdn: string, extra: Record<string, unknown> = {}) => ({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn, ...extra });

describe('POST /api/v1/charges', () => {
  it('initiates as pending_provider, posts nothing, and settles on the provider callback', async () => {
    const res = await sb.charge(body('0551234987'));
    expect(res.status).toBe(201);
    expect(res.body.message).toMatch(/initiated/i);
    expect(res.body.data).toMatchObject({
      object: 'charge',
      status: 'pending_provider',
      amount: 10_000,
      currency: 'GHS',
      fees: 100, // 1% collection fee by default
      amount_settled: 9_900,
      channel: 'momo',
      msisdn: '233551234987',
      network: 'MTN',
      provider: 'mtn-momo',
    });
    expect(res.body.data.id).toMatch(/^chg_[0-9a-z]{20}$/);
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
    expect(await sb.ry.store.all("SELECT * FROM ledger_journals WHERE ref_type = 'charge'")).toHaveLength(0);

    await sb.advance(4);
    expect((await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('pending_provider');
    await sb.advance(1); // the scenario's callback comes 5 s after acceptance
    const settled = await sb.get(`/api/v1/charges/${res.body.data.id}`);
    expect(settled.body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 9_900, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['charge.pending', 'charge.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('fails without posting when the customer has insufficient funds', async () => {
    const res = await sb.charge(body('0551234988'));
    expect(res.status).toBe(201);
    await sb.advance(5);
    const failed = (await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data;
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds', provider_reason: 'NOT_ENOUGH_FUNDS' });
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
    expect(await sb.ry.store.all("SELECT * FROM ledger_journals WHERE ref_type = 'charge'")).toHaveLength(0);
    expect(await sb.events(res.body.data.id)).toEqual(['charge.pending', 'charge.failed']);
  });

  it('accepts every MSISDN form and normalises it', async () => {
    for (const form of ['0551234987', '233551234987', '+233551234987', '055 123 4987']) {
      const res = await sb.charge(body(form));
      expect(res.status, form).toBe(201);
      expect(res.body.data.msisdn).toBe('233551234987');
    }
  });

  it.each([
    ['0201234567', 'TELECEL'],
    ['0501234567', 'TELECEL'],
    ['0261234567', 'AT'],
    ['0571234567', 'AT'],
    ['0241234567', 'MTN'],
    ['0591234567', 'MTN'],
  ])('infers the network of %s as %s', async (msisdn, network) => {
    const res = await sb.charge(body(msisdn));
    expect(res.status).toBe(201);
    expect(res.body.data.network).toBe(network);
    // Hubtel is the only provider configured for Telecel and AT.
    expect(res.body.data.provider).toBe(network === 'MTN' ? 'mtn-momo' : 'hubtel');
  });

  it('lets network override the prefix for a ported number', async () => {
    const res = await sb.charge(body('0241234567', { network: 'TELECEL' }));
    expect(res.body.data).toMatchObject({ network: 'TELECEL', provider: 'hubtel' });
  });

  it('asks for network when the prefix names no current network', async () => {
    const res = await sb.charge(body('0231234567'));
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'network', message: 'required for this prefix' }] } });
    const ok = await sb.charge(body('0231234567', { network: 'AT' }));
    expect(ok.status).toBe(201);
  });

  it('applies the configured fee schedule, rounding fees up', async () => {
    await sb.close();
    sb = await startTestSandbox({ fees: { collection: { momo: { bps: 150, fixed: 10, min: 50, max: 1_000 } } } });
    expect((await sb.charge(body('0551234987', { amount: 101 }))).body.data.fees).toBe(50); // 1.515 -> 2 + 10 = 12 -> min 50
    expect((await sb.charge(body('0551234987', { amount: 10_001 }))).body.data.fees).toBe(161); // 150.015 -> 151 + 10
    expect((await sb.charge(body('0551234987', { amount: 1_000_000 }))).body.data.fees).toBe(1_000); // capped
    const tooSmall = await sb.charge(body('0551234987', { amount: 50 }));
    expect(tooSmall.status).toBe(400);
    expect(tooSmall.body.error.details.fields[0].field).toBe('amount');
  });

  it('answers 502 provider_unavailable when every momo provider is down, recording the charge as failed', async () => {
    await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true });
    await sb.post('/api/v1/sandbox/providers/hubtel/outage', { down: true });
    const res = await sb.charge(body('0551234987'));
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_unavailable');
    const chargeId = res.body.error.details.charge_id;
    expect((await sb.get(`/api/v1/charges/${chargeId}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'provider_unavailable', provider: null });
    expect(await sb.events(chargeId)).toEqual(['charge.failed']);
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
  });

  it('fails over to the next provider when the primary is down', async () => {
    await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true });
    const res = await sb.charge(body('0551234987'));
    expect(res.body.data.provider).toBe('hubtel');
    await sb.advance(5);
    expect((await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('success');
  });
});

describe('GET /api/v1/charges/{id}', () => {
  it('answers 404 not_found for an unknown charge', async () => {
    const res = await sb.get('/api/v1/charges/chg_0000000000aaaaaaaaaa');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'not_found', details: { id: 'chg_0000000000aaaaaaaaaa' } });
  });
});

describe('a scenario reject at mtn-momo (issue 20, defect 9)', () => {
  const rejectAtMtn = (behaviour: Record<string, unknown>) =>
    startTestSandbox({}, [
      parseRule({
        name: 'mtn-momo refuses 0241110009',
        match: { msisdn: '0241110009' },
        collect: { 'mtn-momo': behaviour as never, any: { respond: 'accept', callback: { after_seconds: 5, status: 'success' } } },
      }),
    ]);

  it('fails over to hubtel when MTN answers its 500 NOT_ALLOWED, as on any 5xx', async () => {
    const own = await rejectAtMtn({ respond: 'reject', reason: 'NOT_ALLOWED' });
    try {
      const res = await own.charge(body('0241110009'));
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ status: 'pending_provider', provider: 'hubtel' });
      await own.advance(5);
      expect((await own.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('success');
    } finally {
      await own.close();
    }
  });

  it('ends routing on a plain reject: MTN’s 400, a decline on the merits that no other provider is asked about', async () => {
    const own = await rejectAtMtn({ respond: 'reject' });
    try {
      const res = await own.charge(body('0241110009'));
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'provider_declined', provider_reason: 'BAD_REQUEST' });
      const scenarios = await own.get('/api/v1/sandbox/scenarios');
      expect(scenarios.body.data[0].rules[0].matched_count).toBe(1); // mtn-momo only: hubtel was never called
    } finally {
      await own.close();
    }
  });
});
