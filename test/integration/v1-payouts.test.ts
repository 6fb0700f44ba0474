import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postForm } from '../support/signed-form.ts';
import { expectBalanced, SANDBOX_SCENARIOS, startTestSandbox, type PostOptions, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios, parseRule } from '../../src/railyard-scenarios.ts';

const refused = parseRule({
  name: 'refused outright',
  match: { msisdn: '0543334444' },
  payout: { any: { respond: 'reject', reason: 'PAYEE_NOT_FOUND', http_status: 404 } },
});

let sb: TestSandbox;
let idem = 0;
beforeEach(async () => {
  sb = await startTestSandbox({}, [refused, ...loadScenarios([SANDBOX_SCENARIOS]).rules]);
  await sb.fund(100_000);
});
afterEach(() => sb.close());

const payout = (body: unknown, opts: PostOptions = {}) => sb.post('/v1/payouts', body, { sign: true, idempotencyKey: `po-${++idem}`, ...opts });
const bulk = (items: unknown, opts: PostOptions = {}) => sb.post('/v1/payouts/bulk', { items }, { sign: true, idempotencyKey: `pob-${++idem}`, ...opts });
const momo = (msisdn: string, amount = '100.00') => ({ amount, currency: 'GHS', channel: 'momo', msisdn });
const bank = (account_number: string, amount = '100.00') => ({ amount, currency: 'GHS', channel: 'bank', account_number, bank_code: '040100', account_name: 'Ama Owusu' });
const status = async (id: string) => (await sb.get(`/v1/payouts/${id}`)).body.data.status;

describe('POST /v1/payouts to a mobile wallet', () => {
  it('reserves amount plus fee, answers 201 po_ pending, and settles with payout.settled', async () => {
    const res = await payout({ ...momo('0551234987', '110.50'), narration: 'June commission' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      object: 'payout',
      status: 'pending',
      amount: 11_050,
      amount_major: '110.50',
      fees: 100,
      total_debited: 11_150,
      currency: 'GHS',
      channel: 'momo',
      msisdn: '233551234987',
      network: 'MTN',
      narration: 'June commission',
      bulk_id: null,
      provider: 'mtn-momo',
      livemode: false,
    });
    expect(res.body.data.id).toMatch(/^po_/);
    expect(await sb.wallet()).toMatchObject({ available: 88_850, reserved: 11_150 });
    await sb.advance(5);
    expect(await status(res.body.data.id)).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 88_850, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['payout.pending', 'payout.settled']);
    const journals = await sb.ry.store.all<{ kind: string }>("SELECT kind FROM ledger_journals WHERE ref_type = 'payout' ORDER BY seq");
    expect(journals.map((j) => j.kind)).toEqual(['payout.reserved', 'payout.settled']);
    expectBalanced(await sb.trialBalance());
  });

  it('refunds the reservation with payout.failed when the rail reports failure', async () => {
    const res = await payout(momo('0551234988'));
    await sb.advance(5);
    expect((await sb.get(`/v1/payouts/${res.body.data.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['payout.pending', 'payout.failed']);
    expectBalanced(await sb.trialBalance());
  });

  it('fails at once and refunds when the provider refuses it outright', async () => {
    const res = await payout(momo('0543334444'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'account_not_found', provider_reason: 'PAYEE_NOT_FOUND' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });

  it('fails over to hubtel when mtn-momo times out (0551234989), and settles there', async () => {
    const res = await payout(momo('0551234989'));
    expect(res.body.data).toMatchObject({ status: 'pending', provider: 'hubtel' });
    await sb.advance(5);
    expect(await status(res.body.data.id)).toBe('settled');
  });

  it('lists the payout among the wallet transactions, as a debit', async () => {
    const res = await payout(momo('0551234987', '12.00'));
    await sb.advance(5);
    const listed = (await sb.get('/api/v1/transactions?type=payout')).body.data;
    expect(listed).toEqual([
      expect.objectContaining({ id: res.body.data.id, type: 'payout', direction: 'debit', status: 'settled', amount: 1_200, fees: 100, currency: 'GHS', channel: 'momo', provider: 'mtn-momo' }),
    ]);
  });

  it('takes a form-encoded body, signed over the raw form', async () => {
    const res = await postForm(sb, '/v1/payouts', { amount: '25.00', currency: 'GHS', channel: 'momo', msisdn: '+233551234987', network: 'MTN' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'pending', amount: 2_500, amount_major: '25.00', msisdn: '233551234987' });
  });
});

describe('POST /v1/payouts to a bank account', () => {
  it('pays GCB account 1000000001 through the bank rail with the bank fee', async () => {
    const res = await payout(bank('1000000001'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      channel: 'bank',
      account_number: '1000000001',
      bank_code: '040100',
      bank_name: 'GCB',
      account_name: 'Ama Owusu',
      fees: 200,
      provider: 'bank-rail',
      msisdn: null,
    });
    await sb.advance(5);
    expect(await status(res.body.data.id)).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 89_800, reserved: 0 });
  });

  it('refunds when the bank rail fails it (GCB 1000000002)', async () => {
    const res = await payout(bank('1000000002'));
    await sb.advance(5);
    expect((await sb.get(`/v1/payouts/${res.body.data.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('answers 502 provider_unavailable and refunds when no provider can take it', async () => {
    await sb.post('/api/v1/sandbox/providers/bank-rail/outage', { down: true });
    const res = await payout(bank('1000000001'));
    expect(res.status).toBe(502);
    expect(res.body.error.details.payout_id).toMatch(/^po_/);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });
});

describe('POST /v1/payouts refusals change nothing', () => {
  it('answers 422 insufficient_funds when the wallet cannot cover amount plus fee', async () => {
    const res = await payout(momo('0551234987', '999.50'));
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'insufficient_funds', details: { available: 100_000, required: 100_050, currency: 'GHS' } });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.ry.store.all('SELECT id FROM payouts')).toEqual([]);
  });

  it('requires the request signature', async () => {
    const res = await payout(momo('0551234987'), { sign: false });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_signature');
  });

  it('requires the transfers:write scope', async () => {
    const reader = (await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] })).body.data;
    const res = await payout(momo('0551234987'), { key: reader.key, signingSecret: reader.signing_secret });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'transfers:write' } });
  });

  it('requires an Idempotency-Key', async () => {
    const res = await payout(momo('0551234987'), { idempotencyKey: null });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'Idempotency-Key', message: 'required' }]);
  });

  it.each([
    ['0.1', 10],
    ['110.5', 11_050],
    ['110.50', 11_050],
  ])('reads the amount %s as %i pesewas', async (amount, minor) => {
    const res = await payout(momo('0551234987', amount));
    expect(res.status).toBe(201);
    expect(res.body.data.amount).toBe(minor);
  });

  it.each(['110.505', '1e3', '-1', '0', 'abc', ' 5'])('refuses the amount %j with a validation_error naming amount', async (amount) => {
    const res = await payout(momo('0551234987', amount));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['amount']);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });

  it('refuses a JSON number amount: major units travel as strings', async () => {
    const res = await payout({ ...momo('0551234987'), amount: 100 });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'amount', message: 'amount must be a decimal string of major units, such as "110.50"' }]);
  });

  it('refuses a bank payout without account_name, naming it', async () => {
    const { account_name: _, ...body } = bank('1000000001');
    const res = await payout(body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'account_name', message: 'account_name is required' }]);
  });

  it('answers 404 for an unknown payout and an unknown bulk', async () => {
    expect((await sb.get('/v1/payouts/po_0000000000aaaaaaaaaa')).body.error.code).toBe('not_found');
    expect((await sb.get('/v1/payouts/bulk/pob_0000000000aaaaaaaaaa')).status).toBe(404);
  });
});

describe('POST /v1/payouts/bulk', () => {
  it('turns each valid item into its own payout, lists each invalid one with its index and error, and the valid ones settle', async () => {
    const res = await bulk([momo('0551234987', '10.00'), { ...momo('0551234987'), amount: '1e3' }, bank('1000000001', '20.00'), { channel: 'cheque' }, momo('0551234988', '5.00')]);
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({ object: 'payout_bulk', item_count: 5, accepted_count: 3, rejected_count: 2, total_amount: 3_500, total_fees: 400, livemode: false });
    expect(data.id).toMatch(/^pob_/);
    expect(data.items.map((i: { index: number; status: string }) => [i.index, i.status])).toEqual([
      [0, 'accepted'],
      [1, 'rejected'],
      [2, 'accepted'],
      [3, 'rejected'],
      [4, 'accepted'],
    ]);
    expect(data.items[1].error).toMatchObject({
      code: 'validation_error',
      details: { fields: [{ field: 'amount', message: 'amount must not use exponent notation; write the digits, such as "1000.00"' }] },
    });
    expect(data.items[3].error).toMatchObject({ code: 'validation_error', details: { fields: [{ field: 'channel', message: 'channel must be momo or bank' }] } });
    const ids = [data.items[0].payout.id, data.items[2].payout.id, data.items[4].payout.id];
    expect(new Set(ids).size).toBe(3);
    expect(data.items[2].payout).toMatchObject({ bulk_id: data.id, bulk_index: 2, status: 'pending', provider: 'bank-rail' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 3_900, reserved: 3_900 });

    await sb.advance(5);
    expect(await status(ids[0])).toBe('settled');
    expect(await status(ids[1])).toBe('settled');
    expect(await status(ids[2])).toBe('failed');
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 1_000 - 100 - 2_000 - 200, reserved: 0 });
    const read = (await sb.get(`/v1/payouts/bulk/${data.id}`)).body.data;
    expect(read.status_counts).toEqual({ pending: 0, settled: 2, failed: 1 });
    expect(read.items.map((i: { status: string }) => i.status)).toEqual(['accepted', 'rejected', 'accepted', 'rejected', 'accepted']);
    expectBalanced(await sb.trialBalance());
  });

  it('refuses an item that would overdraw the wallet at its index, while earlier ones stand', async () => {
    const res = await bulk([momo('0551234987', '600.00'), momo('0551234987', '600.00'), momo('0551234987', '300.00')]);
    const items = res.body.data.items;
    expect(items[0].status).toBe('accepted');
    expect(items[1]).toEqual({
      index: 1,
      status: 'rejected',
      error: { code: 'insufficient_funds', message: 'The wallet balance is too low for this payout', details: { available: 39_900, required: 60_100, currency: 'GHS' } },
    });
    expect(items[2].status).toBe('accepted');
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 60_100 - 30_100, reserved: 90_200 });
  });

  it('replays the whole answer for the same Idempotency-Key and moves nothing', async () => {
    const items = [momo('0551234987', '10.00'), { ...momo('0551234987'), amount: 'abc' }];
    const first = await bulk(items, { idempotencyKey: 'bulk-replay' });
    const again = await bulk(items, { idempotencyKey: 'bulk-replay' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await sb.ry.store.all('SELECT id FROM payouts')).toHaveLength(1);
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 1_100, reserved: 1_100 });
  });

  it('refuses more than 500 items, or none, as a whole and changes nothing', async () => {
    const tooMany = await bulk(Array.from({ length: 501 }, () => momo('0551234987', '1.00')));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.fields).toEqual([{ field: 'items', message: 'items must hold at most 500 payouts' }]);
    const none = await bulk([]);
    expect(none.body.error.details.fields).toEqual([{ field: 'items', message: 'items must hold at least one payout' }]);
    expect(await sb.ry.store.all('SELECT id FROM payout_bulks')).toEqual([]);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });

  it('takes 500 items in one request', async () => {
    await sb.fund(1_000_000);
    const res = await bulk(Array.from({ length: 500 }, () => momo('0551234987', '1.00')));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ item_count: 500, accepted_count: 500, rejected_count: 0 });
    expect(new Set(res.body.data.items.map((i: { payout: { id: string } }) => i.payout.id)).size).toBe(500);
  }, 60_000);

  it('takes 500 bank items with full narrations, a body larger than any single request', async () => {
    await sb.fund(1_000_000);
    const item = { ...bank('1000000001', '1.00'), narration: 'n'.repeat(100) };
    const res = await bulk(Array.from({ length: 500 }, () => item));
    expect(JSON.stringify({ items: Array(500).fill(item) }).length).toBeGreaterThan(100 * 1024);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ accepted_count: 500, rejected_count: 0 });
  }, 60_000);

  it('takes a form-encoded bulk body', async () => {
    const form =
      'items[0][amount]=12.00&items[0][currency]=GHS&items[0][channel]=momo&items[0][msisdn]=0551234987' +
      '&items[1][amount]=13.00&items[1][currency]=GHS&items[1][channel]=bank&items[1][account_number]=1000000001&items[1][bank_code]=040100&items[1][account_name]=Kofi';
    const res = await postForm(sb, '/v1/payouts/bulk', form);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ accepted_count: 2, total_amount: 2_500 });
  });

  it('requires the request signature', async () => {
    const res = await bulk([momo('0551234987')], { sign: false });
    expect(res.status).toBe(401);
  });
});

describe('a bulk payout cut off by a stop', () => {
  /** Puts the batch back where a stop after its creating transaction leaves it: keys in flight under an earlier boot. */
  async function orphanBulk(bulkId: string, unrouted: string[]): Promise<void> {
    const { store, boot } = sb.ry;
    for (const id of unrouted) {
      await store.run('UPDATE payouts SET provider = NULL, provider_reference = NULL WHERE id = ?', [id]);
      await store.run('DELETE FROM rail_attempts WHERE ref_id = ?', [id]);
    }
    for (const id of [bulkId, ...unrouted]) {
      await store.run("UPDATE idempotency_keys SET state = 'in_flight', boot = ?, response_status = NULL, response_body = NULL WHERE resource_id = ?", [boot - 1, id]);
    }
  }

  it('finishes on the retry: the items already routed stand, the others resume with their own ids, none is lost or doubled', async () => {
    const items = [momo('0551234987', '10.00'), bank('1000000001', '20.00'), { amount: 'abc' }];
    const first = await bulk(items, { idempotencyKey: 'bulk-stop' });
    const [routed, cutOff] = [first.body.data.items[0].payout.id, first.body.data.items[1].payout.id];
    await orphanBulk(first.body.data.id, [cutOff]);

    const retry = await bulk(items, { idempotencyKey: 'bulk-stop' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, accepted_count: 2, rejected_count: 1 });
    expect(retry.body.data.items[0].payout).toMatchObject({ id: routed, provider: 'mtn-momo' });
    expect(retry.body.data.items[1].payout).toMatchObject({ id: cutOff, status: 'pending', provider: 'bank-rail' });
    expect(await sb.ry.store.all('SELECT id FROM payouts')).toHaveLength(2);
    // The bank rail knew the resumed payout's reference: it was not paid twice.
    expect(await sb.ry.store.all("SELECT reference FROM mock_transactions WHERE provider = 'bank-rail'")).toHaveLength(1);
    await sb.advance(10);
    expect([await status(routed), await status(cutOff)]).toEqual(['settled', 'settled']);
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 1_100 - 2_200, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('is finished at start-up recovery, so a later retry replays the answer', async () => {
    const items = [momo('0551234987', '10.00')];
    const first = await bulk(items, { idempotencyKey: 'bulk-boot' });
    await orphanBulk(first.body.data.id, [first.body.data.items[0].payout.id]);
    expect(await sb.ry.recoverInterrupted()).toBe(2);
    const retry = await bulk(items, { idempotencyKey: 'bulk-boot' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data.items[0].payout).toMatchObject({ id: first.body.data.items[0].payout.id, status: 'pending', provider: 'mtn-momo' });
  });
});
