import type { Clock } from '../../kernel/clock.ts';
import { finalWrites } from '../../kernel/job-scope.ts';
import type { Logger } from '../../kernel/logger.ts';
import type { CallbackPlan } from '../../scenarios/scenario-types.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { Db, Store } from '../../store/db.ts';
import type { CallbackMessage, CallbackSender } from './callback-sender.ts';
import type { MockTransactionBook } from './mock-transaction-book.ts';

// Stage 6 of the pipeline: the callbacks an accepted transaction will get, as durable jobs on
// the business clock. Each job carries everything it needs (the transaction as accepted, the
// outcome, the duplicate's delay), so a restart between acceptance and callback loses nothing.

/** What a callback reports: the wire turns it into its own codes (MTN reason, Hubtel 2001, GIP 51). */
export interface Outcome {
  status: 'success' | 'failed';
  /** The scenario's reason, as written; only on failure. */
  reason?: string;
}

/** What a wire module tells the engine about the transactions of one book. */
export interface TransactionWire<T> {
  /** Not settled yet? A transaction settles once, however often its job runs. */
  pending(tx: T): boolean;
  /** The transaction settled with this outcome, or as an extra callback reports it. Pure. */
  settle(tx: T, outcome: Outcome, now: number): T;
  /** The callback that reports the transaction; undefined when the caller gave no callback URL. */
  callback(tx: T): CallbackMessage | undefined;
}

interface Settlement {
  book: string;
  reference: string;
  /** The transaction as accepted, for a job that runs where the book has lost it. */
  transaction: unknown;
  outcome: Outcome;
  /** The upstream settles but never calls back. */
  drop?: true;
  /** callback.duplicate: the same bytes go out again this many seconds after the first. */
  duplicateAfterSeconds?: number;
}

type CallbackJob =
  /** An extra callback: the transaction as it stands, reporting this outcome; its state is not changed. */
  | Omit<Settlement, 'drop'>
  /** The second sending of a duplicated callback: exactly the bytes sent the first time. */
  | { reference: string; message: CallbackMessage };

interface RegisteredBook {
  book: MockTransactionBook<unknown>;
  wire: TransactionWire<unknown>;
}

/** A plan's outcome as the callback reports it. */
export function outcomeOf(plan: CallbackPlan): Outcome {
  return plan.status === 'failed' ? { status: 'failed', ...(plan.reason !== undefined ? { reason: plan.reason } : {}) } : { status: 'success' };
}

/** The delay of a plan's second sending, when it has one. */
export function duplicateOf(plan: CallbackPlan): { duplicateAfterSeconds?: number } {
  return plan.duplicate ? { duplicateAfterSeconds: plan.duplicate_after_seconds ?? 1 } : {};
}

/**
 * Schedules and runs a provider's callbacks: the settlement (final state, then its callback,
 * unless dropped), extra callbacks that report without changing state, and the second sending
 * of a duplicated one. Job kinds: `mock.<provider>.settle` and `mock.<provider>.callback`.
 */
export class CallbackPlanner {
  private readonly books = new Map<string, RegisteredBook>();
  readonly settleJob: string;
  readonly callbackJob: string;

  constructor(private readonly deps: { provider: string; clock: Clock; scheduler: Scheduler; store: Store; logger: Logger; sender: Pick<CallbackSender, 'send'> }) {
    this.settleJob = `mock.${deps.provider}.settle`;
    this.callbackJob = `mock.${deps.provider}.callback`;
    deps.scheduler.register(this.settleJob, (payload: Settlement) => this.settle(payload));
    deps.scheduler.register(this.callbackJob, (payload: CallbackJob) => this.callback(payload));
  }

  /** Makes a book's transactions known to the jobs; its name is part of every job payload. */
  addBook<T>(name: string, book: MockTransactionBook<T>, wire: TransactionWire<T>): void {
    if (this.books.has(name)) throw new Error(`${this.deps.provider} mock: book ${name} is already registered`);
    this.books.set(name, { book, wire } as RegisteredBook);
  }

  /**
   * Writes a transaction's callback jobs in `db`, the transaction that keeps it: the settlement
   * (none when `settle` is null: it stays pending for good) and each extra that is not dropped.
   */
  async schedule(db: Db, at: { book: string; reference: string; transaction: unknown; acceptedAt: number }, settle: CallbackPlan | null, extras: readonly CallbackPlan[]): Promise<void> {
    const { book, reference, transaction, acceptedAt } = at;
    if (settle) {
      const payload: Settlement = {
        book,
        reference,
        transaction,
        outcome: outcomeOf(settle),
        ...(settle.drop ? { drop: true as const } : {}),
        ...duplicateOf(settle),
      };
      await this.deps.scheduler.schedule(db, { kind: this.settleJob, runAt: acceptedAt + settle.after_seconds * 1000, payload, partition: this.partition(reference) });
    }
    for (const extra of extras) {
      if (extra.drop) continue;
      const payload: CallbackJob = { book, reference, transaction, outcome: outcomeOf(extra), ...duplicateOf(extra) };
      await this.deps.scheduler.schedule(db, { kind: this.callbackJob, runAt: acceptedAt + extra.after_seconds * 1000, payload, partition: this.partition(reference) });
    }
  }

  /**
   * Settles a transaction now, as its settlement job would: once (a settled one is left as it
   * is), then its callback. For a step the upstream waited for, answered on a wire route (a card's
   * OTP, a debit's mandate). The transaction as it stands afterwards; undefined when the book does
   * not have it.
   */
  async settleNow<T>(bookName: string, reference: string, outcome: Outcome): Promise<T | undefined> {
    const registered = this.registered(bookName);
    if (!registered) return undefined;
    const current = await registered.book.get(reference);
    if (current === undefined) return undefined;
    return (await this.apply(registered, reference, current, { outcome })) as T;
  }

  private async settle(payload: Settlement): Promise<void> {
    const registered = this.registered(payload.book);
    if (!registered) return;
    const current = (await registered.book.get(payload.reference)) ?? payload.transaction;
    await this.apply(registered, payload.reference, current, payload);
  }

  /** The one settlement: final state (once: jobs run at least once, the upstream settles once), then its callback unless dropped. */
  private async apply({ book, wire }: RegisteredBook, reference: string, current: unknown, plan: Pick<Settlement, 'outcome' | 'drop' | 'duplicateAfterSeconds'>): Promise<unknown> {
    if (!wire.pending(current)) return current;
    const settled = wire.settle(current, plan.outcome, this.deps.clock.now());
    await book.set(reference, settled);
    if (!plan.drop) await this.send(reference, wire.callback(settled), plan.duplicateAfterSeconds);
    return settled;
  }

  private async callback(payload: CallbackJob): Promise<void> {
    if ('message' in payload) return this.send(payload.reference, payload.message);
    const registered = this.registered(payload.book);
    if (!registered) return;
    const { book, wire } = registered;
    const current = (await book.get(payload.reference)) ?? payload.transaction;
    const reported = wire.settle(current, payload.outcome, this.deps.clock.now());
    await this.send(payload.reference, wire.callback(reported), payload.duplicateAfterSeconds);
  }

  /** Schedules the second sending first (when duplicated), then sends. No URL: nothing at all. */
  private async send(reference: string, message: CallbackMessage | undefined, duplicateAfterSeconds?: number): Promise<void> {
    if (!message) return;
    if (duplicateAfterSeconds !== undefined) {
      await this.deps.scheduler.schedule(this.deps.store, {
        kind: this.callbackJob,
        runAt: this.deps.clock.now() + duplicateAfterSeconds * 1000,
        payload: { reference, message } satisfies CallbackJob,
        partition: this.partition(reference),
      });
    }
    // The job's last writes are the receiver's: an in-process receiver settles the callback in
    // one transaction, inside this job (JobScope), and the jobs after it need not wait for the answer.
    await finalWrites(() => this.deps.sender.send(message, reference));
  }

  /** The upstream transaction the job acts on: its settlement and callbacks go out in order. */
  private partition(reference: string): string {
    return `${this.deps.provider}:${reference}`;
  }

  private registered(name: string): RegisteredBook | undefined {
    const registered = this.books.get(name);
    // Only a hand-made job names a book the mock does not have.
    if (!registered) this.deps.logger.warn(`${this.deps.provider} mock: job for an unknown book`, { book: name });
    return registered;
  }
}
