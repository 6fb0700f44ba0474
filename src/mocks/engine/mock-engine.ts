import { MOCK_MATCH_LOCAL } from '../../scenarios/rule-explanation.ts';
import type { CallbackPlan, ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import { BehaviourStage, pause, takesRequest, type Exchange, type MockQuery, type WireRefusals } from './behaviour.ts';
import { CallbackPlanner, type Outcome, type TransactionWire } from './callback-plan.ts';
import { CallbackSender, type CallbackSigner } from './callback-sender.ts';
import type { MockContext } from './mock-context.ts';
import type { MockTransactionBook, MockTransactionBookOptions } from './mock-transaction-book.ts';

// The mock engine, after mountebank's pipeline:
//   1 request          express, in the wire module
//   2 wire parse       the wire module turns its body into a MockQuery (provider-neutral)
//   3 rule match       the scenarios' rule engine (pure), else the upstream's own sandbox
//   4 behaviour        latency, hold open, reset, malformed, reject, server_error   (behaviour.ts)
//   5 transaction book dedupe by the upstream's reference, persisted   (mock-transaction-book.ts)
//   6 callback plan    settle, duplicate, extra, dropped, late: durable jobs   (callback-plan.ts)
//   7 callback sender  method, signing hook, one configured timeout   (callback-sender.ts)
// A wire module keeps only what is its upstream's: auth, parsing, error bodies, its sandbox's
// test numbers and body builders.

export interface MockEngineOptions {
  /** The provider name the scenarios use: rules match on it, and it names the jobs. */
  provider: string;
  /** The wire's error bodies for reject and server_error. */
  refusals: WireRefusals;
  /** Signs each callback when the upstream signs its callbacks (the bank rail does). */
  signCallback?: CallbackSigner;
}

/** A collect or payout the upstream may take: what the engine needs from the wire. */
export interface TakeCall<T> {
  /** The book it goes in (a name given to `book`). */
  book: string;
  /** The upstream's own reference for it, which the book deduplicates on. */
  reference: string;
  query: MockQuery;
  /**
   * The upstream's own sandbox when no scenario rule decides: the settlement it plans, or null
   * for a transaction that stays pending for good. Omitted: success after the default delay.
   */
  sandbox?: () => CallbackPlan | null;
  /**
   * The upstream's own sandbox in scenario words, for test data that is more than a settlement
   * (a card that is declined at once, or one whose request times out): used when no rule decides.
   */
  sandboxBehaviour?: () => ProviderBehaviour | undefined;
  /** The pending transaction as the upstream keeps it, built at acceptance. */
  create(acceptedAt: number): T;
  /** Answers a reference the upstream has taken before, in the wire's words. */
  duplicate(): void | Promise<void>;
}

export class MockEngine {
  private readonly behaviours: BehaviourStage;
  private readonly planner: CallbackPlanner;
  /** How the mock calls back: to railyard's own receiver in process when wired, else over HTTP. */
  private readonly sender: CallbackSender;
  private readonly books = new Map<string, MockTransactionBook<unknown>>();

  constructor(
    private readonly ctx: MockContext,
    private readonly options: MockEngineOptions,
  ) {
    const { provider } = options;
    this.behaviours = new BehaviourStage({ provider, maxHoldMs: ctx.maxHoldMs, logger: ctx.logger, refusals: options.refusals });
    const local = ctx.localCallbacks && ctx.serviceBaseUrl ? { serviceBaseUrl: ctx.serviceBaseUrl, receive: ctx.localCallbacks } : undefined;
    this.sender = new CallbackSender({ provider, logger: ctx.logger, timeoutMs: ctx.callbackTimeoutMs, sign: options.signCallback, local });
    this.planner = new CallbackPlanner({ provider, clock: ctx.clock, scheduler: ctx.scheduler, store: ctx.store, logger: ctx.logger, sender: this.sender });
  }

  /**
   * Settles a kept transaction now, through the same path as its settlement job (once, then its
   * callback): the upstream's answer to a step it waited for, such as a card's OTP or a debit's
   * mandate. The transaction as it stands afterwards; undefined when the book does not have it.
   */
  answer<T>(book: string, reference: string, outcome: Outcome): Promise<T | undefined> {
    return this.planner.settleNow<T>(book, reference, outcome);
  }

  /** Opens one of the mock's persisted books and tells the callback jobs how to settle its transactions. */
  book<T>(name: string, wire: TransactionWire<T>, options: MockTransactionBookOptions<T> = {}): MockTransactionBook<T> {
    const book = this.ctx.books.open<T>(this.options.provider, name, options);
    this.planner.addBook(name, book, wire);
    this.books.set(name, book as MockTransactionBook<unknown>);
    return book;
  }

  /**
   * Stage 3: the first scenario rule that decides this call, if any. Which rule decided, or why
   * none did, goes on the response's locals (MOCK_MATCH_LOCAL) for the requests inspector.
   */
  async decide(query: MockQuery, exchange?: Exchange): Promise<ProviderBehaviour | undefined> {
    const railQuery = { provider: this.options.provider, ...query };
    const scenarios = this.ctx.scenarios;
    const decision = scenarios.decideShared ? await scenarios.decideShared(railQuery) : scenarios.decide(railQuery);
    if (exchange && this.ctx.explainMatch) exchange.res.locals[MOCK_MATCH_LOCAL] = this.ctx.explainMatch(railQuery, decision);
    return decision?.behaviour;
  }

  /**
   * A call that keeps nothing (a name enquiry, an account check): rule match, latency, and every
   * answer but accept's. Resolves to the rule's behaviour (undefined: no rule decides, the wire's
   * sandbox answers) when the wire should answer, or to null when the engine has.
   */
  async lookup(exchange: Exchange, query: MockQuery): Promise<{ behaviour: ProviderBehaviour | undefined } | null> {
    const behaviour = await this.decide(query, exchange);
    await pause(behaviour);
    if (behaviour && behaviour.respond !== 'accept') {
      await this.behaviours.answer(behaviour, exchange, query);
      return null;
    }
    return { behaviour };
  }

  /**
   * A collect or payout, through the whole pipeline. Resolves to the kept transaction when the
   * wire should answer "accepted", or to null when the engine has answered (a duplicate, a
   * refusal, or a timeout, malformed answer or reset, with or without the transaction taken).
   */
  async take<T>(exchange: Exchange, call: TakeCall<T>): Promise<T | null> {
    const book = this.books.get(call.book) as MockTransactionBook<T> | undefined;
    if (!book) throw new Error(`${this.options.provider} mock: no book ${call.book}`);
    if (await book.has(call.reference)) {
      await call.duplicate();
      return null;
    }

    const behaviour = (await this.decide(call.query, exchange)) ?? call.sandboxBehaviour?.();
    await pause(behaviour);
    if (behaviour && !takesRequest(behaviour)) {
      await this.behaviours.answer(behaviour, exchange, call.query);
      return null;
    }

    const byDefault: CallbackPlan = { after_seconds: this.ctx.defaultCallbackSeconds, status: 'success' };
    const settle = behaviour ? (behaviour.callback ?? byDefault) : call.sandbox ? call.sandbox() : byDefault;
    const acceptedAt = this.ctx.clock.now();
    const transaction = call.create(acceptedAt);
    const kept = await book.keep(call.reference, transaction, (db) =>
      this.planner.schedule(db, { book: call.book, reference: call.reference, transaction, acceptedAt }, settle, behaviour?.extra_callbacks ?? []),
    );
    // A twin request was taken while this one waited out its latency (here or on another instance).
    if (!kept) {
      await call.duplicate();
      return null;
    }
    // The upstream took it, but the caller hears nothing it can use.
    if (behaviour && behaviour.respond !== 'accept') {
      await this.behaviours.answer(behaviour, exchange, call.query);
      return null;
    }
    return transaction;
  }
}
