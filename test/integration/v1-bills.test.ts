import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postForm } from '../support/signed-form.ts';
import { expectBalanced, startTestSandbox, type PostOptions, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
let idem = 0;
beforeEach(async () => {
  sb = await startTestSandbox();
  await sb.fund(100_000);
});
afterEach(() => sb.close());

const pay = (body: unknown, opts: PostOptions = {}) => sb.post('/v1/bills', body, { sign: true, idempotencyKey: `bil-${++idem}`, ...opts });
const bill = async (id: string) => (await sb.get(`/v1/bills/${id}`)).body.data;
const ecg = (meter: string, amount = '20.00') => ({ category: 'electricity', customer: meter, amount, currency: 'GHS' });

describe('POST /v1/bills: airtime and data', () => {
  it.each([
    ['0241234567', 'MTN'],
    ['0201234567', 'TELECEL'],
    ['0561234567', 'AT'],
  ])('tops up %s on %s, the network inferred from the number', async (number, network) => {
    const res = await pay({ category: 'airtime', customer: number, amount: '5.00', currency: 'GHS' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      object: 'bill',
      status: 'pending',
      category: 'airtime',
      biller: network,
      product: null,
      amount: 500,
      amount_major: '5.00',
      fees: 50,
      total_debited: 550,
      provider: 'bills',
    });
    expect(res.body.data.id).toMatch(/^bil_/);
    expect(res.body.data.customer).toBe(`233${number.slice(1)}`);
    expect(await sb.wallet()).toMatchObject({ available: 99_450, reserved: 550 });
    await sb.advance(5);
    expect((await bill(res.body.data.id)).status).toBe('settled');
    expect(await sb.wallet()).toMatchObject({ available: 99_450, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['bill.pending', 'bill.settled']);
    expectBalanced(await sb.trialBalance());
  });

  it('takes a network override for a ported number', async () => {
    const res = await pay({ category: 'airtime', customer: '0241234567', network: 'AT', amount: '5.00', currency: 'GHS' });
    expect(res.body.data.biller).toBe('AT');
  });

  it("sells a data bundle at the catalogue's price", async () => {
    const res = await pay({ category: 'data', customer: '0241234567', product: 'MTN-DATA-1GB', currency: 'GHS' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ category: 'data', biller: 'MTN', product: 'MTN-DATA-1GB', amount: 1_000 });
    await sb.advance(5);
    expect((await bill(res.body.data.id)).status).toBe('settled');
  });

  it("refuses a bundle of another network, naming product, and a price that is not the bundle's, naming amount", async () => {
    const other = await pay({ category: 'data', customer: '0201234567', product: 'MTN-DATA-1GB', currency: 'GHS' });
    expect(other.status).toBe(400);
    expect(other.body.error.details.fields).toEqual([{ field: 'product', message: 'product must be one of TELECEL-DATA-1GB, TELECEL-DATA-3GB for TELECEL data' }]);
    const price = await pay({ category: 'data', customer: '0241234567', product: 'MTN-DATA-1GB', amount: '9.00', currency: 'GHS' });
    expect(price.body.error.details.fields).toEqual([{ field: 'amount', message: 'amount must be the price of MTN-DATA-1GB, 10.00, or left out' }]);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });

  it('refuses airtime below the least top-up', async () => {
    const res = await pay({ category: 'airtime', customer: '0241234567', amount: '0.50', currency: 'GHS' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'amount', message: 'amount must be from 1.00 to 500.00 for MTN airtime' }]);
  });
});

describe('POST /v1/bills: utilities and TV', () => {
  it('buys ECG prepaid electricity: bill.settled carries the meter token and its units', async () => {
    const res = await pay(ecg('01000000001', '20.00'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ category: 'electricity', biller: 'ECG', customer: '01000000001', status: 'pending', token: null });
    await sb.advance(5);
    const settled = await bill(res.body.data.id);
    expect(settled).toMatchObject({ status: 'settled', units: '13.3 kWh' });
    expect(settled.token).toMatch(/^\d{4}-\d{4}-\d{4}-\d{4}-\d{4}$/);
    const event = (await sb.ry.outbox.forObject(sb.ry.store, res.body.data.id)).find((e) => e.type === 'bill.settled');
    expect(JSON.stringify(event)).toContain(settled.token);
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 2_050, reserved: 0 });
  });

  it('lists the bill among the wallet transactions, as a debit on channel bills', async () => {
    const res = await pay(ecg('01000000001'));
    const listed = (await sb.get('/api/v1/transactions?type=bill')).body.data;
    expect(listed).toEqual([expect.objectContaining({ id: res.body.data.id, type: 'bill', direction: 'debit', status: 'pending', amount: 2_000, fees: 50, channel: 'bills', provider: 'bills' })]);
  });

  it('pays a GWCL water account', async () => {
    const res = await pay({ category: 'water', customer: '2000000001', amount: '35.00', currency: 'GHS' });
    expect(res.body.data).toMatchObject({ category: 'water', biller: 'GWCL', amount: 3_500, token: null });
    await sb.advance(5);
    expect((await bill(res.body.data.id)).status).toBe('settled');
  });

  it.each([
    ['DSTV', '7000000001', 'DSTV-PADI', 8_500],
    ['GOTV', '8000000001', 'GOTV-MAX', 11_000],
  ])('renews %s smartcard %s with %s', async (biller, card, product, amount) => {
    const res = await pay({ category: 'tv', biller, customer: card, product, currency: 'GHS' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ category: 'tv', biller, product, amount, customer: card });
    await sb.advance(5);
    expect((await bill(res.body.data.id)).status).toBe('settled');
  });

  it('refunds the reservation when the vend fails after acceptance (meter 01000000003)', async () => {
    const res = await pay(ecg('01000000003'));
    expect(res.body.data.status).toBe('pending');
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 2_050, reserved: 2_050 });
    await sb.advance(5);
    expect(await bill(res.body.data.id)).toMatchObject({ status: 'failed', failure_reason: 'vend_failed', provider_reason: 'VEND_FAILED', token: null });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['bill.pending', 'bill.failed']);
    const journals = await sb.ry.store.all<{ kind: string }>("SELECT kind FROM ledger_journals WHERE ref_type = 'bill' ORDER BY seq");
    expect(journals.map((j) => j.kind)).toEqual(['bill.reserved', 'bill.refunded']);
    expectBalanced(await sb.trialBalance());
  });

  it('refuses an unknown meter at once (01000000002): the bill fails as invalid_customer and nothing stays reserved', async () => {
    const res = await pay(ecg('01000000002'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'invalid_customer', provider_reason: 'INVALID_CUSTOMER', provider: null });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['bill.failed']);
  });

  it('waits out a slow vend (01000000004): still pending at the first status poll, settled when the biller finishes', async () => {
    const res = await pay(ecg('01000000004'));
    await sb.advance(61);
    expect((await bill(res.body.data.id)).status).toBe('pending');
    await sb.advance(30);
    expect(await bill(res.body.data.id)).toMatchObject({ status: 'settled', units: '13.3 kWh' });
  });

  it('answers 502 and refunds when the biller times out (01000000005), then reverses its late vend', async () => {
    const res = await pay(ecg('01000000005'));
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_unavailable');
    const id = res.body.error.details.bill_id;
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    await sb.advance(10);
    expect(await bill(id)).toMatchObject({ status: 'failed', failure_reason: 'provider_unavailable' });
    expect(await sb.events(id)).toEqual(['bill.failed', 'bill.late_success_reversed']);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('refuses a meter number that is not 11 digits, naming customer', async () => {
    const res = await pay(ecg('12345'));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'customer', message: 'customer must be the 11-digit ECG prepaid meter number' }]);
  });

  it('refuses a TV package of another biller', async () => {
    const res = await pay({ category: 'tv', biller: 'GOTV', customer: '8000000001', product: 'DSTV-PADI', currency: 'GHS' });
    expect(res.body.error.details.fields).toEqual([{ field: 'product', message: 'product must be one of GOTV-SMALLIE, GOTV-MAX for GOTV tv' }]);
  });
});

describe('POST /v1/bills: access and bad input change nothing', () => {
  it('requires the request signature', async () => {
    const res = await pay(ecg('01000000001'), { sign: false });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_signature');
  });

  it('requires the transfers:write scope', async () => {
    const reader = (await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] })).body.data;
    const res = await pay(ecg('01000000001'), { key: reader.key, signingSecret: reader.signing_secret });
    expect(res.status).toBe(403);
    expect(res.body.error.details.required_scope).toBe('transfers:write');
  });

  it('answers 422 insufficient_funds when the wallet cannot cover amount plus fee', async () => {
    const res = await pay(ecg('01000000001', '1000.00'));
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'insufficient_funds', details: { available: 100_000, required: 100_050, currency: 'GHS' } });
    expect(await sb.ry.store.all('SELECT id FROM bills')).toEqual([]);
  });

  it('refuses an unknown category', async () => {
    const res = await pay({ category: 'gas', customer: '1', amount: '1.00', currency: 'GHS' });
    expect(res.body.error.details.fields).toEqual([{ field: 'category', message: 'category must be one of airtime, data, electricity, water, tv' }]);
  });

  it.each(['110.505', '1e3', '-1', '0', 'abc', ' 5'])('refuses the amount %j, naming amount', async (amount) => {
    const res = await pay(ecg('01000000001', amount));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['amount']);
  });

  it('takes a form-encoded body', async () => {
    const res = await postForm(sb, '/v1/bills', { category: 'electricity', customer: '01000000001', amount: '110.5', currency: 'GHS' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 11_050, amount_major: '110.50' });
  });

  it('answers 404 for an unknown bill', async () => {
    expect((await sb.get('/v1/bills/bil_0000000000aaaaaaaaaa')).body.error.code).toBe('not_found');
  });
});

describe('GET /v1/bills/products', () => {
  it('lists the bundles and packages with prices, and the open-amount billers with their bounds', async () => {
    const res = await sb.get('/v1/bills/products?category=data&biller=AT');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { code: 'AT-DATA-1GB', category: 'data', biller: 'AT', name: 'AT 1 GB, 30 days', amount: 800, amount_major: '8.00', min_amount: null, max_amount: null },
      { code: 'AT-DATA-4GB', category: 'data', biller: 'AT', name: 'AT 4 GB, 30 days', amount: 2_500, amount_major: '25.00', min_amount: null, max_amount: null },
    ]);
    const ecgEntry = (await sb.get('/v1/bills/products?category=electricity')).body.data;
    expect(ecgEntry).toEqual([
      { code: null, category: 'electricity', biller: 'ECG', name: 'ECG prepaid electricity (returns a token)', amount: null, amount_major: null, min_amount: 500, max_amount: 500_000 },
    ]);
  });

  it('refuses an unknown category filter', async () => {
    expect((await sb.get('/v1/bills/products?category=gas')).status).toBe(400);
  });
});
