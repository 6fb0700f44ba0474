import { afterEach, describe, expect, it } from 'vitest';
import { hmacSha512Hex } from '../../src/kernel/secrets.ts';
import type { ScenarioRuleInput } from '../../src/scenarios/scenario-schema.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

// Paystack through the whole service: its adapter, its mock on the engine, its signed webhooks,
// the router's failover in both directions, and the ledger.

const SECRET = 'sk_test_railyard_paystack';
const TEST_NUMBER = '0551234987'; // Paystack's Ghana test number (provider mtn)
const GCB = '040100';

const first = { providers: { paystack: { enabled: true, priority: 1 }, 'mtn-momo': { priority: 2 }, hubtel: { priority: 3 }, 'bank-rail': { priority: 2 } } };
const last = { providers: { paystack: { enabled: true } } };

const rule = (input: ScenarioRuleInput) => parseRule(input);
const settles = (after_seconds: number) => ({ respond: 'accept' as const, callback: { after_seconds, status: 'success' as const } });

let sb: TestSandbox;
afterEach(() => sb?.close());

const charge = (msisdn: string) => sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn });
const chargeStatus = async (id: string) => (await sb.get(`/api/v1/charges/${id}`)).body.data;
const transferStatus = async (id: string) => (await sb.get(`/api/v1/transfers/${id}`)).body.data;

describe('Paystack as the first provider', () => {
  it('takes a mobile-money charge and settles it on its charge.success webhook: wallet credited, ledger balanced', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'test number', match: { msisdn: TEST_NUMBER }, collect: { paystack: settles(5) } })]);
    const res = await charge(TEST_NUMBER);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'pending_provider', provider: 'paystack', amount: 10_000, fees: 100 });

    await sb.advance(5); // the webhook, long before the first status poll (60 s)
    expect(await chargeStatus(res.body.data.id)).toMatchObject({ status: 'success', provider: 'paystack', amount_settled: 9_900 });
    expect(await sb.events(res.body.data.id)).toEqual(['charge.pending', 'charge.success']);
    expect(await sb.wallet()).toMatchObject({ available: 9_900, reserved: 0 });
    expectBalanced(await sb.trialBalance());
    const accepted = await sb.ry.store.all<{ provider: string }>("SELECT provider FROM rail_attempts WHERE ref_type = 'charge' AND outcome = 'accepted'");
    expect(accepted.map((a) => a.provider)).toEqual(['paystack']);
  });

  it('finds out a failed charge by verifying it, since Paystack sends no webhook for one', async () => {
    sb = await startTestSandbox(first, [
      rule({ name: 'no funds', match: { msisdn: '0241110009' }, collect: { paystack: { respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: 'insufficient_funds' } } } }),
    ]);
    const res = await charge('0241110009');
    await sb.advance(5);
    expect((await chargeStatus(res.body.data.id)).status).toBe('pending_provider');
    await sb.advance(60); // the status poll
    expect(await chargeStatus(res.body.data.id)).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds', provider: 'paystack' });
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
  });

  it('pays out to a bank account through a transfer recipient and settles on transfer.success', async () => {
    sb = await startTestSandbox(first, [
      rule({ name: 'gcb account', match: { bank_code: GCB, account_number: '1000000012' }, resolve: { paystack: { name: 'Ama Owusu' } }, payout: { paystack: settles(5) } }),
    ]);
    await sb.fund(50_000);
    const resolved = await sb.post('/api/v1/resolve/bank-name', { bank_code: GCB, account_number: '1000000012' });
    expect(resolved.body.data).toMatchObject({ name: 'Ama Owusu' });
    const res = await sb.transfer({ amount: 20_000, currency: 'GHS', channel: 'bank', bank_code: GCB, account_number: '1000000012', bank_account_name: 'Ama Owusu' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'pending', provider: 'paystack' });

    await sb.advance(5);
    expect(await transferStatus(res.body.data.id)).toMatchObject({ status: 'success', provider: 'paystack' });
    expect(await sb.events(res.body.data.id)).toEqual(['transfer.pending', 'transfer.success']);
    const wallet = await sb.wallet();
    expect(wallet.reserved).toBe(0);
    expect(wallet.available).toBeLessThan(30_000); // the amount and its fee left the wallet
    expectBalanced(await sb.trialBalance());
  });

  it('pays out to a wallet, and gives the money back when Paystack reports the transfer reversed', async () => {
    sb = await startTestSandbox(first, [
      rule({ name: 'reversed', match: { msisdn: '0241110010' }, payout: { paystack: { respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: 'reversed' } } } }),
    ]);
    await sb.fund(50_000);
    const res = await sb.transfer({ amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0241110010' });
    expect(res.body.data).toMatchObject({ status: 'pending', provider: 'paystack' });
    await sb.advance(5);
    expect(await transferStatus(res.body.data.id)).toMatchObject({ status: 'failed', provider: 'paystack' });
    expect(await sb.wallet()).toMatchObject({ available: 50_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });
});

describe('Paystack in failover', () => {
  it.each([
    ['times out', { respond: 'timeout' as const }],
    ['answers 5xx', { respond: 'server_error' as const, http_status: 502 }],
  ])('fails over from Paystack when it %s: the next provider serves the charge', async (_what, behaviour) => {
    sb = await startTestSandbox(first, [rule({ name: 'paystack fails', match: { msisdn: '0241110011' }, collect: { paystack: behaviour, any: settles(3) } })]);
    const res = await charge('0241110011');
    expect(res.status).toBe(201);
    expect(res.body.data.provider).toBe('mtn-momo');
    await sb.advance(3);
    expect(await chargeStatus(res.body.data.id)).toMatchObject({ status: 'success', provider: 'mtn-momo' });
    const attempts = await sb.ry.store.all<{ provider: string; outcome: string }>("SELECT provider, outcome FROM rail_attempts WHERE ref_type = 'charge' ORDER BY seq");
    expect(attempts.map((a) => `${a.provider} ${a.outcome}`)).toEqual([`paystack ${behaviour.respond === 'timeout' ? 'timeout' : 'server'}`, 'mtn-momo accepted']);
    expectBalanced(await sb.trialBalance());
  });

  it('fails over to Paystack, last by priority, when the providers before it fail: Paystack settles', async () => {
    sb = await startTestSandbox(last, [
      rule({
        name: 'only paystack',
        match: { msisdn: '0241110012' },
        collect: { 'mtn-momo': { respond: 'timeout' }, hubtel: { respond: 'server_error', http_status: 500 }, paystack: settles(4) },
      }),
    ]);
    const res = await charge('0241110012');
    expect(res.status).toBe(201);
    expect(res.body.data.provider).toBe('paystack');
    await sb.advance(4);
    expect(await chargeStatus(res.body.data.id)).toMatchObject({ status: 'success', provider: 'paystack', amount_settled: 9_900 });
    expect(await sb.wallet()).toMatchObject({ available: 9_900 });
    expectBalanced(await sb.trialBalance());
  });

  it('fails over to Paystack for a bank payout when the bank rail is down', async () => {
    sb = await startTestSandbox(last, [rule({ name: 'gcb', match: { bank_code: GCB, account_number: '1000000013' }, payout: { any: settles(3) } })]);
    await sb.fund(50_000);
    await sb.post('/api/v1/sandbox/providers/bank-rail/outage', { down: true });
    const res = await sb.transfer({ amount: 10_000, currency: 'GHS', channel: 'bank', bank_code: GCB, account_number: '1000000013', bank_account_name: 'Kojo Asare' });
    expect(res.body.data).toMatchObject({ status: 'pending', provider: 'paystack' });
    await sb.advance(3);
    expect((await transferStatus(res.body.data.id)).status).toBe('success');
    expectBalanced(await sb.trialBalance());
  });

  it('is not a candidate while disabled, as it is by default', async () => {
    sb = await startTestSandbox({}, [rule({ name: 'all down', match: { msisdn: '0241110014' }, collect: { any: { respond: 'server_error' } } })]);
    const res = await charge('0241110014');
    expect(res.status).toBe(502);
    const attempts = await sb.ry.store.all<{ provider: string }>("SELECT provider FROM rail_attempts WHERE ref_type = 'charge'");
    expect(attempts.map((a) => a.provider)).not.toContain('paystack');
  });
});

describe("Paystack's webhook signature", () => {
  it('refuses a webhook whose x-paystack-signature is not the HMAC-SHA512 of its body, and settles on a genuine one', async () => {
    // The charge is taken but Paystack never calls back on its own: only the posted webhooks count.
    sb = await startTestSandbox(first, [
      rule({ name: 'silent', match: { msisdn: '0241110015' }, collect: { paystack: { respond: 'accept', callback: { after_seconds: 3_600, status: 'success', drop: true } } } }),
    ]);
    const res = await charge('0241110015');
    const reference = res.body.data.id as string;
    const raw = JSON.stringify({ event: 'charge.success', data: { reference, status: 'success', amount: 10_000, currency: 'GHS', channel: 'mobile_money' } });
    const post = (signature: string | undefined) => {
      let req = sb.http.post('/internal/callbacks/paystack').set('Content-Type', 'application/json');
      if (signature !== undefined) req = req.set('x-paystack-signature', signature);
      return req.send(raw);
    };

    expect((await post(undefined)).status).toBe(401);
    expect((await post(hmacSha512Hex('sk_test_someone_else', raw))).status).toBe(401);
    // Right key, other bytes: a body changed in transit.
    expect((await post(hmacSha512Hex(SECRET, raw.replace('10000', '1000000')))).status).toBe(401);
    expect((await chargeStatus(reference)).status).toBe('pending_provider');
    expect(await sb.wallet()).toMatchObject({ available: 0 });

    expect((await post(hmacSha512Hex(SECRET, raw))).status).toBe(200);
    expect((await chargeStatus(reference)).status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 9_900 });
    expectBalanced(await sb.trialBalance());
  });
});

// What a merchant's own Paystack client would read about the service's traffic: the service's
// charges and transfers, as the Paystack mock keeps them, through Paystack's documented reads.
describe("the service's Paystack traffic, read back through Paystack's documented endpoints", () => {
  const paystack = (path: string) => sb.http.get(`/mocks/paystack${path}`).set('Authorization', `Bearer ${SECRET}`);

  it('a charge the service made verifies with the documented fields, is listed, and Check Pending Charge follows it to success', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'test number', match: { msisdn: TEST_NUMBER }, collect: { paystack: settles(5) } })]);
    const res = await charge(TEST_NUMBER);
    const reference = res.body.data.id as string;
    expect((await paystack(`/charge/${reference}`)).body.data).toMatchObject({ reference, status: 'pay_offline' });
    await sb.advance(5);
    expect((await chargeStatus(reference)).status).toBe('success');

    const verified = (await paystack(`/transaction/verify/${reference}`)).body.data;
    expect(verified).toMatchObject({
      status: 'success',
      message: null,
      metadata: { description: expect.any(String) },
      fees: expect.any(Number),
      paidAt: expect.any(String),
      createdAt: expect.any(String),
      transaction_date: expect.any(String),
      requested_amount: 10_000,
      customer: { id: expect.any(Number), customer_code: expect.stringMatching(/^CUS_/) },
      authorization: { authorization_code: expect.stringMatching(/^AUTH_/), reusable: false, bin: '055XXX', last4: 'X987' },
    });
    expect(verified.authorization).not.toHaveProperty('mobile_money_number');
    expect((await paystack(`/charge/${reference}`)).body.data.status).toBe('success');
    const listed = await paystack('/transaction?perPage=10');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t: { reference: string }) => t.reference)).toEqual([reference]);
    expect(listed.body.meta).toMatchObject({ total: 1, page: 1 });
  });

  it('a payout the service made is initiated against the recipient id, and its final state is readable by id and by code', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'gcb account', match: { bank_code: GCB, account_number: '1000000012' }, payout: { paystack: settles(5) } })]);
    await sb.fund(50_000);
    const res = await sb.transfer({ amount: 20_000, currency: 'GHS', channel: 'bank', bank_code: GCB, account_number: '1000000012', bank_account_name: 'Ama Owusu' });
    const reference = res.body.data.id as string;
    const pending = (await paystack(`/transfer/verify/${reference}`)).body.data;
    expect(pending).toMatchObject({ status: 'pending', recipient: { type: 'ghipss', details: { bank_code: GCB } } });
    await sb.advance(5);
    expect((await transferStatus(reference)).status).toBe('success');
    const byCode = await paystack(`/transfer/${pending.transfer_code}`);
    const byId = await paystack(`/transfer/${pending.id}`);
    expect(byCode.status).toBe(200);
    expect(byCode.body.data).toMatchObject({ reference, status: 'success', fee_charged: 0, session: { provider: null, id: null }, integration: expect.any(Number), failures: null, titan_code: null });
    expect(byId.body).toEqual(byCode.body);
  });

  it('refuses a reference the service already used with code duplicate_reference, which the service reads as its own earlier charge', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'test number', match: { msisdn: TEST_NUMBER }, collect: { paystack: settles(5) } })]);
    const reference = (await charge(TEST_NUMBER)).body.data.id as string;
    const again = await sb.http
      .post('/mocks/paystack/charge')
      .set('Authorization', `Bearer ${SECRET}`)
      .send({ email: 'a@example.com', amount: 10_000, reference, mobile_money: { phone: TEST_NUMBER, provider: 'mtn' } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ status: false, message: 'Duplicate Transaction Reference', meta: { nextStep: expect.any(String) }, type: 'validation_error', code: 'duplicate_reference' });
  });
});

describe('a Telecel collection through Paystack waits for its voucher', () => {
  const TELECEL = '0201110040';
  const collect = (customer: string, key: string) => sb.post('/v1/collections', { amount: '100.00', currency: 'GHS', channel: 'momo', customer }, { idempotencyKey: key });

  it('stays pending_approval with an OTP step however long, and settles once the voucher is submitted', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'telecel', match: { msisdn: TELECEL }, collect: { paystack: settles(5) } })]);
    const res = await collect(TELECEL, 'telecel-voucher-1');
    expect(res.status).toBe(201);
    const { id } = res.body.data;
    expect(res.body.data).toMatchObject({
      status: 'pending_approval',
      provider: 'paystack',
      next_action: { type: 'otp', message: expect.stringMatching(/voucher/), submit_url: `/v1/collections/${id}/otp` },
    });
    await sb.advance(120); // the settlement fell due, and the status polls ran: no voucher, no money
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('pending_approval');
    expect(await sb.wallet()).toMatchObject({ available: 0 });

    const submitted = await sb.post(`/v1/collections/${id}/otp`, { otp: '482913' });
    expect(submitted.status).toBe(200);
    expect(submitted.body.data).toMatchObject({ status: 'settled', provider: 'paystack', next_action: null });
    expect(await sb.wallet()).toMatchObject({ available: 10_000 - submitted.body.data.fees });
    expectBalanced(await sb.trialBalance());
  });

  it('a voucher submitted before the settlement is due clears the OTP step; the charge then settles when due', async () => {
    sb = await startTestSandbox(first, [rule({ name: 'telecel', match: { msisdn: TELECEL }, collect: { paystack: settles(30) } })]);
    const { id } = (await collect(TELECEL, 'telecel-voucher-2')).body.data;
    const submitted = await sb.post(`/v1/collections/${id}/otp`, { otp: '482913' });
    expect(submitted.body.data).toMatchObject({ status: 'pending_approval', next_action: null });
    await sb.advance(30);
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('settled');
  });
});
