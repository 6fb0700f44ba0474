import { normaliseMsisdn } from '../kernel/msisdn.ts';
import type { ScenarioRule } from './scenario-schema.ts';
import type { Decision, RailQuery, ScenarioEngine } from './scenario-types.ts';

function sameMsisdn(expected: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  return (normaliseMsisdn(expected) ?? expected) === (normaliseMsisdn(actual) ?? actual);
}

/** Pure: does the rule's match block accept this provider call? */
export function ruleMatches(rule: ScenarioRule, query: RailQuery): boolean {
  const m = rule.match;
  if (m.msisdn !== undefined && !sameMsisdn(m.msisdn, query.msisdn)) return false;
  if (m.account_number !== undefined && m.account_number !== query.account_number) return false;
  if (m.bank_code !== undefined && m.bank_code !== query.bank_code) return false;
  if (m.network !== undefined && m.network !== query.network) return false;
  if (m.channel !== undefined && m.channel !== query.channel) return false;
  return true;
}

/** First match wins: the first rule that matches and says something for this operation and provider. */
export function decide(rules: readonly ScenarioRule[], query: RailQuery): Decision | undefined {
  for (const rule of rules) {
    if (!ruleMatches(rule, query)) continue;
    const byProvider = rule[query.operation];
    const behaviour = byProvider?.[query.provider as keyof typeof byProvider] ?? byProvider?.any;
    if (behaviour) return { rule: rule.name, behaviour };
  }
  return undefined;
}

export class RuleEngine implements ScenarioEngine {
  constructor(private rules: readonly ScenarioRule[]) {}
  decide(query: RailQuery): Decision | undefined {
    return decide(this.rules, query);
  }
  /** Swaps the rule set at once (serve mode reloads). */
  replace(rules: readonly ScenarioRule[]): void {
    this.rules = rules;
  }
  get size(): number {
    return this.rules.length;
  }
}
