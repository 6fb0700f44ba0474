import type { Clock } from '../kernel/clock.ts';
import type { ApiFault, ApiFaultVerdict, ApiRequestFacts, FiredRule } from '../kernel/api-fault.ts';
import { NamedRandom } from '../kernel/ids.ts';
import type { Store } from '../store/db.ts';
import { ApiFaultRepository } from '../store/repositories/api-fault-repository.ts';
import { predicateHolds } from './rule-engine.ts';
import { ruleSource } from './rule-source.ts';
import type { ApiMatchBlock, ApiRule } from './scenario-schema.ts';

const START_STATE = 'Started';

/** A fault switched on through the sandbox control (POST /api/v1/sandbox/faults), not a file. */
export interface ControlFault {
  id: string;
  rule: ApiRule;
}

/** One rule as GET /api/v1/sandbox/faults lists it. */
export interface ApiRuleView {
  id: string | null;
  file: string | null;
  index: number | null;
  rule: ApiRule;
  matched: number;
  fired: number;
}

/** A body field by dotted path (customer.msisdn); only strings, numbers and booleans compare. */
function bodyField(body: unknown, path: string): string | number | undefined {
  let at: unknown = body;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  if (typeof at === 'string' || typeof at === 'number') return at;
  if (typeof at === 'boolean') return String(at);
  return undefined;
}

const SCALARS = ['method', 'route', 'path', 'key'] as const;

/** Pure: the provider rules' predicates over a merchant request. */
export function apiMatchHolds(match: ApiMatchBlock, facts: ApiRequestFacts): boolean {
  const scalar = { method: facts.method.toUpperCase(), route: facts.route, path: facts.path, key: facts.keyId };
  for (const field of SCALARS) {
    const predicate = match[field];
    if (predicate !== undefined && !predicateHolds(predicate, scalar[field], field)) return false;
  }
  for (const [name, predicate] of Object.entries(match.header ?? {})) {
    if (!predicateHolds(predicate, facts.header(name), name.toLowerCase())) return false;
  }
  // The last segment names the field, so `customer.msisdn` compares numbers as msisdn does.
  for (const [path, predicate] of Object.entries(match.body ?? {})) {
    if (!predicateHolds(predicate, bodyField(facts.body, path), path.split('.').at(-1)!)) return false;
  }
  if (match.all && !match.all.every((m) => apiMatchHolds(m, facts))) return false;
  if (match.any && !match.any.some((m) => apiMatchHolds(m, facts))) return false;
  if (match.not && apiMatchHolds(match.not, facts)) return false;
  return true;
}

function actionOf(rule: ApiRule): FiredRule['action'] {
  if (rule.rate_limit) return 'rate_limit';
  if (rule.respond) return 'respond';
  if (rule.drop) return 'drop';
  return 'latency';
}

interface Window {
  start: number;
  count: number;
}

/** A rule in force, where it comes from, and the name its counts go by (the same on every instance). */
interface RuleInForce {
  rule: ApiRule;
  /** flt_N for a fault switched on through the sandbox control; null for a file's rule. */
  id: string | null;
  key: string;
}

const CONTROL_ID = /^flt_([1-9][0-9]{0,15})$/;

/** A rule that fires whenever it matches: its matched and fired counts move together, in one statement. */
function firesWhenMatched(rule: ApiRule): boolean {
  return !rule.rate_limit && rule.times === undefined && rule.every === undefined && rule.probability === undefined;
}

/** The fixed window of a rate limit that `now` falls in: its start and the seconds until it ends. */
function windowAt(limit: { per_seconds: number }, now: number, start = Math.floor(now / (limit.per_seconds * 1000)) * limit.per_seconds * 1000) {
  return { start, resetSeconds: Math.max(1, Math.ceil((start + limit.per_seconds * 1000 - now) / 1000)) };
}

/** The RateLimit-* headers: the tightest limit speaks, the first one the request meets with the fewest requests left. */
function limitHeaders(headers: Record<string, string>, limit: { requests: number; per_seconds: number }, remaining: number, resetSeconds: number): void {
  if (headers['RateLimit-Remaining'] === undefined || remaining < Number(headers['RateLimit-Remaining'])) {
    headers['RateLimit-Limit'] = String(limit.requests);
    headers['RateLimit-Remaining'] = String(remaining);
    headers['RateLimit-Reset'] = String(resetSeconds);
    headers['RateLimit-Policy'] = `${limit.requests};w=${limit.per_seconds}`;
  }
}

/**
 * Decides, for each merchant request on a test key, which `api:` rule fires. Rules are tried in
 * order: the sandbox control's first (switched on by hand, they take precedence), then the
 * files'. A rule fires when it matches, is in its required state, and its `times`, `every` and
 * `probability` say so; the first that fires decides. A rate limit that lets the request through
 * does not fire: it adds its RateLimit-* headers and the rules after it are tried.
 *
 * Rate limits are fixed windows per rule and API key on the business clock: `per_seconds` long,
 * starting at multiples of it since the epoch. The first `requests` requests of a key in a window
 * pass; the next get 429 with Retry-After, the seconds until the window ends. On a system clock
 * that is real time; on a virtual clock, advancing the clock honours it.
 *
 * `probability` draws from a stream named by the seed, the rule and the request's number among
 * those the rule matched, never from Math.random or the time: the same requests with the same
 * seed give the same faults.
 *
 * On a store one process owns (SQLite) all of it lives in this process. On a store several
 * instances share (see share) the faults switched on through the sandbox control, the counts,
 * windows and states live in the database: each count moves by one atomic statement, so the
 * fleet counts as one sandbox would, and the n of a probability draw is the fleet's. Each
 * instance keeps a copy of the switched-on faults, re-read when their version (read with the
 * fleet's state at the start of every request) moves; with nothing in force a request is not
 * even looked at, on either store.
 */
export class ApiFaultEngine {
  private fileRules: readonly ApiRule[];
  private control: ControlFault[] = [];
  private nextControlId = 1;
  /** By rule key: how many requests it matched, and how many times it fired (shared: as this instance last saw them). */
  private matched = new Map<string, number>();
  private fired = new Map<string, number>();
  private windows = new Map<string, Map<string, Window>>();
  private states = new Map<string, string>();
  private shared: Store | undefined;
  private readonly repo = new ApiFaultRepository();
  /** The version of the switched-on faults this copy holds (shared only), and a re-read on its way. */
  private version = 0;
  private reloading: { version: number; done: Promise<void> } | undefined;
  /** A fleet-wide restart on its way: the next decisions wait for it. */
  private pendingRestart: Promise<void> | undefined;

  constructor(
    private readonly deps: { clock: Clock; seed: number },
    rules: readonly ApiRule[] = [],
  ) {
    this.fileRules = rules;
  }

  /**
   * Keeps the switched-on faults, counts, windows and states in `store`, for the instances
   * sharing it: whichever instance answers, it is one sandbox.
   */
  share(store: Store): void {
    this.shared = store;
  }

  /** Whether any rule is in force (none: the request is not even looked at). */
  get active(): boolean {
    return this.fileRules.length > 0 || this.control.length > 0;
  }

  private ordered(): RuleInForce[] {
    return [
      ...this.control.map((c) => ({ rule: c.rule, id: c.id, key: c.id })),
      // A file's rule goes by its place and name: every instance loads the same files.
      ...this.fileRules.map((rule, index) => ({ rule, id: null, key: `file#${index}:${rule.name}` })),
    ];
  }

  /**
   * The decision for one request: against the fleet's counts when shared (a promise), else as
   * decide does. Nothing in force: undefined at once, without a statement.
   */
  decideShared(facts: ApiRequestFacts): ApiFaultVerdict | undefined | Promise<ApiFaultVerdict | undefined> {
    if (!this.active) return undefined;
    return this.shared ? this.decideOn(this.shared, facts) : this.decide(facts);
  }

  /** The decision on this process's counts (a store one process owns). */
  decide(facts: ApiRequestFacts): ApiFaultVerdict | undefined {
    if (!this.active) return undefined;
    const headers: Record<string, string> = {};
    for (const { rule, id, key } of this.ordered()) {
      if (!(rule.default === true || (rule.match !== undefined && apiMatchHolds(rule.match, facts)))) continue;
      const scenario = rule.state?.scenario ?? 'default';
      if (rule.state?.requires !== undefined && (this.states.get(scenario) ?? START_STATE) !== rule.state.requires) continue;
      const n = this.matched.get(key) ?? 0;
      this.matched.set(key, n + 1);
      if (rule.rate_limit) {
        const limited = this.rateLimit(key, rule.rate_limit, facts.keyId, headers);
        if (!limited) continue;
        return { headers, fault: { ...this.fire(rule, id, key), rateLimited: limited, latencyBeforeMs: 0, latencyAfterMs: 0 } };
      }
      if (rule.times !== undefined && (this.fired.get(key) ?? 0) >= rule.times) continue;
      if (rule.every !== undefined && (n + 1) % rule.every !== 0) continue;
      if (rule.probability !== undefined && this.draw(rule, id, n) >= rule.probability) continue;
      return { headers, fault: this.fault(rule, this.fire(rule, id, key)) };
    }
    return Object.keys(headers).length ? { headers } : undefined;
  }

  /**
   * The decision on the fleet's counts. Each count moves in one atomic statement that answers
   * the new value: a rule that fires whenever it matches costs one statement, a rate limit one
   * more for its window, a rule with times, every or probability one more when it fires, and a
   * required state one read.
   */
  private async decideOn(store: Store, facts: ApiRequestFacts): Promise<ApiFaultVerdict | undefined> {
    if (this.pendingRestart) await this.pendingRestart;
    const headers: Record<string, string> = {};
    for (const { rule, id, key } of this.ordered()) {
      if (!(rule.default === true || (rule.match !== undefined && apiMatchHolds(rule.match, facts)))) continue;
      const scenario = rule.state?.scenario ?? 'default';
      if (rule.state?.requires !== undefined) {
        const state = (await this.repo.state(store, scenario)) ?? START_STATE;
        this.states.set(scenario, state);
        if (state !== rule.state.requires) continue;
      }
      const always = firesWhenMatched(rule);
      const counts = await this.repo.match(store, key, always);
      this.matched.set(key, counts.matched);
      this.fired.set(key, counts.fired);
      const n = counts.matched - 1;
      if (rule.rate_limit) {
        const limit = rule.rate_limit;
        const now = this.deps.clock.now();
        const taken = await this.repo.takeWindow(store, key, facts.keyId, windowAt(limit, now).start);
        const { resetSeconds } = windowAt(limit, now, taken.windowStart);
        limitHeaders(headers, limit, limit.requests - Math.min(taken.used, limit.requests), resetSeconds);
        if (taken.used <= limit.requests) continue;
        // No cap: the firing always counts.
        const fired = (await this.fireShared(store, rule, id, key))!;
        return { headers, fault: { ...fired, rateLimited: { retryAfterSeconds: resetSeconds, limit: limit.requests, windowSeconds: limit.per_seconds }, latencyBeforeMs: 0, latencyAfterMs: 0 } };
      }
      if (!always) {
        if (rule.times !== undefined && counts.fired >= rule.times) continue;
        if (rule.every !== undefined && (n + 1) % rule.every !== 0) continue;
        if (rule.probability !== undefined && this.draw(rule, id, n) >= rule.probability) continue;
      }
      // Of two instances taking the last of a rule's `times` at once, one fires.
      const fired = always ? this.fireCounted(rule, id) : await this.fireShared(store, rule, id, key, rule.times);
      if (!fired) continue;
      if (always && rule.state?.sets !== undefined) await this.setStateShared(store, rule);
      return { headers, fault: this.fault(rule, fired) };
    }
    return Object.keys(headers).length ? { headers } : undefined;
  }

  private fault(rule: ApiRule, fired: { fired: FiredRule }): ApiFault {
    const fault: ApiFault = {
      ...fired,
      latencyBeforeMs: rule.latency_ms?.before_commit ?? 0,
      latencyAfterMs: rule.latency_ms?.after_commit ?? 0,
    };
    if (rule.respond) fault.respond = { status: rule.respond.status, beforeCommit: rule.respond.before_commit, ...(rule.respond.message ? { message: rule.respond.message } : {}) };
    if (rule.drop) fault.drop = rule.drop;
    return fault;
  }

  private fire(rule: ApiRule, id: string | null, key: string): { fired: FiredRule } {
    this.fired.set(key, (this.fired.get(key) ?? 0) + 1);
    if (rule.state?.sets !== undefined) this.states.set(rule.state.scenario ?? 'default', rule.state.sets);
    return this.fireCounted(rule, id);
  }

  /** The fired rule, its count already moved. */
  private fireCounted(rule: ApiRule, id: string | null): { fired: FiredRule } {
    const source = ruleSource(rule);
    return { fired: { rule: rule.name, file: id ? 'sandbox control' : (source?.file ?? null), index: source?.index ?? null, action: actionOf(rule) } };
  }

  /** Counts a firing for the fleet (unless the rule fired `cap` times already) and sets its state. */
  private async fireShared(store: Store, rule: ApiRule, id: string | null, key: string, cap?: number): Promise<{ fired: FiredRule } | undefined> {
    const fired = await this.repo.fire(store, key, cap);
    if (fired === undefined) return undefined;
    this.fired.set(key, fired);
    if (rule.state?.sets !== undefined) await this.setStateShared(store, rule);
    return this.fireCounted(rule, id);
  }

  private async setStateShared(store: Store, rule: ApiRule): Promise<void> {
    const scenario = rule.state?.scenario ?? 'default';
    await this.repo.setState(store, scenario, rule.state!.sets!);
    this.states.set(scenario, rule.state!.sets!);
  }

  /** The request's draw in [0, 1): a stream named by the seed, the rule and the request's number. */
  private draw(rule: ApiRule, id: string | null, n: number): number {
    return new NamedRandom(`${this.deps.seed}/api/${id ?? rule.name}/${n}`).nextUint32() / 2 ** 32;
  }

  /** Counts the request in its key's window; answers the 429's figures when the window is full. */
  private rateLimit(key: string, limit: { requests: number; per_seconds: number }, keyId: string, headers: Record<string, string>) {
    const { start, resetSeconds } = windowAt(limit, this.deps.clock.now());
    const byKey = this.windows.get(key) ?? new Map<string, Window>();
    this.windows.set(key, byKey);
    const kept = byKey.get(keyId);
    const window = kept && kept.start === start ? kept : { start, count: 0 };
    byKey.set(keyId, window);
    const passes = window.count < limit.requests;
    if (passes) window.count++;
    limitHeaders(headers, limit, limit.requests - window.count, resetSeconds);
    return passes ? undefined : { retryAfterSeconds: resetSeconds, limit: limit.requests, windowSeconds: limit.per_seconds };
  }

  /** Swaps the files' rules (serve reloads, or a reset) and starts every count, window and state afresh. */
  replace(rules: readonly ApiRule[]): Promise<void> {
    this.fileRules = rules;
    return this.restart();
  }

  /**
   * Starts every count, window and state afresh; the rules stay. Shared, for the whole fleet:
   * the decisions after it wait for it (the promise says when it is done).
   */
  restart(): Promise<void> {
    this.matched = new Map();
    this.fired = new Map();
    this.windows = new Map();
    this.states = new Map();
    if (!this.shared) return Promise.resolve();
    const restarted = this.repo.restart(this.shared);
    const done = () => {
      if (this.pendingRestart === pending) this.pendingRestart = undefined;
    };
    // The caller that awaits `restarted` hears a failure; the decisions go on either way.
    const pending: Promise<void> = restarted.then(done, done);
    this.pendingRestart = pending;
    return restarted;
  }

  /** Switches a fault on by hand, in this process; it is tried before the files' rules. */
  add(rule: ApiRule): ControlFault {
    if (this.shared) throw new Error('faults on a shared store are switched on with switchOn');
    const fault = { id: `flt_${this.nextControlId++}`, rule };
    this.control.push(fault);
    return fault;
  }

  /** Switches one hand-made fault off (by id), or all of them, in this process; answers how many went. */
  remove(id?: string): number {
    if (this.shared) throw new Error('faults on a shared store are switched off with switchOff');
    const before = this.control.length;
    this.control = id === undefined ? [] : this.control.filter((c) => c.id !== id);
    return before - this.control.length;
  }

  /** Switches a fault on: for the fleet when shared (its id unique in the fleet), else as add does. */
  async switchOn(rule: ApiRule): Promise<ControlFault> {
    if (!this.shared) return this.add(rule);
    const { seq, version } = await this.repo.add(this.shared, JSON.stringify(rule));
    await this.adoptVersion(version);
    return { id: `flt_${seq}`, rule };
  }

  /** Switches one hand-made fault off (by id), or all of them: for the fleet when shared, else as remove does. */
  async switchOff(id?: string): Promise<number> {
    if (!this.shared) return this.remove(id);
    let seq: number | undefined;
    if (id !== undefined) {
      const numbered = CONTROL_ID.exec(id);
      if (!numbered) return 0;
      seq = Number(numbered[1]);
    }
    const { removed, version } = await this.repo.remove(this.shared, seq);
    if (version !== null) await this.adoptVersion(version);
    return removed;
  }

  /**
   * Takes the version of the switched-on faults that the fleet's state read saw: re-reads them
   * when it moved (one statement, once per change), else nothing at all. Shared only.
   */
  adoptVersion(version: number | null): Promise<void> | undefined {
    const seen = version ?? 0;
    if (!this.shared || seen <= this.version) return undefined;
    if (this.reloading && this.reloading.version >= seen) return this.reloading.done;
    const done = this.repo.list(this.shared).then((rows) => {
      if (seen <= this.version) return;
      this.control = rows.map((r) => ({ id: `flt_${r.seq}`, rule: JSON.parse(r.rule) as ApiRule }));
      this.version = seen;
    });
    const reloading = {
      version: seen,
      done: done.finally(() => {
        if (this.reloading === reloading) this.reloading = undefined;
      }),
    };
    this.reloading = reloading;
    return reloading.done;
  }

  /** The rules in force, in the order they are tried, with their counts (shared: as this instance last saw them). */
  list(): ApiRuleView[] {
    return this.ordered().map(({ rule, id, key }) => {
      const source = id ? null : ruleSource(rule);
      return { id, file: id ? null : (source?.file ?? null), index: source?.index ?? null, rule, matched: this.matched.get(key) ?? 0, fired: this.fired.get(key) ?? 0 };
    });
  }

  /** The rules in force with the fleet's counts when shared (one read), else as list does. */
  async inForce(): Promise<ApiRuleView[]> {
    if (this.shared) {
      if (this.pendingRestart) await this.pendingRestart;
      const counts = new Map(
        (
          await this.repo.counts(
            this.shared,
            this.ordered().map((r) => r.key),
          )
        ).map((c) => [c.ruleKey, c]),
      );
      this.matched = new Map();
      this.fired = new Map();
      for (const { key } of this.ordered()) {
        const c = counts.get(key);
        if (c) {
          this.matched.set(key, c.matched);
          this.fired.set(key, c.fired);
        }
      }
    }
    return this.list();
  }

  /** The state a named machine of api rules is in now (shared: as this instance last saw it). */
  stateOf(scenario: string): string {
    return this.states.get(scenario) ?? START_STATE;
  }
}
