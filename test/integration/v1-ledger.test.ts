import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

interface Entry {
  id: string;
  object_type: string;
  object_id: string;
  journal_id: string;
  journal_kind: string;
  account: string;
  direction: 'credit' | 'debit';
  amount: number;
  currency: string;
  settlement_id: string;
  created_at: string;
}

let sb: TestSandbox;
let idem = 0;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

const signed = (entry: Entry) => (entry.direction === 'credit' ? entry.amount : -entry.amount);
const sumBy = (entries: Entry[], key: (e: Entry) => string) => {
  const sums: Record<string, number> = {};
  for (const e of entries) sums[key(e)] = (sums[key(e)] ?? 0) + signed(e);
  return sums;
};

/** Every page of a list, following next_cursor. */
async function all<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  let url: string | null = path;
  while (url) {
    const res = await sb.get(url);
    expect(res.status).toBe(200);
    items.push(...res.body.data);
    const next: string | null = res.body.meta.next_cursor;
    url = next ? `${path}${path.includes('?') ? '&' : '?'}cursor=${next}` : null;
  }
  return items;
}

const today = async () => ((await sb.get('/api/v1/sandbox/clock')).body.data.now as string).slice(0, 10);
const stl = (date: string) => `stl_${date.replaceAll('-', '')}`;
const wallet = (account: string) => `merchant:${sb.ry.sandbox.merchantId}:wallet:${account}`;

async function settledCharge(amount: number) {
  const res = await sb.charge({ amount, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
  expect(res.status).toBe(201);
  await sb.advance(10);
  return (await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data as { id: string; amount: number; fees: number; status: string };
}

async function settledPayout(amount: string) {
  const res = await sb.post('/v1/payouts', { amount, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { sign: true, idempotencyKey: `ledger-po-${++idem}` });
  expect(res.status).toBe(201);
  await sb.advance(10);
  return (await sb.get(`/v1/payouts/${res.body.data.id}`)).body.data as { id: string; amount: number; fees: number; status: string };
}

describe('GET /v1/ledger/entries', () => {
  it("maps a settled charge to its journal's entries: the wallet gets amount less fees, the fees account the fee, and the journal nets to zero", async () => {
    const charge = await settledCharge(10_000);
    expect(charge.status).toBe('success');
    const entries = await all<Entry>(`/v1/ledger/entries?object_id=${charge.id}`);
    expect(entries.length).toBeGreaterThanOrEqual(3);
    expect(new Set(entries.map((e) => e.object_type))).toEqual(new Set(['charge']));
    expect(sumBy(entries, (e) => e.account)).toMatchObject({
      [wallet('available')]: charge.amount - charge.fees,
      'revenue:fees': charge.fees,
    });
    for (const sums of Object.values(groupBy(entries, (e) => e.journal_id))) expect(sumBy(sums, (e) => e.currency)).toEqual({ GHS: 0 });
    expect(entries[0]).toMatchObject({
      object: 'ledger_entry',
      object_id: charge.id,
      journal_kind: 'charge.settled',
      currency: 'GHS',
      livemode: false,
      reverses: null,
      settlement_id: stl(await today()),
    });
    expect(entries[0]!.id).toMatch(/^ent_[0-9a-z]+_\d+$/);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  });

  it('shows a payout as its reservation and its settlement: the wallet pays amount + fee, the reservation nets out', async () => {
    await sb.fund(50_000);
    const payout = await settledPayout('100.00');
    expect(payout.status).toBe('settled');
    const entries = await all<Entry>(`/v1/ledger/entries?object_id=${payout.id}`);
    expect([...new Set(entries.map((e) => e.journal_kind))].sort()).toEqual(['payout.reserved', 'payout.settled']);
    const byAccount = sumBy(entries, (e) => e.account);
    expect(byAccount[wallet('available')]).toBe(-(payout.amount + payout.fees));
    expect(byAccount[wallet('reserved')]).toBe(0);
    expect(byAccount['revenue:fees']).toBe(payout.fees);
  });

  it('names a wallet funding as its own object, and a trade by its reference in both currencies', async () => {
    await sb.fund(500_000);
    const funding = (await all<Entry>('/v1/ledger/entries')).find((e) => e.object_type === 'wallet_funding')!;
    expect(funding.object_id).toBe(funding.journal_id);
    expect((await all<Entry>(`/v1/ledger/entries?object_id=${funding.object_id}`)).map((e) => e.account).sort()).toEqual(['external:sandbox:funding', wallet('available')]);

    const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
    expect(quote.body).toMatchObject({ status: true });
    const trade = await sb.execute({ quote_reference: quote.body.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' });
    expect(trade.status).toBe(201);
    const entries = await all<Entry>(`/v1/ledger/entries?object_id=${trade.body.data.reference}`);
    expect(new Set(entries.map((e) => e.currency))).toEqual(new Set(['GHS', 'USDT']));
    expect(sumBy(entries, (e) => e.currency)).toEqual({ GHS: 0, USDT: 0 });
    expect(sumBy(entries, (e) => e.account)[wallet('available')]).toBe(-quote.body.data.net_fiat_amount);
    expect((await all<Entry>('/v1/ledger/entries?currency=USDT')).every((e) => e.currency === 'USDT')).toBe(true);
  });

  it('filters by account (wallet:available is shorthand for your own), by time range, and pages newest first without repeats', async () => {
    await sb.fund(50_000);
    await settledCharge(10_000);
    await settledPayout('20.00');
    const everything = await all<Entry>('/v1/ledger/entries');
    const paged = await all<Entry>('/v1/ledger/entries?page_size=2');
    expect(paged.map((e) => e.id)).toEqual(everything.map((e) => e.id));
    expect(everything.map((e) => e.created_at)).toEqual([...everything.map((e) => e.created_at)].sort().reverse());

    const available = await all<Entry>('/v1/ledger/entries?account=wallet:available');
    expect(available.length).toBeGreaterThan(0);
    expect(available.every((e) => e.account === wallet('available'))).toBe(true);
    expect(await all<Entry>(`/v1/ledger/entries?account=${encodeURIComponent(wallet('available'))}`)).toEqual(available);
    expect(available.reduce((total, e) => total + signed(e), 0)).toBe((await sb.wallet()).available);

    const instants = [...new Set(everything.map((e) => e.created_at))].sort();
    const from = instants[1]!;
    const ranged = await all<Entry>(`/v1/ledger/entries?from=${from}&to=${instants[instants.length - 1]}`);
    expect(ranged.length).toBeGreaterThan(0);
    expect(ranged.every((e) => e.created_at >= from && e.created_at < instants[instants.length - 1]!)).toBe(true);
    expect(await all<Entry>('/v1/ledger/entries?object_id=chg_0000000000nothing00')).toEqual([]);
  });

  it('keeps test and live apart: a live key sees none of the test entries', async () => {
    await sb.fund(10_000);
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] });
    expect(live.status).toBe(201);
    const res = await sb.get('/v1/ledger/entries', live.body.data.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it.each([
    ['currency=EUR', 'query.currency'],
    ['from=yesterday', 'query.from'],
    ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
    ['page_size=101', 'query.page_size'],
    ['cursor=not-ours', 'query.cursor'],
    ['colour=blue', 'query.colour'],
  ])('refuses %s with validation_error naming %s', async (query, field) => {
    const res = await sb.get(`/v1/ledger/entries?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });
});

describe('GET /v1/settlements', () => {
  it("reports each day the wallet moved: opening, closing, gross in and out, fees and counts, and a day's closing opens the next", async () => {
    const day1 = await today();
    await sb.fund(50_000);
    const charge = await settledCharge(10_000);
    const payout = await settledPayout('20.00');
    await sb.advance(86_400);
    const day2 = await today();
    expect(day2).not.toBe(day1);
    const charge2 = await settledCharge(3_000);

    const list = (await sb.get('/v1/settlements')).body;
    expect(list.data.map((s: { id: string }) => s.id)).toEqual([stl(day2), stl(day1)]);
    expect(list.meta.next_cursor).toBeNull();
    const [second, first] = list.data;
    expect(first).toMatchObject({
      object: 'settlement',
      date: day1,
      status: 'closed',
      currency: 'GHS',
      opening_balance: 0,
      gross_in: 50_000 + charge.amount,
      gross_out: payout.amount,
      fees: charge.fees + payout.fees,
      closing_balance: 50_000 + charge.amount - charge.fees - payout.amount - payout.fees,
      counts: { in: 2, out: 1, by_object: { wallet_funding: 1, charge: 1, payout: 1 } },
      period_start: `${day1}T00:00:00.000Z`,
    });
    expect(first.net).toBe(first.closing_balance - first.opening_balance);
    expect(first.lines).toBeUndefined();
    expect(second).toMatchObject({ status: 'open', opening_balance: first.closing_balance, gross_in: charge2.amount, fees: charge2.fees, gross_out: 0 });
    const now = await sb.wallet();
    expect(second.closing_balance).toBe(now.available + now.reserved);
    expect(second).toMatchObject({ closing_available: now.available, closing_reserved: now.reserved });

    const paged = (await sb.get('/v1/settlements?page_size=1')).body;
    expect(paged.data.map((s: { id: string }) => s.id)).toEqual([stl(day2)]);
    expect((await sb.get(`/v1/settlements?page_size=1&cursor=${paged.meta.next_cursor}`)).body.data.map((s: { id: string }) => s.id)).toEqual([stl(day1)]);
  });

  it('retrieves a report with one receipt line per object, and its entries through the settlement id', async () => {
    await sb.fund(50_000);
    const charge = await settledCharge(10_000);
    const payout = await settledPayout('20.00');
    const failed = await sb.post('/v1/payouts', { amount: '5.00', currency: 'GHS', channel: 'momo', msisdn: '0551234988' }, { sign: true, idempotencyKey: 'ledger-failed' });
    await sb.advance(10);
    const id = stl(await today());
    const res = await sb.get(`/v1/settlements/${id}`);
    expect(res.status).toBe(200);
    const report = res.body.data;
    expect(report.lines).toEqual([
      expect.objectContaining({ object_type: 'wallet_funding', direction: 'in', gross: 50_000, fee: 0, net: 50_000 }),
      expect.objectContaining({ object_type: 'charge', object_id: charge.id, direction: 'in', gross: charge.amount, fee: charge.fees, net: charge.amount - charge.fees }),
      expect.objectContaining({ object_type: 'payout', object_id: payout.id, direction: 'out', gross: payout.amount, fee: payout.fees, net: -(payout.amount + payout.fees) }),
    ]);
    // The failed payout reserved and refunded: the wallet did not move, so it is no receipt line.
    expect(JSON.stringify(report.lines)).not.toContain(failed.body.data.id);
    const entries = await all<Entry>(`/v1/ledger/entries?object_id=${id}`);
    expect(entries.every((e) => e.settlement_id === id)).toBe(true);
    const walletSum = entries.filter((e) => e.account.startsWith('merchant:')).reduce((t, e) => t + signed(e), 0);
    expect(walletSum).toBe(report.closing_balance - report.opening_balance);
    expectBalanced(await sb.trialBalance());
  });

  it('exports a report as CSV: a header, one row per line, minor and major units', async () => {
    await sb.fund(12_345);
    const id = stl(await today());
    const res = await sb.get(`/v1/settlements/${id}.csv`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${id}.csv"`);
    const rows = res.text.split('\r\n');
    expect(rows[0]).toBe('settlement_id,date,line,object_type,object_id,direction,gross,fee,net,currency,gross_major,fee_major,net_major');
    expect(rows[1]).toMatch(new RegExp(`^${id},\\d{4}-\\d{2}-\\d{2},1,wallet_funding,jrn_\\w+,in,12345,0,12345,GHS,123\\.45,0\\.00,123\\.45$`));
    expect(rows.slice(2)).toEqual(['']);
  });

  it.each(['stl_20250101', 'stl_20261131', 'stl_29990101', 'chg_0000000000aaaaaaaaaa', 'anything'])('answers 404 not_found for %s, a day without a report or no settlement id at all', async (id) => {
    await sb.fund(1_000);
    for (const path of [`/v1/settlements/${id}`, `/v1/settlements/${id}.csv`]) {
      const res = await sb.get(path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: false, error: { code: 'not_found' } });
      expect(res.body.message).toBe(`No such settlement: '${id}'`);
    }
  });
});

function groupBy<T>(items: T[], key: (item: T) => string): Record<string, T[]> {
  const groups: Record<string, T[]> = {};
  for (const item of items) {
    const group = key(item);
    groups[group] ??= [];
    groups[group].push(item);
  }
  return groups;
}
