import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

let keys = 0;
const collect = (body: Record<string, unknown>, idempotencyKey = `col-test-${++keys}`) => sb.post('/v1/collections', body, { idempotencyKey });
/** The spec's sample: form-style fields. */
const collectForm = (form: string, idempotencyKey = `col-form-${++keys}`) =>
  sb.http.post('/v1/collections').set('Authorization', `Bearer ${sb.key}`).set('Idempotency-Key', idempotencyKey).set('Content-Type', 'application/x-www-form-urlencoded').send(form);
const momo = (customer: string, extra: Record<string, unknown> = {}) => ({ amount: '100.00', currency: 'GHS', channel: 'momo', customer, ...extra });
const collections = () => sb.ry.store.all('SELECT * FROM collections');

describe('POST /v1/collections over momo', () => {
  it('answers 201 pending_approval, credits nothing yet, and settles on the provider callback net of the momo fee', async () => {
    const res = await collect(momo('0551234987'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: true, message: expect.stringMatching(/initiated/i) });
    expect(res.body.data).toMatchObject({
      object: 'collection',
      status: 'pending_approval',
      amount: 10_000,
      amount_major: '100.00',
      currency: 'GHS',
      fees: 100, // 1% on momo by default
      amount_settled: 9_900,
      channel: 'momo',
      customer: { msisdn: '233551234987', network: 'MTN' },
      next_action: null,
      payment_link_id: null,
      provider: 'mtn-momo',
      livemode: false,
    });
    expect(res.body.data.id).toMatch(/^col_[0-9a-z]{20}$/);
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });

    await sb.advance(5);
    const settled = await sb.get(`/v1/collections/${res.body.data.id}`);
    expect(settled.status).toBe(200);
    expect(settled.body.data).toMatchObject({ status: 'settled', failure_reason: null });
    expect(await sb.wallet()).toMatchObject({ available: 9_900, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['collection.pending', 'collection.settled']);
    expectBalanced(await sb.trialBalance());
  });

  it('fails without crediting when the customer has insufficient funds', async () => {
    const res = await collect(momo('0551234988'));
    expect(res.status).toBe(201);
    await sb.advance(5);
    const failed = (await sb.get(`/v1/collections/${res.body.data.id}`)).body.data;
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds', provider_reason: 'NOT_ENOUGH_FUNDS' });
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['collection.pending', 'collection.failed']);
  });

  it('takes a form-encoded body, as the spec sample sends it', async () => {
    const res = await collectForm('amount=110.50&currency=GHS&channel=momo&customer=0241234567');
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'pending_approval', amount: 11_050, amount_major: '110.50', customer: { msisdn: '233241234567', network: 'MTN' } });
    expect(res.body.data.id).toMatch(/^col_/);
  });

  it('takes a network override for a ported number', async () => {
    const res = await collect(momo('0241234567', { network: 'TELECEL' }));
    expect(res.status).toBe(201);
    expect(res.body.data.customer).toEqual({ msisdn: '233241234567', network: 'TELECEL' });
  });

  it('is listed among the transactions as a collection', async () => {
    const res = await collect(momo('0551234987'));
    const row = await sb.ry.store.get<{ object_type: string }>('SELECT object_type FROM transactions WHERE object_id = ?', [res.body.data.id]);
    expect(row).toEqual({ object_type: 'collection' });
  });
});

describe('POST /v1/collections: the amount converts exactly or is refused', () => {
  it.each([
    ['0.1', 10],
    ['110.5', 11_050],
    ['110.50', 11_050],
  ])('"%s" is %i pesewas', async (amount, minor) => {
    const res = await collect(momo('0551234987', { amount }));
    expect(res.status).toBe(201);
    expect(res.body.data.amount).toBe(minor);
  });

  it.each(['110.505', '1e3', '-1', '0', 'abc', ' 5'])('"%s" is a validation_error naming amount, and nothing is stored', async (amount) => {
    const res = await collect(momo('0551234987', { amount }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: false, error: { code: 'validation_error', details: { fields: [{ field: 'amount' }] } } });
    expect(await collections()).toHaveLength(0);
    expect(await sb.ry.store.all('SELECT * FROM idempotency_keys')).toHaveLength(0);
  });

  it.each([
    ['0.1', 10],
    ['110.5', 11_050],
    ['110.50', 11_050],
  ])('form-encoded "%s" is %i pesewas', async (amount, minor) => {
    const res = await collectForm(`amount=${encodeURIComponent(amount)}&currency=GHS&channel=momo&customer=0551234987`);
    expect(res.status).toBe(201);
    expect(res.body.data.amount).toBe(minor);
  });

  it.each(['110.505', '1e3', '-1', '0', 'abc', ' 5', '+5'])('form-encoded "%s" is refused the same way', async (amount) => {
    const res = await collectForm(`amount=${encodeURIComponent(amount)}&currency=GHS&channel=momo&customer=0551234987`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: 'amount' })]);
    expect(await collections()).toHaveLength(0);
  });

  it('a JSON number is refused: it may already have lost digits', async () => {
    const res = await collect(momo('0551234987', { amount: 100 }));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: 'amount' })]);
  });

  it('an amount not above the fee is refused', async () => {
    const res = await collect(momo('0551234987', { amount: '0.01' }));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: 'amount' })]);
    expect(await collections()).toHaveLength(0);
  });
});

describe('POST /v1/collections: bad input names the field and changes nothing', () => {
  it.each([
    ['an unknown channel', momo('0551234987', { channel: 'cash' }), 'channel'],
    ['a currency other than GHS', momo('0551234987', { currency: 'USD' }), 'currency'],
    ['a momo customer that is not a Ghana number', momo('12345'), 'customer'],
    ['a momo customer that is an object', momo({ account_number: '1' } as never), 'customer'],
    ['a card customer that fails the Luhn check', { amount: '10.00', currency: 'GHS', channel: 'card', customer: '4242 4242 4242 4241' }, 'customer'],
    ['a card customer of letters', { amount: '10.00', currency: 'GHS', channel: 'card', customer: 'visa please' }, 'customer'],
    ['a bank customer given as a string', { amount: '10.00', currency: 'GHS', channel: 'bank', customer: '1000000001' }, 'customer'],
    ['a bank customer without bank_code', { amount: '10.00', currency: 'GHS', channel: 'bank', customer: { account_number: '1000000001' } }, 'customer.bank_code'],
    ['a bank customer with an unknown bank_code', { amount: '10.00', currency: 'GHS', channel: 'bank', customer: { account_number: '1000000001', bank_code: '999999' } }, 'customer.bank_code'],
    ['a bank customer with a short account_number', { amount: '10.00', currency: 'GHS', channel: 'bank', customer: { account_number: '12', bank_code: '040100' } }, 'customer.account_number'],
    ['a network on a card collection', { amount: '10.00', currency: 'GHS', channel: 'card', customer: '4084084084084081', network: 'MTN' }, 'network'],
    ['an unknown field', momo('0551234987', { colour: 'red' }), 'colour'],
  ])('%s', async (_name, body, field) => {
    const res = await collect(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(await collections()).toHaveLength(0);
  });

  it('requires an Idempotency-Key', async () => {
    const res = await sb.post('/v1/collections', momo('0551234987'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(await collections()).toHaveLength(0);
  });

  it('requires the collections:write scope, and a live key never sees test collections', async () => {
    const created = await collect(momo('0551234987'));
    const readOnly = (await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] })).body.data.key as string;
    const refused = await sb.post('/v1/collections', momo('0551234987'), { key: readOnly, idempotencyKey: 'read-only' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'collections:write' } });
    expect((await sb.get(`/v1/collections/${created.body.data.id}`, readOnly)).status).toBe(200);
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] })).body.data.key as string;
    expect((await sb.get(`/v1/collections/${created.body.data.id}`, live)).status).toBe(404);
    expect(await collections()).toHaveLength(1);
  });

  it('GET by an id that names no collection is 404 not_found', async () => {
    const res = await sb.get('/v1/collections/col_nothing');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('POST /v1/collections is idempotent', () => {
  it('the same key and body replays the stored answer and collects once', async () => {
    const first = await collect(momo('0551234987'), 'same-key');
    const again = await collect(momo('0551234987'), 'same-key');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await collections()).toHaveLength(1);
  });

  it('the same key with another body is idempotency_key_reused', async () => {
    await collect(momo('0551234987'), 'same-key');
    const other = await collect(momo('0551234987', { amount: '5.00' }), 'same-key');
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });
});

const card = (customer: string, extra: Record<string, unknown> = {}) => ({ amount: '200.00', currency: 'GHS', channel: 'card', customer, ...extra });
const bank = (account_number: string, extra: Record<string, unknown> = {}) => ({
  amount: '300.00',
  currency: 'GHS',
  channel: 'bank',
  customer: { account_number, bank_code: '040100' },
  ...extra,
});

describe('POST /v1/collections by card: every test card', () => {
  it.each([
    ['4084 0840 8408 4081', 'visa', '4081'],
    ['5555444444444440', 'mastercard', '4440'],
    ['5060 9905 8000 0000 002', 'verve', '0002'],
  ])('%s succeeds: settled after the callback, credited net of the card fee', async (number, brand, last4) => {
    const res = await collect(card(number));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'pending_approval',
      channel: 'card',
      amount: 20_000,
      fees: 390, // 1.95% on cards by default
      amount_settled: 19_610,
      customer: { brand, last4, token: null },
      provider: 'card-processor',
      next_action: null,
    });
    expect(JSON.stringify(res.body)).not.toContain(number.replace(/ /g, ''));
    await sb.advance(3);
    expect((await sb.get(`/v1/collections/${res.body.data.id}`)).body.data.status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 19_610 });
    expect(await sb.events(res.body.data.id)).toEqual(['collection.pending', 'collection.settled']);
    expectBalanced(await sb.trialBalance());
  });

  it('never stores a card number', async () => {
    await collect(card('4084084084084081'));
    const rows = await sb.ry.store.all<Record<string, unknown>>('SELECT * FROM collections');
    expect(JSON.stringify(rows)).not.toContain('4084084084084081');
  });

  it.each([
    ['4000 0000 0000 9953', 'insufficient_funds'],
    ['4000 0000 0000 0010', 'do_not_honour'],
    ['4000 0000 0000 0069', 'expired_card'],
  ])('%s is declined at once: 201 failed with failure_reason %s, nothing credited', async (number, reason) => {
    const res = await collect(card(number));
    expect(res.status).toBe(201);
    expect(res.body.message).toMatch(/declined/i);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: reason, provider_reason: reason });
    expect(await sb.wallet()).toMatchObject({ available: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['collection.failed']);
  });

  it('4000 0000 0000 3410 asks for an OTP: pending with next_action until the right OTP settles it', async () => {
    const res = await collect(card('4000 0000 0000 3410'));
    expect(res.status).toBe(201);
    const { id } = res.body.data;
    expect(res.body.data).toMatchObject({
      status: 'pending_approval',
      next_action: { type: 'otp', message: expect.stringMatching(/one-time password/), submit_url: `/v1/collections/${id}/otp` },
    });
    await sb.advance(30);
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('pending_approval');

    const otp = await sb.post(`/v1/collections/${id}/otp`, { otp: '123456' });
    expect(otp.status).toBe(200);
    expect(otp.body.data).toMatchObject({ status: 'settled', next_action: null });
    expect(await sb.wallet()).toMatchObject({ available: 19_610 });
    expect(await sb.events(id)).toEqual(['collection.pending', 'collection.settled']);

    // A second submit changes nothing.
    const again = await sb.post(`/v1/collections/${id}/otp`, { otp: '000000' });
    expect(again.body.data.status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 19_610 });
  });

  it('a wrong OTP fails the collection (invalid_otp)', async () => {
    const { id } = (await collect(card('4000000000003410'))).body.data;
    const otp = await sb.post(`/v1/collections/${id}/otp`, { otp: '654321' });
    expect(otp.status).toBe(200);
    expect(otp.body.data).toMatchObject({ status: 'failed', failure_reason: 'invalid_otp', next_action: null });
    expect(await sb.wallet()).toMatchObject({ available: 0 });
    expect(await sb.events(id)).toEqual(['collection.pending', 'collection.failed']);
  });

  it('an OTP is refused with validation_error when the body is wrong or the collection has no OTP step', async () => {
    const { id } = (await collect(momo('0551234987'))).body.data;
    const noStep = await sb.post(`/v1/collections/${id}/otp`, { otp: '123456' });
    expect(noStep.status).toBe(400);
    expect(noStep.body.error.details.fields).toEqual([expect.objectContaining({ field: 'otp' })]);
    const bad = await sb.post(`/v1/collections/${id}/otp`, { otp: 'abc' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual([expect.objectContaining({ field: 'otp' })]);
    expect((await sb.post('/v1/collections/col_nothing/otp', { otp: '123456' })).status).toBe(404);
  });

  it('4000 0000 0000 0077 times out: 502 provider_unavailable, and the late success is reversed, never credited', async () => {
    const res = await collect(card('4000 0000 0000 0077'));
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'provider_unavailable', details: { collection_id: expect.stringMatching(/^col_/) } });
    const id = res.body.error.details.collection_id;
    expect((await sb.get(`/v1/collections/${id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'provider_unavailable' });
    await sb.advance(10);
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('failed');
    expect(await sb.wallet()).toMatchObject({ available: 0 });
    expect(await sb.events(id)).toEqual(['collection.failed', 'collection.late_success_reversed']);
    expectBalanced(await sb.trialBalance());
  });

  it.each([
    ['tok_success', 'pending_approval'],
    ['tok_insufficient_funds', 'failed'],
    ['tok_otp', 'pending_approval'],
  ])('a test card token %s charges like its card, and is shown as the token', async (token, status) => {
    const res = await collect(card(token));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status, customer: { brand: null, last4: null, token } });
  });

  it('an unknown token is declined (invalid_token)', async () => {
    const res = await collect(card('tok_nobody_knows'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'failed', provider_reason: 'invalid_token' });
  });
});

describe('POST /v1/collections by bank direct debit', () => {
  it('waits for the mandate, and the sandbox approve helper settles it at once, net of the bank fee', async () => {
    const res = await collect(bank('2000000001'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'pending_approval',
      channel: 'bank',
      fees: 150, // 0.5% on bank debits by default
      customer: { account_number: '2000000001', bank_code: '040100' },
      provider: 'direct-debit',
    });
    const approved = await sb.post(`/api/v1/sandbox/collections/${res.body.data.id}/approve`, {});
    expect(approved.status).toBe(200);
    expect(approved.body.data.status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 29_850 });
    expect(await sb.events(res.body.data.id)).toEqual(['collection.pending', 'collection.settled']);
  });

  it('the decline helper fails it: declined_by_customer', async () => {
    const { id } = (await collect(bank('2000000001'))).body.data;
    const declined = await sb.post(`/api/v1/sandbox/collections/${id}/decline`, {});
    expect(declined.status).toBe(200);
    expect(declined.body.data).toMatchObject({ status: 'failed', failure_reason: 'declined_by_customer', provider_reason: 'MANDATE_DECLINED' });
    // The default approval that was planned changes nothing afterwards.
    await sb.advance(5);
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('failed');
    expect(await sb.wallet()).toMatchObject({ available: 0 });
  });

  it('with no helper call, the sandbox approves after the default callback delay', async () => {
    const { id } = (await collect(bank('1234567890'))).body.data;
    await sb.advance(3);
    expect((await sb.get(`/v1/collections/${id}`)).body.data.status).toBe('settled');
  });

  it.each([
    ['2000000002', 'declined_by_customer', 'MANDATE_DECLINED'],
    ['2000000003', 'insufficient_funds', 'INSUFFICIENT_FUNDS'],
  ])('test account %s fails after the delay: %s', async (account, reason, providerReason) => {
    const { id } = (await collect(bank(account))).body.data;
    await sb.advance(3);
    expect((await sb.get(`/v1/collections/${id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: reason, provider_reason: providerReason });
  });

  it('test account 2000000003 fails even when its holder approves', async () => {
    const { id } = (await collect(bank('2000000003'))).body.data;
    const approved = await sb.post(`/api/v1/sandbox/collections/${id}/approve`, {});
    expect(approved.body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
  });

  it('test account 2000000004 does not exist: 201 failed at once', async () => {
    const res = await collect(bank('2000000004'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'account_not_found', provider_reason: 'ACCOUNT_NOT_FOUND' });
  });

  it('takes the bank customer form-encoded as customer[account_number] and customer[bank_code]', async () => {
    const res = await collectForm('amount=300&currency=GHS&channel=bank&customer[account_number]=2000000001&customer[bank_code]=040100');
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 30_000, customer: { account_number: '2000000001', bank_code: '040100' } });
  });

  it('the helpers answer a settled collection as it stands, refuse other channels, and need a test key', async () => {
    const { id } = (await collect(bank('2000000001'))).body.data;
    await sb.post(`/api/v1/sandbox/collections/${id}/approve`, {});
    const again = await sb.post(`/api/v1/sandbox/collections/${id}/decline`, {});
    expect(again.body.data.status).toBe('settled');
    const momoId = (await collect(momo('0551234987'))).body.data.id;
    const wrong = await sb.post(`/api/v1/sandbox/collections/${momoId}/approve`, {});
    expect(wrong.status).toBe(400);
    expect((await sb.post('/api/v1/sandbox/collections/col_nothing/approve', {})).status).toBe(404);
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'collections:write'] })).body.data.key as string;
    expect((await sb.post(`/api/v1/sandbox/collections/${id}/approve`, {}, { key: live })).status).toBe(403);
  });
});

describe('recovery of a collection whose initiation a stop cut off', () => {
  /** As a stop between the claim and the provider's answer leaves it: no provider recorded, its key in flight under an earlier boot. */
  async function orphan(id: string): Promise<void> {
    await sb.ry.store.run('UPDATE collections SET provider = NULL, provider_reference = NULL, next_action = NULL WHERE id = ?', [id]);
    await sb.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', boot = ?, response_status = NULL, response_body = NULL WHERE resource_id = ?", [sb.ry.boot - 1, id]);
    await sb.ry.store.run('DELETE FROM rail_attempts WHERE ref_id = ?', [id]);
  }

  it('a card number is not kept: the retry resumes by reference alone, which the processor knows, and it settles once', async () => {
    const first = await collect(card('4084084084084081'), 'orphan-card');
    await orphan(first.body.data.id);
    const retry = await collect(card('4084084084084081'), 'orphan-card');
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending_approval', provider: 'card-processor', customer: { brand: 'visa', last4: '4081' } });
    await sb.advance(5);
    expect((await sb.get(`/v1/collections/${first.body.data.id}`)).body.data.status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 19_610 });
    expectBalanced(await sb.trialBalance());
  });

  it('a card number is not kept: when the processor never took the charge, the retry fails it with card_details_unavailable', async () => {
    // The processor is down, so it never takes the first call; then the record is put back as a stop would leave it.
    await sb.ry.health.setDown('card-processor', true);
    const first = await collect(card('4084084084084081'), 'orphan-card-unknown');
    await sb.ry.health.setDown('card-processor', false);
    await sb.ry.store.run("UPDATE collections SET status = 'pending_approval', failure_reason = NULL WHERE id = ?", [first.body.error.details.collection_id]);
    first.body.data = { id: first.body.error.details.collection_id };
    await orphan(first.body.data.id);
    const retry = await collect(card('4084084084084081'), 'orphan-card-unknown');
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'failed', failure_reason: 'card_details_unavailable' });
    expect(await sb.wallet()).toMatchObject({ available: 0 });
  });

  it('a token is kept: the retry resumes with it, the processor knows the reference, and it settles once', async () => {
    const first = await collect(card('tok_success'), 'orphan-token');
    await orphan(first.body.data.id);
    const retry = await collect(card('tok_success'), 'orphan-token');
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending_approval', provider: 'card-processor' });
    await sb.advance(5);
    expect((await sb.get(`/v1/collections/${first.body.data.id}`)).body.data.status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 19_610 });
  });

  it('a bank debit resumes with the same reference, which the direct-debit service already holds', async () => {
    const first = await collect(bank('2000000001'), 'orphan-bank');
    await orphan(first.body.data.id);
    expect(await sb.ry.recoverInterrupted()).toBe(1);
    const retry = await collect(bank('2000000001'), 'orphan-bank');
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending_approval', provider: 'direct-debit' });
    const approved = await sb.post(`/api/v1/sandbox/collections/${first.body.data.id}/approve`, {});
    expect(approved.body.data.status).toBe('settled');
    expect(await sb.ry.store.all("SELECT reference FROM mock_transactions WHERE provider = 'direct-debit'")).toHaveLength(1);
  });
});
