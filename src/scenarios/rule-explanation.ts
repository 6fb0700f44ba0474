import { normaliseMsisdn, toLocalMsisdn } from '../kernel/msisdn.ts';
import { matchHolds, predicateHolds } from './rule-engine.ts';
import { ruleSource } from './rule-source.ts';
import type { MatchBlock, Predicate, ScenarioRule } from './scenario-schema.ts';
import type { Decision, RailQuery } from './scenario-types.ts';

// Why a provider call matched no scenario rule, in words a QA engineer can act on: the nearest
// rule (the one with the most of its conditions satisfied) and the first condition it failed.
// Pure: the rules, the call and the named states in; an answer out.

/** The key of express's res.locals under which a mock leaves its call's RuleMatchReport. */
export const MOCK_MATCH_LOCAL = 'scenarioMatch';

/** A rule as the inspector names it: its file and place there (or in the loaded list). */
export interface RuleRef {
  file: string | null;
  rule_index: number;
  rule_name: string;
}

export type RuleMatchReport = { matched: true; file: string | null; rule_index: number | null; rule_name: string } | { matched: false; nearest: RuleRef | null; failed: string };

/** One condition of a rule on one call: does it hold, and if not, why not. */
interface Condition {
  holds: boolean;
  failure: string;
  /** A predicate of the match block (counts first), or the state or behaviour the rule needs (breaks ties). */
  predicate: boolean;
  /** A predicate on a field the call carries: the rule is about calls like this one, even if it failed. */
  relevant?: boolean;
}

const FIELDS = ['msisdn', 'account_number', 'bank_code', 'network', 'channel', 'provider', 'amount', 'card'] as const;
const START_STATE = 'Started';

/** A card number never appears whole, even in an explanation: its last four digits stand for it. */
function shown(field: string, value: string | number): string {
  if (field === 'card' && typeof value === 'string' && /^\d{6,}$/.test(value)) return `ending ${value.slice(-4)}`;
  if (field === 'msisdn' && typeof value === 'string') return normaliseMsisdn(value) ?? value;
  return String(value);
}

/** The local 0XXXXXXXXX form prefix and regex read a Ghana number in. */
function asText(field: string, value: string | number): string {
  if (field === 'msisdn' && typeof value === 'string') {
    const n = normaliseMsisdn(value);
    if (n) return toLocalMsisdn(n);
  }
  return shown(field, value);
}

/** Why `actual` does not satisfy `predicate`, e.g. "msisdn 233551234987 is not 233551234989". */
export function describePredicateFailure(field: string, predicate: Predicate, actual: string | number | undefined): string {
  if (actual === undefined) return `the call has no ${field}`;
  if (predicate.equals !== undefined) return `${field} ${shown(field, actual)} is not ${shown(field, predicate.equals)}`;
  if (predicate.one_of !== undefined) return `${field} ${shown(field, actual)} is not one of ${predicate.one_of.map((v) => shown(field, v)).join(', ')}`;
  if (predicate.prefix !== undefined) return `${field} ${asText(field, actual)} does not start with ${predicate.prefix}`;
  if (predicate.regex !== undefined) return `${field} ${asText(field, actual)} does not match /${predicate.regex}/`;
  if (predicate.range !== undefined) {
    const n = typeof actual === 'number' ? actual : Number(actual);
    if (!Number.isFinite(n)) return `${field} ${shown(field, actual)} is not a number`;
    const { min, max } = predicate.range;
    if (min !== undefined && n < min) return `${field} ${n} is below ${min}`;
    return `${field} ${n} is above ${max}`;
  }
  return `${field} has an empty predicate`;
}

/** The conditions of a match block, flattened: each field, each `all` member, and `any`/`not` as one each. */
function matchConditions(match: MatchBlock, query: RailQuery): Condition[] {
  const out: Condition[] = [];
  for (const field of FIELDS) {
    const predicate = match[field];
    if (predicate === undefined) continue;
    const actual = query[field];
    out.push({ holds: predicateHolds(predicate, actual, field), failure: describePredicateFailure(field, predicate, actual), predicate: true, relevant: actual !== undefined });
  }
  for (const member of match.all ?? []) out.push(...matchConditions(member, query));
  if (match.any) {
    const first = matchConditions(match.any[0]!, query).find((c) => !c.holds);
    out.push({
      holds: match.any.some((m) => matchHolds(m, query)),
      failure: `none of the ${match.any.length} "any" alternatives holds${first ? ` (the first: ${first.failure})` : ''}`,
      predicate: true,
      relevant: true,
    });
  }
  if (match.not) {
    out.push({ holds: !matchHolds(match.not, query), failure: 'the "not" block holds for this call', predicate: true, relevant: true });
  }
  return out;
}

/** Every condition a rule puts on a call: its match, the state it requires, and a behaviour for this operation and provider. */
function ruleConditions(rule: ScenarioRule, query: RailQuery, stateOf: (scenario: string) => string): Condition[] {
  const out = rule.default === true || rule.match === undefined ? [] : matchConditions(rule.match, query);
  if (rule.state?.requires !== undefined) {
    const scenario = rule.state.scenario ?? 'default';
    const current = stateOf(scenario);
    out.push({
      holds: current === rule.state.requires,
      failure: `the rule needs scenario "${scenario}" in state "${rule.state.requires}", which is in "${current}"`,
      predicate: false,
    });
  }
  const byProvider = rule[query.operation];
  const speaks = byProvider?.[query.provider as keyof typeof byProvider] ?? byProvider?.any;
  out.push({ holds: speaks !== undefined, failure: `the rule says nothing for ${query.operation} on ${query.provider}`, predicate: false });
  return out;
}

/** A rule's name, file and place: its place in its file when the loader read it, else in the list. */
export function ruleRef(rule: ScenarioRule, index: number): RuleRef {
  const source = ruleSource(rule);
  return { file: source?.file ?? null, rule_index: source?.index ?? index, rule_name: rule.name };
}

/**
 * The nearest rule to a call no rule decided, and the first condition it failed. Nearest is the
 * rule with the most match predicates satisfied; then the one with the fewest predicates on
 * fields the call does not carry; then the one in the state it needs and with a behaviour for this
 * operation and provider; then the earliest. Null when no rules are loaded.
 */
export function explainMiss(rules: readonly ScenarioRule[], query: RailQuery, stateOf: (scenario: string) => string = () => START_STATE): { nearest: RuleRef; failed: string } | null {
  let best: { index: number; score: number; failed: string } | null = null;
  for (const [index, rule] of rules.entries()) {
    const conditions = ruleConditions(rule, query, stateOf);
    const failed = conditions.find((c) => !c.holds);
    // A rule with every condition satisfied would have decided; it cannot be the miss's reason.
    if (!failed) continue;
    // Most match predicates satisfied first; then fewest predicates on fields the call does not
    // carry (a card rule is nearer a card call than a number rule is); state and behaviour break ties.
    const score = conditions.reduce((sum, c) => sum + (c.holds ? (c.predicate ? 1_000 : 1) : c.predicate && !c.relevant ? -10 : 0), 0);
    if (!best || score > best.score) best = { index, score, failed: failed.failure };
  }
  return best && { nearest: ruleRef(rules[best.index]!, best.index), failed: best.failed };
}

/** What the inspector shows for one call: the rule that decided it, or why none did. */
export function reportMatch(rules: readonly ScenarioRule[], query: RailQuery, decision: Decision | undefined, stateOf: (scenario: string) => string = () => START_STATE): RuleMatchReport {
  if (decision) {
    const rule = decision.index !== undefined ? rules[decision.index] : undefined;
    if (rule) return { matched: true, ...ruleRef(rule, decision.index!) };
    // A simulated wallet decided: no rule of a file did.
    return { matched: true, file: null, rule_index: null, rule_name: decision.rule };
  }
  const miss = explainMiss(rules, query, stateOf);
  if (!miss) return { matched: false, nearest: null, failed: 'no scenario rules are loaded' };
  return { matched: false, ...miss };
}
