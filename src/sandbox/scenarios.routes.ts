import { z } from 'zod';
import { ok, envelopeOf } from '../http/envelope.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { RuleEngine } from '../scenarios/rule-engine.ts';
import type { ScenarioRule } from '../scenarios/scenario-schema.ts';

const OPERATIONS = ['collect', 'payout', 'resolve'] as const;

const ruleSchema = z.object({
  index: z.number().int().describe('Position in its file, from 0'),
  name: z.string(),
  description: z.string().nullable(),
  provider: z.string().describe('The providers the rule answers for, comma-separated ("any" covers the others)'),
  operations: z.array(z.enum(OPERATIONS)),
  match: z.record(z.string(), z.unknown()).nullable().describe('The match block as loaded; null for a default rule'),
  default: z.boolean(),
  matched_count: z.number().int().describe('Provider calls this rule answered since the rules were loaded (or the scenarios reset)'),
});

const warningSchema = z.object({
  line: z.number().int().describe('1-based line in the file'),
  column: z.number().int(),
  severity: z.enum(['error', 'warning']).describe('error: the rule (or part of it) can never match; warning: it matches less than it says, or a field does nothing'),
  code: z.enum(['unmatchable', 'ported-network', 'shadowed', 'no-effect']),
  message: z.string(),
  rule_index: z.number().int().nullable().describe('The rule it is about (its index in rules); null for the file'),
});

const fileSchema = z.object({
  file: z.string().describe('The scenario file: relative to the working directory when inside it, else absolute (the form POST /api/v1/sandbox/replays takes)'),
  warnings: z.array(warningSchema).describe('What `railyard scenarios lint` reports for the file, checked when it was loaded: the file loads and its rules run all the same'),
  rules: z.array(ruleSchema),
});

type WarningCode = z.infer<typeof warningSchema>['code'];

function providersOf(rule: ScenarioRule): string {
  const names = new Set<string>();
  for (const op of OPERATIONS) for (const provider of Object.keys(rule[op] ?? {})) names.add(provider);
  return [...names].join(', ');
}

/** GET /api/v1/sandbox/scenarios: the loaded scenario files, their rules, and how often each matched. */
export function scenarioRoutes(deps: { scenarios: RuleEngine }): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/scenarios',
      operationId: 'sandboxListScenarios',
      summary: 'The scenario files loaded, with their rules and how many provider calls each rule answered',
      description:
        'Test keys only. Each file carries the warnings `railyard scenarios lint` reports for it (rules that can never match, rules an earlier one always answers first, fields that do nothing). Rules are tried in file order; the first that matches a call (and speaks for its operation and provider) answers it and its matched_count goes up. Counts restart when the files are reloaded, and on SQLite when the process restarts; on PostgreSQL the instances sharing the database share them, and they outlive a restart.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'The files in load order', schema: envelopeOf(z.array(fileSchema)) },
      errors: ['forbidden'],
      handler: async () => {
        // Match counts as the fleet has them, where several instances share the database.
        await deps.scenarios.sync();
        return {
          status: 200,
          body: ok(
            'Scenarios',
            deps.scenarios.describe().map((group) => ({
              file: group.file,
              warnings: group.problems.map((p) => ({
                line: p.line,
                column: p.column,
                severity: p.severity,
                code: p.code as WarningCode /* a loaded file is never invalid */,
                message: p.message,
                rule_index: p.rule,
              })),
              rules: group.rules.map(({ index, rule, matchedCount }) => ({
                index,
                name: rule.name,
                description: rule.description ?? null,
                provider: providersOf(rule),
                operations: OPERATIONS.filter((op) => rule[op] !== undefined),
                match: (rule.match as Record<string, unknown> | undefined) ?? null,
                default: rule.default === true,
                matched_count: matchedCount,
              })),
            })),
          ),
        };
      },
    }),
  ];
}
