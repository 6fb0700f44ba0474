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
  sb.http
    .post('/v1/collections')
    .set('Authorization', `Bearer ${sb.key}`)
    .set('Idempotency-Key', idempotencyKey)
    .set('Content-Type', 'application/x-www-form-urlencoded')
    .send(form);
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

  it.each(['110.505', '1e3', '-1', '0', 'abc', '+5'])('form-encoded "%s" is refused the same way', async (amount) => {
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
