// The ledger as reconciliation source of truth: for any sequence of money movements (funding,
// charges, collections by momo and card, transfers, payouts, bills and trades, succeeding or
// failing, with time passing across days), once the rails have settled:
//  - the ledger entries of each object sum to its amounts and fees, as its final status says;
//  - every journal nets to zero per currency;
//  - the settlement reports chain (each day opens where the last closed), each report's net is
//    gross in - gross out - fees, and the latest report closes at the wallet balance.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toMajorString } from '../../src/kernel/money.ts';
import { withSandbox, type TestSandbox } from '../support/test-sandbox.ts';

type Op =
  | { kind: 'fund'; amount: number }
  | { kind: 'charge'; amount: number; ok: boolean }
  | { kind: 'collection'; amount: number; channel: 'momo' | 'card'; ok: boolean }
  | { kind: 'transfer'; amount: number; ok: boolean }
  | { kind: 'payout'; amount: number; ok: boolean }
  | { kind: 'bill'; amount: number }
  | { kind: 'buy'; amount: number }
  | { kind: 'advance'; seconds: number };

const amount = fc.integer({ min: 100, max: 50_000 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('fund' as const), amount: fc.integer({ min: 1, max: 200_000 }) }),
  fc.record({ kind: fc.constant('charge' as const), amount, ok: fc.boolean() }),
  fc.record({ kind: fc.constant('collection' as const), amount, channel: fc.constantFrom('momo' as const, 'card' as const), ok: fc.boolean() }),
  fc.record({ kind: fc.constant('transfer' as const), amount, ok: fc.boolean() }),
  fc.record({ kind: fc.constant('payout' as const), amount, ok: fc.boolean() }),
  fc.record({ kind: fc.constant('bill' as const), amount: fc.integer({ min: 100, max: 50_000 }) }),
  fc.record({ kind: fc.constant('buy' as const), amount: fc.integer({ min: 10_000, max: 100_000 }) }),
  fc.record({ kind: fc.constant('advance' as const), seconds: fc.constantFrom(1, 5, 3_600, 43_200, 86_400) }),
);

interface Moved {
  path: string;
  id: string;
}

let counter = 0;
const idem = () => `ledger-property-${++counter}`;
const major = (minor: number) => toMajorString(minor, 'GHS');

/** Runs one operation; returns the object it created, if the service accepted it. */
async function run(sb: TestSandbox, op: Op): Promise<Moved | null> {
  const accepted = (res: { status: number; body: { data?: { id?: string; reference?: string } } }, path: string) =>
    res.status === 201 ? { path, id: (res.body.data!.id ?? res.body.data!.reference)! } : null;
  switch (op.kind) {
    case 'fund':
      await sb.fund(op.amount);
      return null;
    case 'charge':
      return accepted(await sb.charge({ amount: op.amount, currency: 'GHS', channel: 'momo', msisdn: op.ok ? '0551234987' : '0551234988' }), '/api/v1/charges');
    case 'collection': {
      const customer = op.channel === 'momo' ? (op.ok ? '0551234987' : '0551234988') : op.ok ? '4084 0840 8408 4081' : '4000 0000 0000 9953';
      return accepted(await sb.post('/v1/collections', { amount: major(op.amount), currency: 'GHS', channel: op.channel, customer }, { idempotencyKey: idem() }), '/v1/collections');
    }
    case 'transfer':
      return accepted(await sb.transfer({ amount: op.amount, currency: 'GHS', channel: 'momo', msisdn: op.ok ? '0551234987' : '0551234988' }), '/api/v1/transfers');
    case 'payout':
      return accepted(
        await sb.post('/v1/payouts', { amount: major(op.amount), currency: 'GHS', channel: 'momo', msisdn: op.ok ? '0551234987' : '0551234988' }, { sign: true, idempotencyKey: idem() }),
        '/v1/payouts',
      );
    case 'bill':
      return accepted(
        await sb.post('/v1/bills', { category: 'airtime', customer: '0241234567', amount: major(Math.min(op.amount, 50_000)), currency: 'GHS' }, { sign: true, idempotencyKey: idem() }),
        '/v1/bills',
      );
    case 'buy': {
      const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: op.amount });
      if (quote.status !== 201) return null;
      return accepted(await sb.execute({ quote_reference: quote.body.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' }), '/api/v1/trades');
    }
    case 'advance':
      await sb.advance(op.seconds);
      return null;
  }
}

interface Entry {
  object_id: string;
  journal_id: string;
  account: string;
  direction: 'credit' | 'debit';
  amount: number;
  currency: string;
}

async function pages<T>(sb: TestSandbox, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const res = await sb.get(`${path}${path.includes('?') ? '&' : '?'}page_size=100${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    items.push(...res.body.data);
    cursor = res.body.meta.next_cursor;
  } while (cursor);
  return items;
}

const signed = (e: Entry) => (e.direction === 'credit' ? e.amount : -e.amount);

/** What an object's wallet and fee entries must sum to, from its final state. */
function expectedSums(path: string, record: Record<string, any>): { wallet: number; fees: number } {
  const done = ['success', 'settled', 'completed'].includes(record.status);
  if (path === '/api/v1/trades') return { wallet: -record.net_fiat_amount, fees: 0 };
  if (!done) return { wallet: 0, fees: 0 };
  const incoming = path === '/api/v1/charges' || path === '/v1/collections';
  return incoming ? { wallet: record.amount - record.fees, fees: record.fees } : { wallet: -(record.amount + record.fees), fees: record.fees };
}

describe('the ledger entries and settlement reports, for any sequence of operations', () => {
  it("sum to each object's amounts and fees, net to zero per journal, and close at the wallet balance", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), async (ops) =>
        withSandbox(async (sb) => {
          const moved: Moved[] = [];
          for (const op of ops) {
            const object = await run(sb, op);
            if (object) moved.push(object);
          }
          await sb.advance(120); // every callback, poll and late success has happened

          const merchant = sb.ry.sandbox.merchantId;
          const walletAccount = (a: string) => a.startsWith(`merchant:${merchant}:wallet:`);
          for (const object of moved) {
            const record = (await sb.get(`${object.path}/${object.id}`)).body.data;
            const entries = await pages<Entry>(sb, `/v1/ledger/entries?object_id=${object.id}`);
            expect(entries.every((e) => e.object_id === object.id)).toBe(true);
            const wallet = entries.filter((e) => walletAccount(e.account)).reduce((t, e) => t + signed(e), 0);
            const fees = entries.filter((e) => e.account === 'revenue:fees').reduce((t, e) => t + signed(e), 0);
            expect({ id: object.id, status: record.status, wallet, fees }).toEqual({ id: object.id, status: record.status, ...expectedSums(object.path, record) });
          }

          const all = await pages<Entry>(sb, '/v1/ledger/entries');
          const journals = new Map<string, Map<string, number>>();
          for (const e of all) {
            const sums = journals.get(e.journal_id) ?? new Map<string, number>();
            journals.set(e.journal_id, sums);
            sums.set(e.currency, (sums.get(e.currency) ?? 0) + signed(e));
          }
          for (const [journal, sums] of journals) for (const [currency, total] of sums) expect({ journal, currency, total }).toEqual({ journal, currency, total: 0 });

          const reports = (await pages<Record<string, any>>(sb, '/v1/settlements')).reverse();
          const balance = await sb.wallet();
          if (reports.length === 0) {
            expect(balance).toEqual({ currency: 'GHS', available: 0, reserved: 0 });
            return;
          }
          let closing = 0;
          for (const report of reports) {
            expect(report.opening_balance).toBe(closing);
            expect(report.net).toBe(report.gross_in - report.gross_out - report.fees);
            expect(report.closing_balance).toBe(report.opening_balance + report.net);
            closing = report.closing_balance;
          }
          const latest = reports[reports.length - 1]!;
          expect(latest.closing_balance).toBe(balance.available + balance.reserved);
          expect({ available: latest.closing_available, reserved: latest.closing_reserved }).toEqual({ available: balance.available, reserved: balance.reserved });
        }),
      ),
      { numRuns: 25 },
    );
  }, 240_000);
});
