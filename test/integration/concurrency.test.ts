import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/kernel/sign-request.ts';
import { processPostgresCluster } from '../support/postgres-cluster.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// A merchant's client that retries hard: a thousand copies of one request, all at once, under one
// Idempotency-Key. Exactly one effect; every answer is the stored response or 409 while the first
// is in flight; never a 5xx.

const COPIES = 1_000;
let sb: TestSandbox;

beforeAll(async () => {
  // A provider timeout as in production (5 s), not the tests' usual 250 ms: a thousand requests at
  // once on a busy machine must not turn into failover and 502s, which is not what this tests.
  sb = await startTestSandbox({ rails: { timeout_ms: 5_000 } });
  await sb.fund(10_000_000);
});
afterAll(() => sb.close());

async function storm(path: string, body: unknown, idempotencyKey: string, signed: boolean) {
  const raw = JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${sb.key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
  if (signed) Object.assign(headers, signatureHeaders(sb.signingSecret, sb.ry.wallClock.now(), { method: 'POST', pathAndQuery: path, idempotencyKey, rawBody: raw }));
  const answers = await Promise.all(
    Array.from({ length: COPIES }, async () => {
      const res = await fetch(sb.baseUrl + path, { method: 'POST', headers, body: raw });
      return { status: res.status, text: await res.text() };
    }),
  );
  const byStatus: Record<string, { status: number; text: string }[]> = {};
  for (const a of answers) {
    const status = String(a.status);
    byStatus[status] ??= [];
    byStatus[status].push(a);
  }
  for (const status of Object.keys(byStatus)) expect(['201', '409']).toContain(status);
  const created = byStatus['201'] ?? [];
  expect(created.length).toBeGreaterThanOrEqual(1);
  // Every 201 is the same stored response.
  expect(new Set(created.map((a) => a.text)).size).toBe(1);
  for (const conflict of byStatus['409'] ?? []) expect(JSON.parse(conflict.text).error.code).toBe('idempotency_conflict');
  return JSON.parse(created[0]!.text).data;
}

async function transactionsCount(): Promise<number> {
  return (await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM transactions'))!.n;
}

describe(`${COPIES} concurrent copies of one request under one Idempotency-Key`, () => {
  it('create exactly one charge', async () => {
    const before = await transactionsCount();
    const charge = await storm('/api/v1/charges', { amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, 'storm-charge', false);
    expect(await transactionsCount()).toBe(before + 1);
    await sb.advance(10);
    expect((await sb.get(`/api/v1/charges/${charge.id}`)).body.data.status).toBe('success');
  });

  it('create exactly one signed transfer, reserving once', async () => {
    const wallet = await sb.wallet();
    const transfer = await storm('/api/v1/transfers', { amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, 'storm-transfer', true);
    expect(await sb.wallet()).toMatchObject({ available: wallet.available - transfer.total_debited, reserved: wallet.reserved + transfer.total_debited });
    const count = await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM transfers WHERE amount = 20000');
    expect(count!.n).toBe(1);
  });

  it('execute one trade from one quote', async () => {
    const quote = (await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 })).body.data;
    const trade = await storm('/api/v1/trades', { quote_reference: quote.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' }, 'storm-trade', true);
    const trades = await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM trades');
    expect(trades!.n).toBe(1);
    expect(trade.reference).toMatch(/^trd_/);
    expectBalanced(await sb.trialBalance());
  });
});

// Many merchants' requests at once, each sent several times under its own key: on PostgreSQL the
// charges asked for together commit together (their claims among them), so twins land in one
// batch, fail it, and each is committed alone: exactly one charge per key, never a 5xx.
describe.each([
  { store: 'SQLite', db: async () => undefined },
  { store: 'PostgreSQL', db: async () => (await processPostgresCluster()).createDatabase() },
])('twenty charges at once, each sent five times under its own key, on $store', ({ db }) => {
  let twins: TestSandbox;
  beforeAll(async () => {
    const url = await db();
    twins = await startTestSandbox({ rails: { timeout_ms: 5_000 }, ...(url ? { db: url } : {}) });
  });
  afterAll(() => twins.close());

  it('creates one charge per key: every 201 of a key is its stored response, the other copies 409 or that same response', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `twins-${i}`);
    const body = (i: number) => JSON.stringify({ amount: 10_000 + i, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    const answers = await Promise.all(
      keys.flatMap((key, i) =>
        Array.from({ length: 5 }, async () => {
          const res = await fetch(`${twins.baseUrl}/api/v1/charges`, {
            method: 'POST',
            headers: { authorization: `Bearer ${twins.key}`, 'content-type': 'application/json', 'idempotency-key': key },
            body: body(i),
          });
          return { key, status: res.status, text: await res.text() };
        }),
      ),
    );
    for (const key of keys) {
      const mine = answers.filter((a) => a.key === key);
      for (const a of mine) expect([201, 409], a.text).toContain(a.status);
      const created = mine.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.text)).size).toBe(1);
      for (const conflict of mine.filter((a) => a.status === 409)) expect(JSON.parse(conflict.text).error.code).toBe('idempotency_conflict');
    }
    const charges = await twins.ry.store.all<{ amount: number }>('SELECT amount FROM charges WHERE amount >= 10000 AND amount < 10020 ORDER BY amount');
    expect(charges.map((c) => c.amount)).toEqual(keys.map((_, i) => 10_000 + i));
    // A retry after the storm is answered from the stored response, byte for byte.
    const [first] = answers.filter((a) => a.key === 'twins-7' && a.status === 201);
    const again = await fetch(`${twins.baseUrl}/api/v1/charges`, {
      method: 'POST',
      headers: { authorization: `Bearer ${twins.key}`, 'content-type': 'application/json', 'idempotency-key': 'twins-7' },
      body: body(7),
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(first!.text);
  });
});
