import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

// GET /v1/collections, /v1/payouts and /v1/bills: a merchant's records of one kind, newest first,
// keyset-paged like every list, filtered by status.

let sb: TestSandbox;
let idem = 0;
beforeEach(async () => {
  sb = await startTestSandbox({}, loadScenarios([SANDBOX_SCENARIOS]).rules);
});
afterEach(() => sb.close());

const collect = async (customer: string) => {
  const res = await sb.post('/v1/collections', { amount: '50.00', currency: 'GHS', channel: 'momo', customer }, { idempotencyKey: `list-col-${++idem}` });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
};

describe('GET /v1/collections', () => {
  it('lists the collections newest first, one page at a time, with no row skipped or repeated', async () => {
    const ids = [await collect('0551234987'), await collect('0551234988'), await collect('0551234987')];
    const first = await sb.get('/v1/collections?page_size=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data[0]).toMatchObject({ object: 'collection', amount: 5_000, amount_major: '50.00' });
    const inserted = await collect('0551234987'); // arrives between the pages: above the cursor
    const second = await sb.get(`/v1/collections?page_size=2&cursor=${first.body.meta.next_cursor}`);
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(second.body.meta.next_cursor).toBeNull();
    expect((await sb.get('/v1/collections?page_size=1')).body.data[0].id).toBe(inserted);
  });

  it('filters by status once the providers have answered', async () => {
    const paid = await collect('0551234987');
    const refused = await collect('0551234988');
    await sb.advance(5);
    const settled = await sb.get('/v1/collections?status=settled');
    expect(settled.body.data.map((c: { id: string }) => c.id)).toEqual([paid]);
    const failed = await sb.get('/v1/collections?status=failed');
    expect(failed.body.data.map((c: { id: string }) => c.id)).toEqual([refused]);
  });

  it('refuses an unknown status, a bad cursor and an oversized page with validation_error', async () => {
    for (const query of ['status=success', 'cursor=nonsense', 'page_size=101', 'colour=red']) {
      const res = await sb.get(`/v1/collections?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('validation_error');
    }
  });
});

describe('GET /v1/payouts and GET /v1/bills', () => {
  it('list the payouts of single and bulk requests, and the bills', async () => {
    await sb.fund(100_000);
    const single = await sb.post('/v1/payouts', { amount: '10.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { sign: true, idempotencyKey: 'list-po-1' });
    const bulk = await sb.post(
      '/v1/payouts/bulk',
      {
        items: [
          { amount: '5.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
          { amount: 'abc', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
        ],
      },
      { sign: true, idempotencyKey: 'list-pob-1' },
    );
    const bill = await sb.post('/v1/bills', { category: 'airtime', customer: '0245550101', amount: '5.00', currency: 'GHS' }, { sign: true, idempotencyKey: 'list-bil-1' });
    expect([single.status, bulk.status, bill.status]).toEqual([201, 201, 201]);

    const payouts = await sb.get('/v1/payouts');
    expect(payouts.status).toBe(200);
    expect(payouts.body.data.map((p: { id: string }) => p.id)).toEqual([bulk.body.data.items[0].payout.id, single.body.data.id]);
    const bills = await sb.get('/v1/bills?status=pending');
    expect(bills.body.data.map((b: { id: string }) => b.id)).toEqual([bill.body.data.id]);
    expect((await sb.get('/v1/bills?status=settled')).body.data).toEqual([]);
  });
});
