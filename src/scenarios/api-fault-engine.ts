import type { Clock } from '../kernel/clock.ts';
import type { ApiFault, ApiFaultVerdict, ApiRequestFacts, FiredRule } from '../kernel/api-fault.ts';
import { NamedRandom } from '../kernel/ids.ts';
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
 */
export class ApiFaultEngine {
  private fileRules: readonly ApiRule[];
  private control: ControlFault[] = [];
  private nextControlId = 1;
  /** By rule object: how many requests it matched, and how many times it fired. */
  private matched = new Map<ApiRule, number>();
  private fired = new Map<ApiRule, number>();
  private windows = new Map<ApiRule, Map<string, Window>>();
  private states = new Map<string, string>();

  constructor(
    private readonly deps: { clock: Clock; seed: number },
    rules: readonly ApiRule[] = [],
  ) {
    this.fileRules = rules;
  }

  /** Whether any rule is in force (none: the request is not even looked at). */
  get active(): boolean {
    return this.fileRules.length > 0 || this.control.length > 0;
  }

  private ordered(): { rule: ApiRule; id: string | null }[] {
    return [...this.control.map((c) => ({ rule: c.rule, id: c.id })), ...this.fileRules.map((rule) => ({ rule, id: null }))];
  }

  decide(facts: ApiRequestFacts): ApiFaultVerdict | undefined {
    if (!this.active) return undefined;
    const headers: Record<string, string> = {};
    for (const { rule, id } of this.ordered()) {
      if (!(rule.default === true || (rule.match !== undefined && apiMatchHolds(rule.match, facts)))) continue;
      const scenario = rule.state?.scenario ?? 'default';
      if (rule.state?.requires !== undefined && (this.states.get(scenario) ?? START_STATE) !== rule.state.requires) continue;
      const n = this.matched.get(rule) ?? 0;
      this.matched.set(rule, n + 1);
      if (rule.rate_limit) {
        const limited = this.rateLimit(rule, rule.rate_limit, facts.keyId, headers);
        if (!limited) continue;
        return { headers, fault: { ...this.fire(rule, id), rateLimited: limited, latencyBeforeMs: 0, latencyAfterMs: 0 } };
      }
      if (rule.times !== undefined && (this.fired.get(rule) ?? 0) >= rule.times) continue;
      if (rule.every !== undefined && (n + 1) % rule.every !== 0) continue;
      if (rule.probability !== undefined && this.draw(rule, id, n) >= rule.probability) continue;
      const fault: ApiFault = {
        ...this.fire(rule, id),
        latencyBeforeMs: rule.latency_ms?.before_commit ?? 0,
        latencyAfterMs: rule.latency_ms?.after_commit ?? 0,
      };
      if (rule.respond) fault.respond = { status: rule.respond.status, beforeCommit: rule.respond.before_commit, ...(rule.respond.message ? { message: rule.respond.message } : {}) };
      if (rule.drop) fault.drop = rule.drop;
      return { headers, fault };
    }
    return Object.keys(headers).length ? { headers } : undefined;
  }

  private fire(rule: ApiRule, id: string | null): { fired: FiredRule } {
    this.fired.set(rule, (this.fired.get(rule) ?? 0) + 1);
    if (rule.state?.sets !== undefined) this.states.set(rule.state.scenario ?? 'default', rule.state.sets);
    const source = ruleSource(rule);
    return { fired: { rule: rule.name, file: id ? 'sandbox control' : (source?.file ?? null), index: source?.index ?? null, action: actionOf(rule) } };
  }

  /** The request's draw in [0, 1): a stream named by the seed, the rule and the request's number. */
  private draw(rule: ApiRule, id: string | null, n: number): number {
    return new NamedRandom(`${this.deps.seed}/api/${id ?? rule.name}/${n}`).nextUint32() / 2 ** 32;
  }

  /** Counts the request in its key's window; answers the 429's figures when the window is full. */
  private rateLimit(rule: ApiRule, limit: { requests: number; per_seconds: number }, keyId: string, headers: Record<string, string>) {
    const now = this.deps.clock.now();
    const windowMs = limit.per_seconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const byKey = this.windows.get(rule) ?? new Map<string, Window>();
    this.windows.set(rule, byKey);
    const kept = byKey.get(keyId);
    const window = kept && kept.start === start ? kept : { start, count: 0 };
    byKey.set(keyId, window);
    const resetSeconds = Math.max(1, Math.ceil((start + windowMs - now) / 1000));
    const passes = window.count < limit.requests;
    if (passes) window.count++;
    // The tightest limit speaks: the first one the request meets with the fewest requests left.
    const remaining = limit.requests - window.count;
    if (headers['RateLimit-Remaining'] === undefined || remaining < Number(headers['RateLimit-Remaining'])) {
      headers['RateLimit-Limit'] = String(limit.requests);
      headers['RateLimit-Remaining'] = String(remaining);
      headers['RateLimit-Reset'] = String(resetSeconds);
      headers['RateLimit-Policy'] = `${limit.requests};w=${limit.per_seconds}`;
    }
    return passes ? undefined : { retryAfterSeconds: resetSeconds, limit: limit.requests, windowSeconds: limit.per_seconds };
  }

  /** Swaps the files' rules (serve reloads, or a reset) and starts every count, window and state afresh. */
  replace(rules: readonly ApiRule[]): void {
    this.fileRules = rules;
    this.restart();
  }

  /** Starts every count, window and state afresh; the rules stay. */
  restart(): void {
    this.matched = new Map();
    this.fired = new Map();
    this.windows = new Map();
    this.states = new Map();
  }

  /** Switches a fault on by hand; it is tried before the files' rules. */
  add(rule: ApiRule): ControlFault {
    const fault = { id: `flt_${this.nextControlId++}`, rule };
    this.control.push(fault);
    return fault;
  }

  /** Switches one hand-made fault off (by id), or all of them; answers how many went. */
  remove(id?: string): number {
    const before = this.control.length;
    this.control = id === undefined ? [] : this.control.filter((c) => c.id !== id);
    return before - this.control.length;
  }

  /** The rules in force, in the order they are tried, with their counts. */
  list(): ApiRuleView[] {
    return this.ordered().map(({ rule, id }) => {
      const source = id ? null : ruleSource(rule);
      return { id, file: id ? null : (source?.file ?? null), index: source?.index ?? null, rule, matched: this.matched.get(rule) ?? 0, fired: this.fired.get(rule) ?? 0 };
    });
  }

  /** The state a named machine of api rules is in now. */
  stateOf(scenario: string): string {
    return this.states.get(scenario) ?? START_STATE;
  }
}
