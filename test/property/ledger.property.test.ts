// Ledger invariants under random traffic, and the pure rules of journals and money.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_AMOUNT, bpsOf, fromMajor, toMajorString, type Currency } from '../../src/kernel/money.ts';
import { assertBalanced, reversePostings, type Posting } from '../../src/ledger/journal.ts';
import { expectBalanced, withSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const MERCHANT = 'mch_sandbox';
const SUCCESS_MSISDN = '0551234987';
const INSUFFICIENT_MSISDN = '0551234988';

// ---------------------------------------------------------------------------------------------
// Random traffic against a sandbox
// ---------------------------------------------------------------------------------------------

type Op =
  | { kind: 'fund'; amount: number }
  | { kind: 'charge'; amount: number; msisdn: string }
  | { kind: 'transfer-momo'; amount: number; msisdn: string }
  | { kind: 'transfer-bank'; amount: number; account: string }
  | { kind: 'advance'; seconds: number }
  | { kind: 'duplicate' }
  | { kind: 'reuse-key' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('fund' as const), amount: fc.integer({ min: 1, max: 2_000_000 }) }),
  fc.record({
    kind: fc.constant('charge' as const),
    amount: fc.integer({ min: 200, max: 1_000_000 }),
    msisdn: fc.constantFrom(SUCCESS_MSISDN, INSUFFICIENT_MSISDN),
  }),
  fc.record({
    kind: fc.constant('transfer-momo' as const),
    amount: fc.integer({ min: 1, max: 600_000 }),
    msisdn: fc.constantFrom(SUCCESS_MSISDN, INSUFFICIENT_MSISDN),
  }),
  fc.record({
    kind: fc.constant('transfer-bank' as const),
    amount: fc.integer({ min: 1, max: 600_000 }),
    // 1000000001 succeeds; 1000000002 and 1000000003 fail at the rail (scenarios/sandbox.yaml).
    account: fc.constantFrom('1000000001', '1000000002', '1000000003'),
  }),
  fc.record({ kind: fc.constant('advance' as const), seconds: fc.integer({ min: 0, max: 120 }) }),
  fc.constant({ kind: 'duplicate' as const }),
  fc.constant({ kind: 'reuse-key' as const }),
);

interface SentRequest {
  path: '/api/v1/charges' | '/api/v1/transfers';
  body: Record<string, unknown>;
  idempotencyKey: string;
  status: number;
  response: unknown;
}

const num = (v: unknown) => Number(v ?? 0);

async function transactionRows(sb: TestSandbox): Promise<number> {
  return num((await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM transactions'))!.n);
}

/** Every invariant the ledger promises, checked against the raw tables and the API. */
async function expectLedgerInvariants(sb: TestSandbox, funded: number): Promise<void> {
  const db = sb.ry.store;

  // 1. Every journal nets to zero per currency, and has at least two postings.
  const unbalanced = await db.all('SELECT journal_id, currency, SUM(amount) AS total FROM ledger_postings GROUP BY journal_id, currency HAVING SUM(amount) <> 0');
  expect(unbalanced, 'journals that do not net to zero').toEqual([]);
  const thin = await db.all(
    `SELECT j.id, COUNT(p.seq) AS n FROM ledger_journals j LEFT JOIN ledger_postings p ON p.journal_id = j.id
      GROUP BY j.id HAVING COUNT(p.seq) < 2`,
  );
  expect(thin, 'journals with fewer than two postings').toEqual([]);
  const strayEnvironment = await db.all('SELECT p.seq FROM ledger_postings p JOIN ledger_journals j ON j.id = p.journal_id WHERE p.environment <> j.environment');
  expect(strayEnvironment, 'postings in another environment than their journal').toEqual([]);

  // 2. No merchant account is ever negative: not now, and not at any posting in its history.
  const merchantPostings = await db.all<{ environment: string; account: string; currency: string; amount: number; seq: number }>(
    "SELECT seq, environment, account, currency, amount FROM ledger_postings WHERE account LIKE 'merchant:%' ORDER BY seq",
  );
  const running = new Map<string, number>();
  for (const p of merchantPostings) {
    const k = `${p.environment}|${p.account}|${p.currency}`;
    const balance = (running.get(k) ?? 0) + num(p.amount);
    running.set(k, balance);
    expect(balance, `${k} after posting ${p.seq}`).toBeGreaterThanOrEqual(0);
  }

  // 3. The wallet the API shows is exactly the merchant's postings.
  const wallet = await sb.wallet();
  const sums = await db.all<{ account: string; total: number }>(
    "SELECT account, SUM(amount) AS total FROM ledger_postings WHERE environment = 'test' AND account LIKE ? AND currency = 'GHS' GROUP BY account",
    [`merchant:${MERCHANT}:%`],
  );
  const byAccount = Object.fromEntries(sums.map((s) => [s.account, num(s.total)]));
  const merchantTotal = sums.reduce((t, s) => t + num(s.total), 0);
  expect(wallet.available + wallet.reserved).toBe(merchantTotal);
  expect(wallet.available).toBe(byAccount[`merchant:${MERCHANT}:wallet:available`] ?? 0);
  expect(wallet.reserved).toBe(byAccount[`merchant:${MERCHANT}:wallet:reserved`] ?? 0);

  // 3b. Every account's kept balance is the sum of its postings, for every account there is.
  const kept = await db.all<{ environment: string; account: string; currency: string; balance: number }>(
    'SELECT environment, account, currency, balance FROM ledger_balances ORDER BY environment, account, currency',
  );
  const summed = await db.all<{ environment: string; account: string; currency: string; balance: number }>(
    'SELECT environment, account, currency, SUM(amount) AS balance FROM ledger_postings GROUP BY environment, account, currency ORDER BY environment, account, currency',
  );
  expect(kept.map((b) => ({ ...b, balance: num(b.balance) }))).toEqual(summed.map((b) => ({ ...b, balance: num(b.balance) })));

  // 4. The trial balance is zero in every currency.
  expectBalanced(await sb.trialBalance());
  for (const total of Object.values(await sb.trialBalance())) expect(total).toBe(0);

  // 5. The ledger agrees with the resources. The merchant holds its funding plus settled charges
  // net of fees, minus settled transfers (amount + fees); pending transfers sit in reserved.
  const sumOf = async (sql: string) => num((await db.get<{ t: number }>(sql))?.t);
  const settledCharges = await sumOf("SELECT SUM(amount - fees) AS t FROM charges WHERE environment = 'test' AND status = 'success'");
  const settledTransfers = await sumOf("SELECT SUM(amount + fees) AS t FROM transfers WHERE environment = 'test' AND status = 'success'");
  const pendingTransfers = await sumOf("SELECT SUM(amount + fees) AS t FROM transfers WHERE environment = 'test' AND status = 'pending'");
  expect(wallet.available + wallet.reserved).toBe(funded + settledCharges - settledTransfers);
  expect(wallet.reserved).toBe(pendingTransfers);
}

describe('ledger invariants under random sequences of operations', () => {
  it('after every step: journals net to zero, merchant accounts never go negative, the wallet is its postings, the trial balance is zero', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 18 }), async (ops) => {
        await withSandbox(async (sb) => {
          let funded = 0;
          let last: SentRequest | undefined;
          let sends = 0;

          const send = (path: SentRequest['path'], body: Record<string, unknown>, idempotencyKey: string) => {
            // Each send differs in trailing whitespace only: the same parsed request (so the same
            // idempotency hash), but a fresh HMAC, so two identical requests in one virtual second
            // are not refused as a replayed signature.
            const rawBody = JSON.stringify(body) + ' '.repeat(++sends);
            return path === '/api/v1/transfers' ? sb.transfer(body, { idempotencyKey, rawBody }) : sb.charge(body, { idempotencyKey, rawBody });
          };
          let keyCounter = 0;
          const freshKey = () => `prop-${++keyCounter}`;

          for (const op of ops) {
            switch (op.kind) {
              case 'fund': {
                await sb.fund(op.amount);
                funded += op.amount;
                break;
              }
              case 'charge': {
                const body = { amount: op.amount, currency: 'GHS', channel: 'momo', msisdn: op.msisdn };
                const key = freshKey();
                const res = await send('/api/v1/charges', body, key);
                expect(res.status, JSON.stringify(res.body)).toBe(201);
                expect(res.body.data.status).toBe('pending_provider');
                last = { path: '/api/v1/charges', body, idempotencyKey: key, status: res.status, response: res.body };
                break;
              }
              case 'transfer-momo':
              case 'transfer-bank': {
                const body =
                  op.kind === 'transfer-momo'
                    ? { amount: op.amount, currency: 'GHS', channel: 'momo', msisdn: op.msisdn }
                    : { amount: op.amount, currency: 'GHS', channel: 'bank', account_number: op.account, bank_code: '040100', bank_account_name: 'Test Payee' };
                const key = freshKey();
                const rowsBefore = await transactionRows(sb);
                const res = await send('/api/v1/transfers', body, key);
                expect([201, 422], JSON.stringify(res.body)).toContain(res.status);
                if (res.status === 422) {
                  expect(res.body.error.code).toBe('insufficient_funds');
                  expect(await transactionRows(sb)).toBe(rowsBefore);
                } else {
                  expect(res.body.data.status).toBe('pending');
                }
                last = { path: '/api/v1/transfers', body, idempotencyKey: key, status: res.status, response: res.body };
                break;
              }
              case 'advance': {
                await sb.advance(op.seconds);
                break;
              }
              case 'duplicate': {
                // Only completed requests are stored; a 422 rolled back and may be retried for real.
                if (!last || last.status === 422) break;
                const rowsBefore = await transactionRows(sb);
                const again = await send(last.path, last.body, last.idempotencyKey);
                expect(again.status).toBe(last.status);
                expect(again.body).toEqual(last.response);
                expect(again.headers['idempotent-replayed']).toBe('true');
                expect(await transactionRows(sb)).toBe(rowsBefore);
                break;
              }
              case 'reuse-key': {
                if (!last || last.status === 422) break;
                const rowsBefore = await transactionRows(sb);
                const other = await send(last.path, { ...last.body, amount: (last.body.amount as number) + 1 }, last.idempotencyKey);
                expect(other.status).toBe(422);
                expect(other.body.error.code).toBe('idempotency_key_reused');
                expect(await transactionRows(sb)).toBe(rowsBefore);
                break;
              }
            }
            await expectLedgerInvariants(sb, funded);
          }

          // Let every callback and status poll run: everything ends final and nothing stays reserved.
          await sb.advance(3600);
          await expectLedgerInvariants(sb, funded);
          const unsettled = await sb.ry.store.all("SELECT id, status FROM charges WHERE status = 'pending_provider' UNION ALL SELECT id, status FROM transfers WHERE status = 'pending'");
          expect(unsettled).toEqual([]);
          expect((await sb.wallet()).reserved).toBe(0);
        });
      }),
      { numRuns: 25 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Pure journal rules (src/ledger/journal.ts)
// ---------------------------------------------------------------------------------------------

const ACCOUNTS = ['merchant:m1:wallet:available', 'merchant:m1:wallet:reserved', 'external:provider:p', 'revenue:fees'];
const CURRENCIES = ['GHS', 'USDT'];

/** The oracle, in exact bigint arithmetic: two or more non-zero safe-integer postings, zero per currency. */
function isZeroSum(postings: readonly Posting[]): boolean {
  if (postings.length < 2) return false;
  if (postings.some((p) => !Number.isSafeInteger(p.amount) || p.amount === 0)) return false;
  const totals = new Map<string, bigint>();
  for (const p of postings) totals.set(p.currency, (totals.get(p.currency) ?? 0n) + BigInt(p.amount));
  return [...totals.values()].every((t) => t === 0n);
}

function accepts(postings: readonly Posting[]): boolean {
  try {
    assertBalanced(postings);
    return true;
  } catch {
    return false;
  }
}

const nonZero = (max: number) => fc.integer({ min: -max, max }).filter((n) => n !== 0);
const postingArb = (max: number): fc.Arbitrary<Posting> => fc.record({ account: fc.constantFrom(...ACCOUNTS), currency: fc.constantFrom(...CURRENCIES), amount: nonZero(max) });

/** A journal that nets to zero by construction: random postings plus one balancing posting per currency. */
const balancedJournalArb = (max: number): fc.Arbitrary<Posting[]> =>
  fc.array(postingArb(max), { minLength: 1, maxLength: 6 }).map((postings) => {
    const totals = new Map<string, number>();
    for (const p of postings) totals.set(p.currency, (totals.get(p.currency) ?? 0) + p.amount);
    const balancing = [...totals].filter(([, t]) => t !== 0).map(([currency, t]) => ({ account: 'external:sandbox:funding', currency, amount: -t }));
    const journal = [...postings, ...balancing];
    // A journal of one posting cannot balance unless zero, which is never generated; pad with a pair.
    return journal.length >= 2 ? journal : [...journal, { account: 'a', currency: 'GHS', amount: 1 }, { account: 'b', currency: 'GHS', amount: -1 }];
  });

/** A balanced journal, then one posting nudged by a non-zero delta: it no longer nets to zero. */
const nudgedJournalArb = (max: number) =>
  fc.tuple(balancedJournalArb(max), fc.nat(), nonZero(1000)).map(([journal, at, delta]) => {
    const i = at % journal.length;
    const nudged = journal.map((p, j) => (j === i ? { ...p, amount: p.amount + delta } : p));
    return nudged;
  });

describe('journal rules (pure)', () => {
  // Amounts at the edge are at most MAX_AMOUNT; a journal of a few of them stays far inside the safe range.
  const EDGE = MAX_AMOUNT * 10;

  it('assertBalanced accepts every journal whose postings net to zero per currency', () => {
    fc.assert(
      fc.property(balancedJournalArb(EDGE), (journal) => {
        expect(isZeroSum(journal)).toBe(true);
        expect(() => assertBalanced(journal)).not.toThrow();
      }),
    );
  });

  it('assertBalanced rejects a balanced journal once any one posting is nudged', () => {
    fc.assert(
      fc.property(nudgedJournalArb(EDGE), (journal) => {
        expect(accepts(journal)).toBe(isZeroSum(journal));
      }),
    );
  });

  it('assertBalanced accepts exactly the zero-sum journals (random journals, zero and fractional amounts included)', () => {
    const anyAmount = fc.oneof(nonZero(EDGE), fc.constant(0), fc.double({ min: -1000, max: 1000, noNaN: true }), fc.constantFrom(Number.NaN, Infinity));
    const anyJournal = fc.oneof(
      fc.array(fc.record({ account: fc.constantFrom(...ACCOUNTS), currency: fc.constantFrom(...CURRENCIES), amount: anyAmount }), { maxLength: 6 }),
      balancedJournalArb(EDGE),
      nudgedJournalArb(EDGE),
    );
    fc.assert(
      fc.property(anyJournal, (journal) => {
        expect(accepts(journal)).toBe(isZeroSum(journal));
      }),
      { numRuns: 300 },
    );
  });

  it('assertBalanced accepts exactly the zero-sum journals across the whole safe-integer range (its sum must not lose precision)', () => {
    const M = Number.MAX_SAFE_INTEGER;
    // Near 2^53 a float running sum rounds: pairs of huge opposite postings plus a small, maybe
    // unbalanced, remainder, in any order.
    const nearLimitArb = fc
      .tuple(fc.integer({ min: M - 4096, max: M }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: -3, max: 3 }), fc.constantFrom(...CURRENCIES))
      .chain(([big, small, skew, currency]) => {
        const postings = [big, small, -big, -(small + skew)].filter((amount) => amount !== 0).map((amount, i) => ({ account: ACCOUNTS[i % ACCOUNTS.length]!, currency, amount }));
        return fc.shuffledSubarray(postings, { minLength: postings.length, maxLength: postings.length });
      });
    fc.assert(
      fc.property(fc.oneof(balancedJournalArb(M), nudgedJournalArb(M), nearLimitArb), (journal) => {
        expect(accepts(journal), JSON.stringify(journal)).toBe(isZeroSum(journal));
      }),
      {
        numRuns: 300,
        // Nets to +1, yet a float running sum rounds 2^53 + 1 down to 2^53 and reaches exactly 0.
        examples: [
          [
            [
              { account: 'a', currency: 'GHS', amount: M },
              { account: 'b', currency: 'GHS', amount: 2 },
              { account: 'c', currency: 'GHS', amount: -M },
              { account: 'd', currency: 'GHS', amount: -1 },
            ],
          ],
        ],
      },
    );
  });

  it('reversePostings applied twice gives back the original postings', () => {
    fc.assert(
      fc.property(fc.array(postingArb(Number.MAX_SAFE_INTEGER), { maxLength: 8 }), (postings) => {
        expect(reversePostings(reversePostings(postings))).toEqual(postings);
      }),
    );
  });

  it('reversePostings does not modify the journal it reverses', () => {
    fc.assert(
      fc.property(balancedJournalArb(EDGE), (journal) => {
        const copy = structuredClone(journal);
        reversePostings(journal);
        expect(journal).toEqual(copy);
      }),
    );
  });

  it('a balanced journal plus its reversal nets every account to zero, and the reversal is itself balanced', () => {
    fc.assert(
      fc.property(balancedJournalArb(EDGE), (journal) => {
        const reversal = reversePostings(journal);
        expect(() => assertBalanced(reversal)).not.toThrow();
        const net = new Map<string, number>();
        for (const p of [...journal, ...reversal]) net.set(`${p.account}|${p.currency}`, (net.get(`${p.account}|${p.currency}`) ?? 0) + p.amount);
        for (const [account, total] of net) expect(total, account).toBe(0);
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Money (src/kernel/money.ts)
// ---------------------------------------------------------------------------------------------

describe('money (pure)', () => {
  const currencies: Currency[] = ['GHS', 'USDT', 'USDC'];

  it.each(currencies)('fromMajor(toMajorString(x)) === x for every safe integer amount of %s', (currency) => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.integer({ min: -1_000_000, max: 1_000_000 })), (x) => {
        expect(fromMajor(toMajorString(x, currency), currency)).toBe(x);
      }),
      { numRuns: 500 },
    );
  });

  it('toMajorString always writes the currency’s exact number of decimals', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.constantFrom(...currencies), (x, currency) => {
        const decimals = currency === 'GHS' ? 2 : 6;
        expect(toMajorString(x, currency)).toMatch(new RegExp(`^-?\\d+\\.\\d{${decimals}}$`));
      }),
    );
  });

  it('bpsOf never rounds down: it is the exact ceiling of amount × bps / 10 000 for non-negative amounts', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: MAX_AMOUNT }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })), fc.integer({ min: 0, max: 10_000 }), (amount, bps) => {
        const fee = BigInt(bpsOf(amount, bps));
        const exact = BigInt(amount) * BigInt(bps); // fee × 10 000 must cover it, by less than one pesewa
        expect(fee * 10_000n >= exact).toBe(true);
        expect(fee * 10_000n - exact < 10_000n).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('bpsOf charges at least one minor unit on any positive amount with a positive rate', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_AMOUNT }), fc.integer({ min: 1, max: 10_000 }), (amount, bps) => {
        expect(bpsOf(amount, bps)).toBeGreaterThanOrEqual(1);
      }),
    );
  });
});
