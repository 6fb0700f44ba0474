// GET /api/v1/trades/quotes: the merchant's quotes, newest first, keyset-paged and filtered, each
// environment seeing only its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
type Listed = { reference: string; object: string; status: string; side: string; asset: string; trade_reference: string | null };
const created: string[] = [];

const quote = async (side: 'buy' | 'sell', asset: 'USDT' | 'USDC' = 'USDT') => {
  const res = await sb.post('/api/v1/trades/quote', { side, asset, network: asset === 'USDT' ? 'TRC20' : 'ERC20', fiat_amount: 50_000 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  created.push(res.body.data.reference);
  return res.body.data.reference as string;
};
const list = async (qs = '', key = sb.key) => {
  const res = await sb.get(`/api/v1/trades/quotes${qs}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { items: res.body.data as Listed[], next: res.body.meta.next_cursor as string | null };
};

beforeAll(async () => {
  sb = await startTestSandbox();
  await sb.fund(10_000_000);
  // Five buys and two sells, one USDC; the first buy executed, so consumed with its trade.
  const first = await quote('buy');
  const trade = await sb.execute({ quote_reference: first, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' });
  expect(trade.status, JSON.stringify(trade.body)).toBe(201);
  for (let i = 0; i < 3; i++) await quote('buy');
  await quote('sell');
  await quote('buy', 'USDC');
  await quote('sell');
});
afterAll(async () => {
  await sb?.close();
});

describe('GET /api/v1/trades/quotes', () => {
  it('lists every quote newest first, each with the trade that consumed it', async () => {
    const { items, next } = await list();
    expect(items.map((q) => q.reference)).toEqual([...created].reverse());
    expect(next).toBeNull();
    expect(items.every((q) => q.object === 'quote')).toBe(true);
    const consumed = items.find((q) => q.reference === created[0])!;
    expect(consumed.status).toBe('consumed');
    expect(consumed.trade_reference).toMatch(/^trd_/);
    expect(items.filter((q) => q.reference !== created[0]).every((q) => q.status === 'created' && q.trade_reference === null)).toBe(true);
  });

  it('is not taken for a trade reference by GET /api/v1/trades/:reference', async () => {
    const res = await sb.get('/api/v1/trades/quotes');
    expect(res.body.message).toBe('Quotes');
  });

  it('pages with a cursor: every quote once, in order, even when new quotes arrive between pages', async () => {
    const first = await list('?page_size=3');
    expect(first.items).toHaveLength(3);
    expect(first.next).toEqual(expect.any(String));
    const newcomer = await quote('buy');
    const seen = [...first.items];
    let cursor = first.next;
    while (cursor) {
      const next = await list(`?page_size=3&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...next.items);
      cursor = next.next;
    }
    const before = created.filter((r) => r !== newcomer).reverse();
    expect(seen.map((q) => q.reference)).toEqual(before);
    expect((await list('?page_size=1')).items[0]!.reference).toBe(newcomer);
  });

  it('filters by status, side and asset, and pages within the filter', async () => {
    expect((await list('?status=consumed')).items.map((q) => q.reference)).toEqual([created[0]]);
    const sells = await list('?side=sell');
    expect(sells.items.length).toBe(2);
    expect(sells.items.every((q) => q.side === 'sell')).toBe(true);
    expect((await list('?asset=USDC')).items.map((q) => q.asset)).toEqual(['USDC']);
    const page1 = await list('?side=buy&page_size=2');
    const page2 = await list(`?side=buy&page_size=2&cursor=${encodeURIComponent(page1.next!)}`);
    expect([...page1.items, ...page2.items].every((q) => q.side === 'buy')).toBe(true);
    expect(new Set([...page1.items, ...page2.items].map((q) => q.reference)).size).toBe(4);
  });

  it('filters by creation time', async () => {
    const all = await list();
    const far = new Date(Date.parse('2100-01-01T00:00:00Z')).toISOString();
    expect((await list(`?created_from=${far}`)).items).toEqual([]);
    expect((await list(`?created_to=${far}`)).items).toHaveLength(all.items.length);
  });

  it.each([
    ['status=open', 'status'],
    ['side=hold', 'side'],
    ['asset=BTC', 'asset'],
    ['page_size=0', 'page_size'],
    ['page_size=101', 'page_size'],
    ['cursor=bm9wZQ', 'cursor'],
    ['created_from=yesterday', 'created_from'],
    ['colour=blue', 'colour'],
  ])('refuses %s with validation_error naming %s', async (qs, field) => {
    const res = await sb.get(`/api/v1/trades/quotes?${qs}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(JSON.stringify(res.body.error.details)).toContain(field);
  });

  it("keeps test and live apart: a live key sees none of the test key's quotes", async () => {
    const live = (await sb.post('/api/v1/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    const { items } = await list('', live);
    expect(items.some((q) => created.includes(q.reference))).toBe(false);
  });

  it('reads one quote by its reference at GET /api/v1/trades/quotes/:reference, with its trade', async () => {
    const res = await sb.get(`/api/v1/trades/quotes/${created[0]}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ reference: created[0], object: 'quote', status: 'consumed', trade_reference: expect.stringMatching(/^trd_/) });
    const trade = await sb.get(`/api/v1/trades/${res.body.data.trade_reference}`);
    expect(trade.body.data.quote_reference).toBe(created[0]);
  });

  it('answers 404 not_found for a quote of no one, or of the other environment', async () => {
    const live = (await sb.post('/api/v1/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    for (const [reference, key] of [
      ['qt_zzzzzzzzzzzzzzzzzzzz', sb.key],
      [created[1]!, live],
    ] as const) {
      const res = await sb.get(`/api/v1/trades/quotes/${reference}`, key);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { id: reference } });
    }
  });

  it('needs the read scope and a key', async () => {
    expect((await sb.http.get('/api/v1/trades/quotes')).status).toBe(401);
  });
});
