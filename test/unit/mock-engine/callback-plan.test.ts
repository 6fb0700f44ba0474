import { describe, expect, it } from 'vitest';
import { CallbackPlanner, duplicateOf, outcomeOf, type Outcome, type TransactionWire } from '../../../src/mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../../src/mocks/engine/callback-sender.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';
import type { CallbackPlan } from '../../../src/scenarios/scenario-types.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';
import { engineWorld, fakeSender } from './engine-fixture.ts';

interface Payment {
  reference: string;
  state: 'pending' | 'paid' | 'failed';
  code?: string;
  settledAt?: number;
  callbackUrl?: string;
}

/** A made-up upstream: its own words for the outcome, a callback only when given a URL. */
const PAYMENTS: TransactionWire<Payment> = {
  pending: (p) => p.state === 'pending',
  settle: (p: Payment, outcome: Outcome, now: number): Payment =>
    outcome.status === 'success' ? { ...p, state: 'paid', code: undefined, settledAt: now } : { ...p, state: 'failed', code: outcome.reason ?? 'E_UNKNOWN', settledAt: now },
  callback: (p) => (p.callbackUrl ? jsonCallback(p.callbackUrl, 'POST', { ref: p.reference, state: p.state, code: p.code }) : undefined),
};

const PAYMENT: Payment = { reference: 'r1', state: 'pending', callbackUrl: 'http://receiver.test/cb' };

async function planner(options: { store?: SqliteStore; boot?: number } = {}) {
  const world = await engineWorld(options);
  const sender = fakeSender(world.clock);
  const plan = new CallbackPlanner({ provider: 'acme', clock: world.clock, scheduler: world.scheduler, store: world.store, logger: world.logger, sender });
  const book = world.ctx.books.open<Payment>('acme', 'payments');
  plan.addBook('payments', book, PAYMENTS);
  /** Keeps a payment with its plan, as the engine does at acceptance. */
  const accept = (payment: Payment, settle: CallbackPlan | null, extras: CallbackPlan[] = []) =>
    book.keep(payment.reference, payment, (db) => plan.schedule(db, { book: 'payments', reference: payment.reference, transaction: payment, acceptedAt: world.clock.now() }, settle, extras));
  const bodies = () => sender.sent.map((s) => ({ at: s.at, body: JSON.parse(s.message.body) }));
  return { ...world, sender, plan, book, accept, bodies };
}

describe('a plan from a scenario', () => {
  it('reports failures with their reason and successes without one', () => {
    expect(outcomeOf({ after_seconds: 1, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' })).toEqual({ status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
    expect(outcomeOf({ after_seconds: 1, status: 'failed' })).toEqual({ status: 'failed' });
    expect(outcomeOf({ after_seconds: 1, status: 'success', reason: 'ignored' })).toEqual({ status: 'success' });
  });

  it('sends a duplicate one second later unless it says when', () => {
    expect(duplicateOf({ after_seconds: 1, status: 'success', duplicate: true })).toEqual({ duplicateAfterSeconds: 1 });
    expect(duplicateOf({ after_seconds: 1, status: 'success', duplicate: true, duplicate_after_seconds: 7 })).toEqual({ duplicateAfterSeconds: 7 });
    expect(duplicateOf({ after_seconds: 1, status: 'success' })).toEqual({});
  });
});

describe('the callback planner', () => {
  it('names its jobs after the provider', async () => {
    const { plan } = await planner();
    expect([plan.settleJob, plan.callbackJob]).toEqual(['mock.acme.settle', 'mock.acme.callback']);
  });

  it('settles the transaction at its time, keeps the final state and calls back once', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 5, status: 'failed', reason: 'E_FUNDS' });
    await p.scheduler.advanceBy(4_000);
    expect(p.sender.sent).toHaveLength(0);
    await p.scheduler.advanceBy(1_000);
    expect(await p.book.get('r1')).toMatchObject({ state: 'failed', code: 'E_FUNDS' });
    expect(p.bodies()).toEqual([{ at: 5_000, body: { ref: 'r1', state: 'failed', code: 'E_FUNDS' } }]);
  });

  it('settles once however often the settlement job runs (jobs run at least once)', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 1, status: 'success' });
    await p.scheduler.advanceBy(1_000);
    // The same job again, as after a crash between running it and marking it done.
    await p.scheduler.schedule(p.store, {
      kind: 'mock.acme.settle',
      runAt: p.clock.now(),
      payload: { book: 'payments', reference: 'r1', transaction: PAYMENT, outcome: { status: 'failed', reason: 'E_LATE' } },
    });
    await p.scheduler.runDue();
    expect(await p.book.get('r1')).toMatchObject({ state: 'paid' });
    expect(p.sender.sent).toHaveLength(1);
  });

  it('settles a dropped callback without sending it: only a status poll finds out', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 2, status: 'success', drop: true });
    await p.scheduler.advanceBy(2_000);
    expect(await p.book.get('r1')).toMatchObject({ state: 'paid' });
    expect(p.sender.sent).toHaveLength(0);
  });

  it('sends a duplicated callback again, the same bytes, after its delay', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 2, status: 'success', duplicate: true, duplicate_after_seconds: 4 });
    await p.scheduler.advanceBy(10_000);
    expect(p.sender.sent.map((s) => s.at)).toEqual([2_000, 6_000]);
    expect(p.sender.sent[1]!.message).toEqual(p.sender.sent[0]!.message);
  });

  it('sends extra callbacks that report their own outcome without changing the settled state, and skips dropped extras', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 3, status: 'success' }, [
      { after_seconds: 1, status: 'failed', reason: 'E_EARLY' },
      { after_seconds: 2, status: 'failed', drop: true },
      { after_seconds: 5, status: 'failed', reason: 'E_CONTRADICTS', duplicate: true },
    ]);
    expect(await p.scheduler.pending()).toMatchObject({ count: 3 }); // settle, and the two extras that are sent
    await p.scheduler.advanceBy(10_000);
    expect(p.bodies()).toEqual([
      { at: 1_000, body: { ref: 'r1', state: 'failed', code: 'E_EARLY' } },
      { at: 3_000, body: { ref: 'r1', state: 'paid' } },
      { at: 5_000, body: { ref: 'r1', state: 'failed', code: 'E_CONTRADICTS' } },
      { at: 6_000, body: { ref: 'r1', state: 'failed', code: 'E_CONTRADICTS' } },
    ]);
    expect(await p.book.get('r1')).toMatchObject({ state: 'paid' });
  });

  it('plans no settlement for a transaction that stays pending for good', async () => {
    const p = await planner();
    await p.accept(PAYMENT, null);
    expect(await p.scheduler.pending()).toMatchObject({ count: 0 });
    expect(await p.book.get('r1')).toMatchObject({ state: 'pending' });
  });

  it('settles but sends nothing for a transaction without a callback URL', async () => {
    const p = await planner();
    await p.accept({ reference: 'r2', state: 'pending' }, { after_seconds: 1, status: 'success', duplicate: true });
    await p.scheduler.advanceBy(5_000);
    expect(await p.book.get('r2')).toMatchObject({ state: 'paid' });
    expect(p.sender.sent).toHaveLength(0);
    expect(await p.scheduler.pending()).toMatchObject({ count: 0 });
  });

  it('finishes after a restart: the next process settles from the store, and from the job alone when the book lost it', async () => {
    const store = new SqliteStore(':memory:');
    const first = await planner({ store });
    await first.accept(PAYMENT, { after_seconds: 5, status: 'success' });
    await first.accept({ ...PAYMENT, reference: 'r3' }, { after_seconds: 5, status: 'failed', reason: 'E_X' });
    await store.run("DELETE FROM mock_transactions WHERE reference = 'r3'");
    await first.scheduler.stop();

    const second = await planner({ store, boot: 2 });
    second.clock.set(first.clock.now());
    await second.scheduler.advanceBy(5_000);
    expect(second.bodies().map((b) => b.body)).toEqual([
      { ref: 'r1', state: 'paid' },
      { ref: 'r3', state: 'failed', code: 'E_X' },
    ]);
    const reloaded = new MockTransactionBooks(store, second.clock).open<Payment>('acme', 'payments');
    expect(await reloaded.get('r3')).toMatchObject({ state: 'failed' });
    await store.close();
  });

  it('logs and skips a job that names a book it does not have', async () => {
    const p = await planner();
    await p.scheduler.schedule(p.store, {
      kind: 'mock.acme.settle',
      runAt: p.clock.now(),
      payload: { book: 'refunds', reference: 'x', transaction: PAYMENT, outcome: { status: 'success' } },
    });
    await p.scheduler.runDue();
    expect(p.sender.sent).toHaveLength(0);
    expect(p.logger.lines).toContainEqual({ level: 'warn', message: 'acme mock: job for an unknown book', fields: { book: 'refunds' } });
  });

  it('refuses a book registered twice', async () => {
    const p = await planner();
    expect(() => p.plan.addBook('payments', p.book, PAYMENTS)).toThrow(/already registered/);
  });
});

describe("the callback planner settling an upstream's answer now (a card's OTP, a debit's mandate)", () => {
  it('settles it as its job would: the final state, then one callback; the planned job then finds it settled', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 30, status: 'failed', reason: 'E_LATE' });
    await p.scheduler.advanceBy(2_000);
    expect(await p.plan.settleNow<Payment>('payments', 'r1', { status: 'success' })).toMatchObject({ state: 'paid' });
    expect(p.bodies()).toEqual([{ at: 2_000, body: { ref: 'r1', state: 'paid' } }]);
    await p.scheduler.advanceBy(60_000);
    expect(await p.book.get('r1')).toMatchObject({ state: 'paid' });
    expect(p.sender.sent).toHaveLength(1);
  });

  it('leaves a settled transaction as it is and sends nothing; answers undefined for one it does not have', async () => {
    const p = await planner();
    await p.accept(PAYMENT, { after_seconds: 1, status: 'failed', reason: 'E_FUNDS' });
    await p.scheduler.advanceBy(1_000);
    expect(await p.plan.settleNow<Payment>('payments', 'r1', { status: 'success' })).toMatchObject({ state: 'failed', code: 'E_FUNDS' });
    expect(p.sender.sent).toHaveLength(1);
    expect(await p.plan.settleNow('payments', 'no-such-reference', { status: 'success' })).toBeUndefined();
  });
});
