// A bulk payout against a model: for any wallet balance and any list of valid, invalid and
// overdrawing items, the answer lists every index in order, refuses exactly the invalid items
// and those the wallet could no longer cover (in order), and once the rails have settled the
// wallet has paid exactly the settled payouts' amounts and fees, nothing stays reserved, each
// payout's journals net as its outcome says, and the ledger balances. A replay moves nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toMajorString } from '../../src/kernel/money.ts';
import { expectBalanced, withSandbox } from '../support/test-sandbox.ts';

const MERCHANT_ACCOUNTS = "account LIKE 'merchant:%'";

type Item =
  | { kind: 'momo'; amount: number; msisdn: '0551234987' | '0551234988' }
  | { kind: 'bank'; amount: number; account: '1000000001' | '1000000002' }
  | { kind: 'invalid'; body: Record<string, unknown> };

const itemArb: fc.Arbitrary<Item> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('momo' as const), amount: fc.integer({ min: 1, max: 40_000 }), msisdn: fc.constantFrom('0551234987' as const, '0551234988' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bank' as const), amount: fc.integer({ min: 1, max: 40_000 }), account: fc.constantFrom('1000000001' as const, '1000000002' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('invalid' as const),
      body: fc.constantFrom<Record<string, unknown>>(
        { amount: '1e3', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
        { amount: '0', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
        { amount: '5.00', currency: 'USD', channel: 'momo', msisdn: '0551234987' },
        { amount: '5.00', currency: 'GHS', channel: 'cheque' },
        { amount: '5.00', currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100' },
      ),
    }),
  },
);

function bodyOf(item: Item): Record<string, unknown> {
  const amount = item.kind === 'invalid' ? undefined : toMajorString(item.amount, 'GHS');
  if (item.kind === 'momo') return { amount, currency: 'GHS', channel: 'momo', msisdn: item.msisdn };
  if (item.kind === 'bank') return { amount, currency: 'GHS', channel: 'bank', account_number: item.account, bank_code: '040100', account_name: 'Ama Owusu' };
  return item.body;
}

/** What the model expects of each index, given the balance before the batch. */
function model(items: Item[], funded: number) {
  let available = funded;
  let paid = 0;
  const expected = items.map((item) => {
    if (item.kind === 'invalid') return { status: 'rejected', code: 'validation_error' } as const;
    const total = item.amount + (item.kind === 'momo' ? 100 : 200);
    if (available < total) return { status: 'rejected', code: 'insufficient_funds' } as const;
    available -= total;
    const settles = item.kind === 'momo' ? item.msisdn === '0551234987' : item.account === '1000000001';
    if (settles) paid += total;
    return { status: 'accepted', settles, total } as const;
  });
  return { expected, paid };
}

describe('a bulk payout, for any items', () => {
  it('matches the model: refusals by index, reservations in order, settlement, and a balanced ledger', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 150_000 }), fc.array(itemArb, { minLength: 1, maxLength: 25 }), async (funded, items) =>
        withSandbox(async (sb) => {
          if (funded > 0) await sb.fund(funded);
          const send = () => sb.post('/v1/payouts/bulk', { items: items.map(bodyOf) }, { sign: true, idempotencyKey: 'property-bulk' });
          const res = await send();
          expect(res.status).toBe(201);
          const { expected, paid } = model(items, funded);
          const answered = res.body.data.items as { index: number; status: string; error?: { code: string }; payout?: { id: string } }[];
          expect(answered.map((i) => i.index)).toEqual(items.map((_, i) => i));
          expect(answered.map((i) => i.status)).toEqual(expected.map((e) => e.status));
          expect(answered.map((i) => i.error?.code)).toEqual(expected.map((e) => (e.status === 'rejected' ? e.code : undefined)));

          await sb.advance(10);
          expect(await sb.wallet()).toMatchObject({ available: funded - paid, reserved: 0 });
          for (const [index, item] of answered.entries()) {
            const e = expected[index]!;
            if (e.status !== 'accepted') continue;
            const payout = (await sb.get(`/v1/payouts/${item.payout!.id}`)).body.data;
            expect(payout.status).toBe(e.settles ? 'settled' : 'failed');
            // What the payout took from the merchant's wallet, over all its journals.
            const net = await sb.ry.store.get<{ n: number }>(
              `SELECT COALESCE(SUM(p.amount), 0) AS n FROM ledger_postings p JOIN ledger_journals j ON j.id = p.journal_id WHERE j.ref_id = ? AND p.${MERCHANT_ACCOUNTS}`,
              [payout.id],
            );
            expect(Number(net!.n)).toBe(e.settles ? -e.total : 0);
          }
          expectBalanced(await sb.trialBalance());

          const again = await send();
          expect(again.headers['idempotent-replayed']).toBe('true');
          expect(again.body).toEqual(res.body);
          expect(await sb.wallet()).toMatchObject({ available: funded - paid, reserved: 0 });
        }),
      ),
      { numRuns: 12 },
    );
  }, 120_000);
});
