import { currentJob } from '../kernel/job-scope.ts';
import { normaliseMsisdn, toLocalMsisdn } from '../kernel/msisdn.ts';
import { commitWith, type Store } from '../store/db.ts';
import { SharedStateRepository } from '../store/repositories/shared-state-repository.ts';
import type { MatchBlock, Predicate, ScenarioRule, Wallet } from './scenario-schema.ts';
import type { LintProblem } from './scenario-lint.ts';
import type { Decision, ProviderBehaviour, RailQuery, ScenarioEngine } from './scenario-types.ts';

const START_STATE = 'Started';

/** Where a fleet keeps its scenario state (one JSON value). */
const SHARED_NAME = 'scenario_state';

/** What a sequence of calls leaves behind: counts, named states and wallets. */
interface ScenarioSnapshot {
  calls: [string, number][];
  matched: number[];
  states: [string, string][];
  wallets: [string, number][];
}

/** Numbers compare in their normalised 233XXXXXXXXX form, so QA may write any form. */
function canonicalMsisdn(value: string): string {
  return normaliseMsisdn(value) ?? value;
}

/** A regex predicate compiled once: rules are loaded data, so this holds no more than they do. */
const compiledRegex = new WeakMap<Predicate, RegExp>();
function regexOf(predicate: Predicate, source: string): RegExp {
  let regex = compiledRegex.get(predicate);
  if (!regex) {
    regex = new RegExp(source);
    compiledRegex.set(predicate, regex);
  }
  return regex;
}

/**
 * Pure: does one field value satisfy one predicate? Runs for every rule tried on every mock call,
 * so it normalises only what the predicate compares.
 */
export function predicateHolds(predicate: Predicate, actual: string | number | undefined, field: string): boolean {
  if (actual === undefined) return false;
  const isMsisdn = field === 'msisdn';
  const norm = (v: string | number) => (isMsisdn && typeof v === 'string' ? canonicalMsisdn(v) : String(v));
  if (predicate.equals !== undefined) return norm(predicate.equals) === norm(actual);
  if (predicate.one_of !== undefined) {
    const value = norm(actual);
    return predicate.one_of.some((v) => norm(v) === value);
  }
  if (predicate.prefix !== undefined || predicate.regex !== undefined) {
    // prefix and regex read a Ghana number in its familiar 0XXXXXXXXX form.
    const normalised = isMsisdn && typeof actual === 'string' ? normaliseMsisdn(actual) : null;
    const text = normalised ? toLocalMsisdn(normalised) : String(actual);
    if (predicate.prefix !== undefined) return text.startsWith(predicate.prefix);
    return regexOf(predicate, predicate.regex!).test(text);
  }
  if (predicate.range !== undefined) {
    const n = typeof actual === 'number' ? actual : Number(actual);
    if (!Number.isFinite(n)) return false;
    return (predicate.range.min === undefined || n >= predicate.range.min) && (predicate.range.max === undefined || n <= predicate.range.max);
  }
  return false;
}

const FIELDS = ['msisdn', 'account_number', 'bank_code', 'network', 'channel', 'provider', 'amount', 'card'] as const;

/** Pure: every field named must hold, and all/any/not combine blocks. */
export function matchHolds(match: MatchBlock, query: RailQuery): boolean {
  for (const field of FIELDS) {
    const predicate = match[field];
    if (predicate !== undefined && !predicateHolds(predicate, query[field], field)) return false;
  }
  if (match.all && !match.all.every((m) => matchHolds(m, query))) return false;
  if (match.any && !match.any.some((m) => matchHolds(m, query))) return false;
  if (match.not && matchHolds(match.not, query)) return false;
  return true;
}

export function ruleMatches(rule: ScenarioRule, query: RailQuery): boolean {
  return rule.default === true || (rule.match !== undefined && matchHolds(rule.match, query));
}

/**
 * Scenario rules as data, evaluated in order: the first rule that matches the call, is in its
 * required state and says something for this operation and provider wins. It keeps what a
 * sequence of calls needs: how many times each rule answered each provider (a list of
 * behaviours is walked call by call, the last repeating), the named states, and the simulated
 * customers' wallets.
 */
export class RuleEngine implements ScenarioEngine {
  private calls = new Map<string, number>();
  /** How many calls each rule (by index) answered since the rules were loaded or reset. */
  private matched: number[] = [];
  private states = new Map<string, string>();
  private wallets = new Map<string, number>();
  /** The state as loaded or last reset: what a fleet starts from when the database holds none. */
  private initial: ScenarioSnapshot;
  private shared: Store | undefined;
  /** A reset this instance made that the shared state has not taken yet. */
  private resetPending = false;
  private readonly repo = new SharedStateRepository();
  /** Shared decisions asked for while one is on its way (decideShared), and that one's drain. */
  private waiting: { query: RailQuery; resolve: (decision: Decision | undefined) => void; reject: (error: unknown) => void }[] = [];
  private deciding: Promise<void> | undefined;
  /** Another engine that takes this one's decisions (decideElsewhere). */
  private elsewhere: ((query: RailQuery) => Promise<Decision | undefined>) | undefined;

  constructor(
    private rules: readonly ScenarioRule[],
    wallets: readonly Wallet[] = [],
    private sources: readonly RuleSource[] = [],
  ) {
    this.loadWallets(wallets);
    this.initial = this.snapshot();
  }

  /**
   * Keeps the counts, states and wallets in `store`, for the instances sharing it: each decision
   * then reads and writes them in one transaction holding their row's lock, so a sequence advanced on one
   * instance continues on the next, and two calls at once never take the same step.
   */
  share(store: Store): void {
    this.shared = store;
  }

  /**
   * Decides a call against the fleet's state when shared (see share), else as decide does.
   * Decisions asked for while one is on its way are taken together in the next transaction, in
   * the order asked for: the state's row is locked once for all of them, so the fleet's decisions
   * are not bound to one per lock. A job's decision takes a transaction of its own, in its turn of
   * the round (JobScope): joined to another's, it could wait for a job that waits for it.
   */
  decideShared(query: RailQuery): Promise<Decision | undefined> {
    if (this.elsewhere) return this.elsewhere(query);
    const store = this.shared;
    if (!store) return Promise.resolve(this.decide(query));
    if (currentJob()) return this.decideTogether(store, [query]).then(([decision]) => decision);
    return new Promise((resolve, reject) => {
      this.waiting.push({ query, resolve, reject });
      this.deciding ??= this.decideWaiting(store);
    });
  }

  /**
   * Hands every decision to `decide`, another engine's (the request thread's, for the job
   * thread's mocks): one engine counts every call, whichever thread made it, and its reloads,
   * restarts and listings are the only ones.
   */
  decideElsewhere(decide: (query: RailQuery) => Promise<Decision | undefined>): void {
    this.elsewhere = decide;
  }

  private async decideWaiting(store: Store): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0);
        try {
          const decisions = await this.decideTogether(
            store,
            batch.map((b) => b.query),
          );
          for (const [i, b] of batch.entries()) b.resolve(decisions[i]);
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.deciding = undefined;
    }
  }

  /**
   * The state's row is locked for the decisions (READ COMMITTED, not SERIALIZABLE): a decision
   * elsewhere in the fleet, or here, waits for this transaction's commit and then reads what it
   * wrote. So decisions take turns on that row alone, not in this process's queue of serializable work.
   */
  private async decideTogether(store: Store, queries: RailQuery[]): Promise<(Decision | undefined)[]> {
    const reset = this.resetPending;
    const decisions = await store.transaction(
      async (tx) => {
        const saved = await this.repo.lock(tx, SHARED_NAME, JSON.stringify(this.initial));
        // From the stored state (or the fresh one a reset asks for): restored and decided with no
        // wait in between, so decisions of this process never see each other's halves.
        this.restore(reset ? this.initial : (JSON.parse(saved) as ScenarioSnapshot));
        const decisions = queries.map((query) => this.decide(query));
        commitWith(this.repo.put(tx, SHARED_NAME, JSON.stringify(this.snapshot())));
        return decisions;
      },
      { isolation: 'read committed' },
    );
    if (reset) this.resetPending = false;
    return decisions;
  }

  /** Reads the fleet's state into memory, for the listings (a no-op unless shared). */
  async sync(): Promise<void> {
    if (!this.shared || this.resetPending) return;
    const saved = await this.repo.get(this.shared, SHARED_NAME);
    if (saved) this.restore(JSON.parse(saved) as ScenarioSnapshot);
  }

  private snapshot(): ScenarioSnapshot {
    return { calls: [...this.calls], matched: [...this.matched], states: [...this.states], wallets: [...this.wallets] };
  }

  private restore(s: ScenarioSnapshot): void {
    this.calls = new Map(s.calls);
    this.matched = [...s.matched];
    this.states = new Map(s.states);
    this.wallets = new Map(s.wallets);
  }

  decide(query: RailQuery): Decision | undefined {
    for (const [index, rule] of this.rules.entries()) {
      if (!ruleMatches(rule, query)) continue;
      const scenario = rule.state?.scenario ?? 'default';
      if (rule.state?.requires !== undefined && (this.states.get(scenario) ?? START_STATE) !== rule.state.requires) continue;
      const byProvider = rule[query.operation];
      const sequence = byProvider?.[query.provider as keyof typeof byProvider] ?? byProvider?.any;
      if (!sequence) continue;
      const key = `${index}:${query.operation}:${query.provider}`;
      const n = this.calls.get(key) ?? 0;
      this.calls.set(key, n + 1);
      this.matched[index] = (this.matched[index] ?? 0) + 1;
      if (rule.state?.sets !== undefined) this.states.set(scenario, rule.state.sets);
      const behaviour = sequence[Math.min(n, sequence.length - 1)]!;
      return { rule: rule.name, index, behaviour: this.applyWallet(query, behaviour) };
    }
    const wallet = this.walletDecision(query);
    return wallet;
  }

  /** A collect that would succeed fails with NOT_ENOUGH_FUNDS when the customer's wallet is short. */
  private applyWallet(query: RailQuery, behaviour: ProviderBehaviour): ProviderBehaviour {
    const key = query.msisdn ? canonicalMsisdn(query.msisdn) : undefined;
    if (!key || !this.wallets.has(key) || query.amount === undefined) return behaviour;
    const succeeds = behaviour.callback?.status === 'success' && ['accept', 'timeout', 'malformed', 'reset'].includes(behaviour.respond);
    if (!succeeds) return behaviour;
    const balance = this.wallets.get(key)!;
    if (query.operation === 'collect') {
      if (balance < query.amount) {
        return { ...behaviour, callback: { ...behaviour.callback!, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } };
      }
      this.wallets.set(key, balance - query.amount);
    } else if (query.operation === 'payout') {
      this.wallets.set(key, balance + query.amount);
    }
    return behaviour;
  }

  /** No rule spoke, but the number has a simulated wallet: accept, and settle by its balance. */
  private walletDecision(query: RailQuery): Decision | undefined {
    const key = query.msisdn ? canonicalMsisdn(query.msisdn) : undefined;
    if (!key || !this.wallets.has(key) || query.operation === 'resolve') return undefined;
    const behaviour = this.applyWallet(query, { respond: 'accept', callback: { after_seconds: 3, status: 'success' } });
    return { rule: `wallet ${toLocalMsisdn(key)}`, behaviour };
  }

  /** A customer's simulated balance, or undefined when the number has no wallet. */
  walletBalance(msisdn: string): number | undefined {
    return this.wallets.get(canonicalMsisdn(msisdn));
  }

  /** Swaps the rules (serve mode reloads) and starts every count, state and wallet afresh. */
  replace(rules: readonly ScenarioRule[], wallets: readonly Wallet[] = [], sources: readonly RuleSource[] = []): void {
    this.rules = rules;
    this.sources = sources;
    this.reset(wallets);
  }

  /** Starts every count, state and wallet afresh, as loaded (a sandbox restart of the scenarios). */
  restart(): void {
    this.restore(this.initial);
    if (this.shared) this.resetPending = true;
  }

  reset(wallets: readonly Wallet[] = []): void {
    this.calls = new Map();
    this.matched = [];
    this.states = new Map();
    this.wallets = new Map();
    this.loadWallets(wallets);
    this.initial = this.snapshot();
    // The next shared decision writes this fresh state for the fleet.
    if (this.shared) this.resetPending = true;
  }

  private loadWallets(wallets: readonly Wallet[]): void {
    for (const w of wallets) this.wallets.set(canonicalMsisdn(w.msisdn), w.balance);
  }

  get size(): number {
    return this.rules.length;
  }

  /** The rules in force, in order (the requests inspector explains a miss against them). */
  get loaded(): readonly ScenarioRule[] {
    return this.rules;
  }

  /** The state a named scenario is in now. */
  stateOf(scenario: string): string {
    return this.states.get(scenario) ?? START_STATE;
  }

  /** The rules grouped by the file they came from, each with how many calls it answered. */
  describe(): { file: string; problems: readonly LintProblem[]; rules: { index: number; rule: ScenarioRule; matchedCount: number }[] }[] {
    const group = (file: string, from: number, to: number, problems: readonly LintProblem[] = []) => ({
      file,
      problems,
      rules: this.rules.slice(from, to).map((rule, i) => ({ index: i, rule, matchedCount: this.matched[from + i] ?? 0 })),
    });
    const groups = [];
    let at = 0;
    for (const source of this.sources) {
      groups.push(group(source.file, at, at + source.rules, source.problems));
      at += source.rules;
    }
    // Rules passed in code, not from a file.
    if (at < this.rules.length) groups.push(group('(inline rules)', at, this.rules.length));
    return groups;
  }
}

/** Where a run of consecutive rules came from: a scenario file, how many rules it holds, what lint says of it. */
export interface RuleSource {
  file: string;
  rules: number;
  problems?: readonly LintProblem[];
}

/** Stateless one-off evaluation, for tests and tools. */
export function decide(rules: readonly ScenarioRule[], query: RailQuery): Decision | undefined {
  return new RuleEngine(rules).decide(query);
}
