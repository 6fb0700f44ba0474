import { z } from 'zod';
import { ok } from '../http/envelope.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { RuleEngine } from '../scenarios/rule-engine.ts';
import type { ScenarioRule } from '../scenarios/scenario-schema.ts';
import { envelopeOf } from '../wallet/wallet.schemas.ts';

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

const fileSchema = z.object({ file: z.string().describe('The scenario file: relative to the working directory when inside it, else absolute (the form POST /api/v1/sandbox/replays takes)'), rules: z.array(ruleSchema) });

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
        'Test keys only. Rules are tried in file order; the first that matches a call (and speaks for its operation and provider) answers it and its matched_count goes up. Counts restart when the files are reloaded, and on SQLite when the process restarts; on PostgreSQL the instances sharing the database share them, and they outlive a restart.',
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
