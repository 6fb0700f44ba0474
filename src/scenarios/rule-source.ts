import type { ApiRule, ScenarioRule } from './scenario-schema.ts';

/** Where a loaded rule came from: its file (as the loader was given it) and its place in that file. */
export interface RuleSource {
  file: string;
  index: number;
}

// Kept beside the rule objects rather than in them, so a rule stays exactly what its file says
// (replays compare and serialise rules).
const sources = new WeakMap<object, RuleSource>();

export function tagRuleSource(rule: ScenarioRule | ApiRule, source: RuleSource): void {
  sources.set(rule, source);
}

/** The file and index of a rule the loader read; null for rules built in code. */
export function ruleSource(rule: ScenarioRule | ApiRule): RuleSource | null {
  return sources.get(rule) ?? null;
}
