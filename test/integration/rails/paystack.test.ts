import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hmacSha512Hex } from '../../../src/kernel/secrets.ts';
import { createPaystackMock, paystackGatewayResponse } from '../../../src/providers/paystack/mock.ts';
import { PaystackAdapter, paystackFailureReason } from '../../../src/providers/paystack/adapter.ts';
import { RailError, type CollectRequest, type InboundCallback, type PayoutRequest } from '../../../src/rails/provider-port.ts';
import type { Behaviour } from '../../../src/scenarios/scenario-schema.ts';
import type { ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { callbackReceiver, engineWorld, serve } from '../../unit/mock-engine/engine-fixture.ts';
import { checkWireResponse } from '../../support/wire-schema-check.ts';

// The Paystack wire module (on the mock engine) against the Paystack adapter, over real HTTP.

const SECRET = 'sk_test_paystack_wire_0c9f';
const MTN = '233551234987'; // Paystack's test number, normalised
const TELECEL = '233201234567';

interface Harness {
  base: string;
  adapter: PaystackAdapter;
  adapterWith(secretKey: string): PaystackAdapter;
  webhooks: InboundCallback[];
  advance(seconds: number): Promise<void>;
  behave(rule: (query: RailQuery) => Partial<Behaviour> | undefined): void;
  call(method: string, path: string, body?: unknown, secret?: string): Promise<{ status: number; body: any }>;
}

let h: Harness;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  let rule: (query: RailQuery) => Partial<Behaviour> | undefined = () => undefined;
  const world = await engineWorld({
    rule: (query) => {
      const behaviour = rule(query);
      return behaviour ? { rule: 'test', behaviour: { respond: 'accept', ...behaviour } as ProviderBehaviour } : undefined;
    },
  });
  const receiver = callbackReceiver();
  const hooks = await serve(receiver.app);
  const mock = await serve(express().use('/mocks/paystack', createPaystackMock(world.ctx, { secretKey: SECRET, webhookUrl: `${hooks.base}/internal/callbacks/paystack` })));
  closers.push(hooks.close, mock.close);
  const adapterWith = (secretKey: string) =>
    new PaystackAdapter(
      { secretKey, channels: ['momo', 'bank'], networks: ['MTN', 'TELECEL', 'AT'], customerEmailDomain: 'example.com' },
      { selfBaseUrl: () => mock.base, uuid: () => '00000000-0000-4000-8000-000000000000', timeoutMs: 300, clock: world.clock },
    );
  const webhooks: InboundCallback[] = [];
  h = {
    base: `${mock.base}/mocks/paystack`,
    adapter: adapterWith(SECRET),
    adapterWith,
    webhooks,
    async advance(seconds) {
      await world.scheduler.advanceBy(seconds * 1000);
      for (const r of receiver.received.splice(0)) {
        webhooks.push({ method: r.method, subpath: r.path.replace('/internal/callbacks/paystack', '') || '/', headers: r.headers, rawBody: r.body, body: JSON.parse(r.body) });
      }
    },
    behave: (next) => {
      rule = next;
    },
    async call(method, path, body, secret = SECRET) {
      const res = await fetch(`${mock.base}/mocks/paystack${path}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

let counter = 0;
const ref = (prefix: 'chg' | 'trf') => `${prefix}_paystackwire${String(++counter).padStart(9, '0')}`;
const collect = (reference: string, msisdn = MTN): CollectRequest => ({ reference, amount: 2_500, currency: 'GHS', msisdn, network: msisdn === TELECEL ? 'TELECEL' : 'MTN', description: 'wire test' });
const momoPayout = (reference: string, msisdn = '233241110020'): PayoutRequest => ({ reference, amount: 1_500, currency: 'GHS', channel: 'momo', msisdn, description: 'wire test' });

describe('the Paystack mock', () => {
  it('refuses a call without its secret key, in Paystack words, and the adapter hears a refusal', async () => {
    expect(await h.call('GET', '/bank?currency=GHS', undefined, 'sk_test_wrong')).toEqual({
      status: 401,
      body: { status: false, message: 'Invalid key', meta: { nextStep: expect.any(String) }, type: 'validation_error', code: 'invalid_key' },
    });
    const error = await h
      .adapterWith('sk_test_wrong')
      .collect(collect(ref('chg')))
      .catch((e) => e);
    expect(error).toBeInstanceOf(RailError);
    expect(error).toMatchObject({ kind: 'rejected', detail: { httpStatus: 401 } });
  });

  it('answers a charge with pay_offline on MTN and AT, and send_otp (a voucher) on Telecel', async () => {
    const charge = (phone: string, provider: string) =>
      h.call('POST', '/charge', { email: 'ama@example.com', amount: 1000, currency: 'GHS', reference: ref('chg'), mobile_money: { phone, provider } });
    expect((await charge('0551234987', 'mtn')).body).toMatchObject({
      status: true,
      message: 'Charge attempted',
      data: { status: 'pay_offline', display_text: expect.stringMatching(/authorization/) },
    });
    expect((await charge('0201234567', 'vod')).body.data).toMatchObject({ status: 'send_otp', display_text: expect.stringMatching(/voucher/) });
    expect((await charge('0271234567', 'atl')).body.data.status).toBe('pay_offline');
  });

  it('refuses a malformed charge with a 400 and takes nothing', async () => {
    const reference = ref('chg');
    const refused = await h.call('POST', '/charge', { email: 'ama@example.com', amount: 10.5, reference, mobile_money: { phone: '0551234987', provider: 'mtn' } });
    expect(refused).toEqual({ status: 400, body: { status: false, message: 'Invalid Amount Sent', meta: { nextStep: expect.any(String) }, type: 'validation_error', code: 'invalid_params' } });
    expect((await h.call('GET', `/transaction/verify/${reference}`)).status).toBe(404);
  });

  it('gives the same recipient code for the same wallet or account', async () => {
    const recipient = { type: 'ghipss', name: 'Ama Owusu', account_number: '1000000012', bank_code: '040100', currency: 'GHS' };
    const a = await h.call('POST', '/transferrecipient', recipient);
    const b = await h.call('POST', '/transferrecipient', recipient);
    expect(a.status).toBe(201);
    expect(a.body.data).toMatchObject({ recipient_code: expect.stringMatching(/^RCP_/), type: 'ghipss', details: { bank_name: 'GCB' } });
    expect(b.body.data.recipient_code).toBe(a.body.data.recipient_code);
    expect((await h.call('POST', '/transferrecipient', { ...recipient, type: 'mobile_money' })).status).toBe(400);
  });

  it('lists the Ghana banks and wallets it pays to', async () => {
    const wallets = await h.call('GET', '/bank?currency=GHS&type=mobile_money');
    expect(wallets.body.data.map((b: { code: string }) => b.code)).toEqual(['MTN', 'VOD', 'ATL']);
  });
});

describe('the Paystack adapter against its mock', () => {
  it('collects: pending until the webhook, which carries a valid x-paystack-signature and parses to a success', async () => {
    const reference = ref('chg');
    const accepted = await h.adapter.collect(collect(reference));
    expect(accepted.providerReference).toBe(reference);
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: reference })).toEqual({ status: 'pending' });
    await h.advance(3); // the mock's default callback delay
    expect(h.webhooks).toHaveLength(1);
    const [webhook] = h.webhooks;
    expect(webhook!.headers['x-paystack-signature']).toBe(hmacSha512Hex(SECRET, webhook!.rawBody));
    expect(h.adapter.verifyCallback(webhook!)).toBe(true);
    expect(h.adapter.parseCallback(webhook!)).toEqual({ reference, operation: 'collect', providerReference: reference, outcome: { status: 'success' } });
    expect(webhook!.body).toMatchObject({ event: 'charge.success', data: { status: 'success', channel: 'mobile_money', gateway_response: 'Approved', authorization: { bank: 'MTN Mobile Money' } } });
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: reference })).toEqual({ status: 'success' });
  });

  it('collects on Telecel, where Paystack asks for a voucher: still pending for railyard', async () => {
    const reference = ref('chg');
    await h.adapter.collect(collect(reference, TELECEL));
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: reference })).toEqual({ status: 'pending' });
  });

  it('sends no webhook for a failed charge; verifying it tells the reason', async () => {
    h.behave((q) => (q.operation === 'collect' ? { callback: { after_seconds: 2, status: 'failed', reason: 'NOT_ENOUGH_FUNDS', drop: false } } : undefined));
    const reference = ref('chg');
    await h.adapter.collect(collect(reference));
    await h.advance(2);
    expect(h.webhooks).toEqual([]);
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: reference })).toEqual({ status: 'failed', reason: 'insufficient_funds' });
  });

  it('recovers a charge a timed-out call left taken: the same reference again is the same charge', async () => {
    const reference = ref('chg');
    const first = await h.adapter.collect(collect(reference));
    const again = await h.adapter.collect(collect(reference));
    expect(again).toEqual(first);
    expect((await h.call('POST', '/charge', { email: 'a@example.com', amount: 2500, reference, mobile_money: { phone: '0551234987', provider: 'mtn' } })).body).toEqual({
      status: false,
      message: 'Duplicate Transaction Reference',
      meta: { nextStep: expect.any(String) },
      type: 'validation_error',
      code: 'duplicate_reference',
    });
  });

  it('pays out to a wallet and to a bank account, each through a recipient, settled by transfer.success', async () => {
    const momo = ref('trf');
    const bank = ref('trf');
    const a = await h.adapter.payout(momoPayout(momo));
    const b = await h.adapter.payout({
      reference: bank,
      amount: 9_000,
      currency: 'GHS',
      channel: 'bank',
      accountNumber: '1000000012',
      bankCode: '040100',
      accountName: 'Ama Owusu',
      description: 'wire test',
    });
    expect(a.providerReference).toMatch(/^TRF_/);
    expect(b.providerReference).toMatch(/^TRF_/);
    await h.advance(3);
    expect(h.webhooks.map((w) => [(w.body as { event: string }).event, h.adapter.parseCallback(w).reference])).toEqual([
      ['transfer.success', momo],
      ['transfer.success', bank],
    ]);
    expect(h.webhooks.every((w) => h.adapter.verifyCallback(w))).toBe(true);
    expect(await h.adapter.status({ operation: 'payout', reference: bank, providerReference: b.providerReference })).toEqual({ status: 'success' });
  });

  it.each([
    ['insufficient_funds', 'transfer.failed', 'insufficient_funds'],
    ['reversed', 'transfer.reversed', 'reversed'],
  ])('reports a transfer that fails with %s as %s, reason %s', async (scenarioReason, event, reason) => {
    h.behave((q) => (q.operation === 'payout' ? { callback: { after_seconds: 1, status: 'failed', reason: scenarioReason, drop: false } } : undefined));
    const reference = ref('trf');
    const accepted = await h.adapter.payout(momoPayout(reference));
    await h.advance(1);
    expect((h.webhooks[0]!.body as { event: string }).event).toBe(event);
    expect(h.adapter.parseCallback(h.webhooks[0]!).outcome).toEqual({ status: 'failed', reason });
    expect(await h.adapter.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).toEqual({ status: 'failed', reason });
  });

  it('resolves a wallet or an account, and answers null for one Paystack cannot resolve', async () => {
    h.behave((q) => (q.operation === 'resolve' ? { name: 'Kofi Boateng' } : undefined));
    expect(await h.adapter.resolveName({ channel: 'momo', msisdn: MTN })).toEqual({ name: 'Kofi Boateng' });
    expect(await h.adapter.resolveName({ channel: 'bank', accountNumber: '1000000012', bankCode: '040100' })).toEqual({ name: 'Kofi Boateng' });
    h.behave((q) => (q.operation === 'resolve' ? { resolves: false } : undefined));
    expect(await h.adapter.resolveName({ channel: 'bank', accountNumber: '1000000012', bankCode: '040100' })).toBeNull();
    expect(await h.adapter.resolveName({ channel: 'bank', accountNumber: '1000000012', bankCode: '999999' })).toBeNull();
  });
});

describe("the Paystack mock, field by field against Paystack's API reference", () => {
  const charge = (reference: string, phone = '0551234987', provider = 'mtn', extra: Record<string, unknown> = {}) =>
    h.call('POST', '/charge', { email: 'ama@example.com', amount: 2_000, currency: 'GHS', reference, mobile_money: { phone, provider }, ...extra });
  const wallet = { type: 'mobile_money', name: 'Esi Mensah', account_number: '0241110030', bank_code: 'MTN', currency: 'GHS' };
  const transfer = async (reference: string) => {
    const recipient = await h.call('POST', '/transferrecipient', wallet);
    return h.call('POST', '/transfer', { source: 'balance', amount: 1_500, recipient: recipient.body.data.recipient_code, reference, reason: 'field test', currency: 'GHS' });
  };

  it('verifies a charge with every documented top-level field, the customer and a masked wallet in the authorization', async () => {
    const reference = ref('chg');
    await charge(reference, '0551234987', 'mtn', { metadata: { order: 'A-17' } });
    const pending = (await h.call('GET', `/transaction/verify/${reference}`)).body.data;
    expect(pending).toMatchObject({ status: 'pending', fees: null, paid_at: null, paidAt: null, requested_amount: 2_000, metadata: { order: 'A-17' } });
    await h.advance(3);
    const { status, body } = await h.call('GET', `/transaction/verify/${reference}`);
    expect(status).toBe(200);
    expect(body.data).toMatchObject({
      status: 'success',
      message: null,
      metadata: { order: 'A-17' },
      fees: 39, // 1.95% of 20.00 GHS, rounded to the pesewa
      paidAt: body.data.paid_at,
      createdAt: body.data.created_at,
      transaction_date: body.data.created_at,
      requested_amount: 2_000,
      customer: { id: expect.any(Number), customer_code: expect.stringMatching(/^CUS_/), email: 'ama@example.com' },
      authorization: { authorization_code: expect.stringMatching(/^AUTH_/), reusable: false, bin: '055XXX', last4: 'X987', channel: 'mobile_money', bank: 'MTN Mobile Money' },
    });
    expect(body.data.paidAt).toEqual(expect.any(String));
    expect(body.data.authorization).not.toHaveProperty('mobile_money_number');
    expect(JSON.stringify(body)).not.toContain('0551234987');
  });

  it('lists transactions newest first, a page at a time, with the page meta, and fetches one by its integer id', async () => {
    const older = ref('chg');
    const newer = ref('chg');
    await charge(older);
    await h.advance(1);
    await charge(newer);
    const first = await h.call('GET', '/transaction?perPage=1&page=1');
    expect(first.status).toBe(200);
    expect(first.body.data.map((t: { reference: string }) => t.reference)).toEqual([newer]);
    expect(first.body.meta).toEqual({ total: 2, total_volume: 0, skipped: 0, perPage: 1, page: 1, pageCount: 2 });
    const second = await h.call('GET', '/transaction?perPage=1&page=2');
    expect(second.body.data.map((t: { reference: string }) => t.reference)).toEqual([older]);
    const fetched = await h.call('GET', `/transaction/${second.body.data[0].id}`);
    expect(fetched.body.data).toMatchObject({ reference: older, id: second.body.data[0].id });
    expect((await h.call('GET', '/transaction/123')).status).toBe(404);
    expect((await h.call('GET', '/transaction?perPage=500')).body).toMatchObject({ status: false, type: 'validation_error' });
  });

  it('answers Initiate Transfer with the recipient as its integer id, and expands it in Fetch and Verify Transfer, by id and by code', async () => {
    const reference = ref('trf');
    const initiated = await transfer(reference);
    expect(initiated.status).toBe(200);
    const data = initiated.body.data;
    expect(data.recipient).toEqual(expect.any(Number));
    expect(data).toMatchObject({ status: 'pending', failures: null, titan_code: null, integration: expect.any(Number), transfersessionid: [], transfertrials: [] });
    await h.advance(3);
    const byCode = await h.call('GET', `/transfer/${data.transfer_code}`);
    const byId = await h.call('GET', `/transfer/${data.id}`);
    const verified = await h.call('GET', `/transfer/verify/${reference}`);
    expect(byCode.status).toBe(200);
    expect(byId.body).toEqual(byCode.body);
    expect(verified.body.data).toEqual(byCode.body.data);
    expect(byCode.body.data).toMatchObject({
      status: 'success',
      transferred_at: expect.any(String),
      failures: null,
      integration: data.integration,
      titan_code: null,
      session: { provider: null, id: null },
      fee_charged: 0,
      recipient: { id: data.recipient, recipient_code: expect.stringMatching(/^RCP_/), integration: data.integration, is_deleted: false, email: '', description: '', metadata: null },
    });
    expect((await h.call('GET', '/transfer/TRF_unknown')).body).toMatchObject({ status: false, code: 'transfer_not_found' });
  });

  it('answers Check Pending Charge while the customer approves and after', async () => {
    const reference = ref('chg');
    await charge(reference);
    expect((await h.call('GET', `/charge/${reference}`)).body).toMatchObject({
      status: true,
      data: { reference, status: 'pay_offline', display_text: expect.any(String), amount: 2_000, currency: 'GHS' },
    });
    await h.advance(3);
    expect((await h.call('GET', `/charge/${reference}`)).body.data).toMatchObject({ status: 'success', gateway_response: 'Approved', fees: 39 });
    expect((await h.call('GET', '/charge/T_never_made')).body).toMatchObject({ status: false, code: 'transaction_not_found', message: 'Transaction reference not found' });
  });

  it('refuses in Paystack words: message, type, code and meta.nextStep', async () => {
    const reference = ref('trf');
    await transfer(reference);
    const again = await h.call('POST', '/transfer', {
      source: 'balance',
      amount: 1_500,
      recipient: (await h.call('POST', '/transferrecipient', wallet)).body.data.recipient_code,
      reference,
      currency: 'GHS',
    });
    expect(again).toEqual({
      status: 400,
      body: { status: false, message: 'Duplicate Transfer Reference', meta: { nextStep: expect.any(String) }, type: 'validation_error', code: 'duplicate_reference' },
    });
    const stranger = await h.call('POST', '/transfer', { source: 'balance', amount: 1_500, recipient: 'RCP_nobody', reference: ref('trf'), currency: 'GHS' });
    expect(stranger).toEqual({
      status: 400,
      body: { status: false, message: 'Recipient specified is invalid', meta: { nextStep: expect.any(String) }, type: 'validation_error', code: 'invalid_transfer_recipient' },
    });
    h.behave((q) => (q.operation === 'collect' ? { respond: 'reject', reason: 'insufficient_funds' } : undefined));
    expect((await charge(ref('chg'))).body).toMatchObject({ status: false, message: 'Insufficient Funds', type: 'processor_error', code: expect.any(String) });
  });

  it('gives banks and recipients their documented minor fields', async () => {
    const banks = (await h.call('GET', '/bank?currency=GHS')).body.data;
    expect(banks[0]).toMatchObject({ is_deleted: false, createdAt: expect.any(String), updatedAt: expect.any(String) });
    const recipient = (await h.call('POST', '/transferrecipient', { ...wallet, account_number: '0241110031', description: 'rent', metadata: { unit: 4 } })).body.data;
    expect(recipient).toMatchObject({ integration: expect.any(Number), is_deleted: false, email: '', description: 'rent', metadata: { unit: 4 } });
  });

  it("gives every refusal it can give as Paystack's Error body, with Paystack's status", async () => {
    const reference = ref('chg');
    await charge(reference);
    const recipient = (await h.call('POST', '/transferrecipient', wallet)).body.data.recipient_code;
    await transfer(ref('trf'));
    const refusals: [string, Promise<{ status: number; body: any }>, number, string][] = [
      ['no key', h.call('GET', '/bank', undefined, 'sk_test_wrong'), 401, 'invalid_key'],
      ['a bad charge', h.call('POST', '/charge', { email: 'nobody', amount: 100, mobile_money: { phone: '0551234987', provider: 'mtn' } }), 400, 'invalid_params'],
      ['a used charge reference', charge(reference), 400, 'duplicate_reference'],
      ['an unknown charge', h.call('GET', '/charge/T_unknown_ref'), 404, 'transaction_not_found'],
      ['an unknown verify', h.call('GET', '/transaction/verify/T_unknown_ref'), 404, 'transaction_not_found'],
      ['an unknown transaction id', h.call('GET', '/transaction/42'), 404, 'transaction_not_found'],
      ['a page too large', h.call('GET', '/transaction?perPage=101'), 400, 'invalid_params'],
      ['a bad voucher', h.call('POST', '/charge/submit_otp', { otp: 'x', reference }), 400, 'invalid_params'],
      ['a voucher nobody asked for', h.call('POST', '/charge/submit_otp', { otp: '1234', reference }), 400, 'invalid_charge_state'],
      ['a bad recipient', h.call('POST', '/transferrecipient', { ...wallet, bank_code: 'XYZ' }), 400, 'invalid_bank_details'],
      ['a recipient of the wrong type', h.call('POST', '/transferrecipient', { ...wallet, type: 'nuban' }), 400, 'invalid_params'],
      ['an unknown recipient', h.call('POST', '/transfer', { source: 'balance', amount: 100, recipient: 'RCP_nobody', reference: ref('trf'), currency: 'GHS' }), 400, 'invalid_transfer_recipient'],
      ['a bad transfer reference', h.call('POST', '/transfer', { source: 'balance', amount: 100, recipient, reference: 'UPPER', currency: 'GHS' }), 400, 'invalid_params'],
      ['an unknown transfer', h.call('GET', '/transfer/verify/trf_unknown_reference'), 404, 'transfer_not_found'],
      ['an unknown transfer code', h.call('GET', '/transfer/TRF_unknown'), 404, 'transfer_not_found'],
      ['an unresolvable account', h.call('GET', '/bank/resolve?account_number=12&bank_code=040100'), 422, 'invalid_bank_details'],
      ['a resolve without parameters', h.call('GET', '/bank/resolve'), 400, 'invalid_params'],
      ['an unknown route', h.call('GET', '/subscription'), 404, 'route_not_found'],
    ];
    for (const [what, call, status, code] of refusals) {
      const res = await call;
      expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status, code });
      const record = { provider: 'paystack', method: 'GET', route: null, path: '/', status: res.status, contentType: 'application/json', body: JSON.stringify(res.body) };
      expect(checkWireResponse(record), what).toBeNull();
    }
  });

  describe('a Telecel charge and its voucher', () => {
    it('does not settle while the voucher is awaited, however long: no webhook, still send_otp', async () => {
      const reference = ref('chg');
      expect((await charge(reference, '0201234567', 'vod')).body.data.status).toBe('send_otp');
      await h.advance(600);
      expect(h.webhooks).toEqual([]);
      expect((await h.call('GET', `/charge/${reference}`)).body.data).toMatchObject({ status: 'send_otp', display_text: expect.stringMatching(/voucher/) });
      expect((await h.call('GET', `/transaction/verify/${reference}`)).body.data.status).toBe('pending');
    });

    it('settles at once when the voucher comes after the settlement fell due, and sends charge.success', async () => {
      const reference = ref('chg');
      await charge(reference, '0201234567', 'vod');
      await h.advance(10);
      const submitted = await h.call('POST', '/charge/submit_otp', { otp: '123456', reference });
      expect(submitted).toMatchObject({ status: 200, body: { status: true, data: { reference, status: 'success' } } });
      await h.advance(0);
      expect(h.webhooks.map((w) => (w.body as { event: string }).event)).toEqual(['charge.success']);
    });

    it('waits for the customer after a voucher that comes early, then settles when due', async () => {
      const reference = ref('chg');
      await charge(reference, '0201234567', 'vod');
      expect((await h.call('POST', '/charge/submit_otp', { otp: '123456', reference })).body.data.status).toBe('pay_offline');
      expect((await h.call('POST', '/charge/submit_otp', { otp: '123456', reference })).body).toMatchObject({ status: false, code: 'invalid_charge_state' });
      await h.advance(3);
      expect((await h.call('GET', `/charge/${reference}`)).body.data.status).toBe('success');
    });

    it('refuses a voucher that is not 4 to 8 digits, or for no known charge', async () => {
      expect((await h.call('POST', '/charge/submit_otp', { otp: 'abc', reference: 'x' })).body).toMatchObject({ status: false, message: 'Invalid OTP' });
      expect((await h.call('POST', '/charge/submit_otp', { otp: '1234', reference: 'T_none' })).body).toMatchObject({ status: false, code: 'transaction_not_found' });
    });

    it('is a collection with an OTP step for the adapter, completed through submitOtp', async () => {
      const reference = ref('chg');
      const accepted = await h.adapter.collect(collect(reference, TELECEL));
      expect(accepted.nextAction).toEqual({ type: 'otp', message: expect.stringMatching(/voucher/) });
      await h.advance(5);
      expect(await h.adapter.status({ operation: 'collect', reference, providerReference: reference })).toEqual({ status: 'pending' });
      expect(await h.adapter.submitOtp({ reference, providerReference: reference, otp: '123456' })).toEqual({ status: 'success' });
    });
  });
});

describe("the Paystack adapter's webhook checks", () => {
  const body = JSON.stringify({ event: 'charge.success', data: { reference: 'chg_abc', status: 'success' } });
  const webhook = (rawBody: string, signature?: string): InboundCallback => ({
    method: 'POST',
    subpath: '/',
    headers: signature === undefined ? {} : { 'x-paystack-signature': signature },
    rawBody,
    body: JSON.parse(rawBody),
  });

  it('accepts only the hex HMAC-SHA512 of the exact raw body, keyed with the secret key', () => {
    expect(h.adapter.verifyCallback(webhook(body, hmacSha512Hex(SECRET, body)))).toBe(true);
    expect(h.adapter.verifyCallback(webhook(body, hmacSha512Hex(SECRET, body).toUpperCase()))).toBe(true);
    expect(h.adapter.verifyCallback(webhook(body))).toBe(false);
    expect(h.adapter.verifyCallback(webhook(body, hmacSha512Hex('sk_test_other', body)))).toBe(false);
    expect(h.adapter.verifyCallback(webhook(body.replace('chg_abc', 'chg_abd'), hmacSha512Hex(SECRET, body)))).toBe(false);
    expect(h.adapter.verifyCallback(webhook(body, hmacSha512Hex(SECRET, body).slice(0, 64)))).toBe(false);
  });

  it('refuses events it does not handle and bodies without a reference', () => {
    expect(() => h.adapter.parseCallback(webhook(JSON.stringify({ event: 'subscription.create', data: { reference: 'x' } })))).toThrow(RailError);
    expect(() => h.adapter.parseCallback(webhook(JSON.stringify({ event: 'charge.success', data: {} })))).toThrow(/reference/);
  });
});

describe('Paystack words', () => {
  it('turns scenario reasons into gateway responses, and gateway responses into reasons the service knows', () => {
    expect(paystackGatewayResponse('NOT_ENOUGH_FUNDS')).toBe('Insufficient Funds');
    expect(paystackGatewayResponse('51')).toBe('Insufficient Funds');
    expect(paystackGatewayResponse('PAYEE_NOT_FOUND')).toBe('Account Not Found');
    expect(paystackGatewayResponse('something else')).toBe('Declined');
    expect(paystackFailureReason('Insufficient Funds')).toBe('insufficient_funds');
    expect(paystackFailureReason('Account Not Found')).toBe('account_not_found');
    expect(paystackFailureReason(undefined)).toBe('failed');
  });
});
