import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDERS } from './providers/index.ts';
import * as jsonSchema from './scenarios/scenario-json-schema.ts';
import * as lint from './scenarios/scenario-lint.ts';
import * as loader from './scenarios/scenario-loader.ts';
import { type ScenarioFile, type ScenarioRule, type ScenarioRuleInput, scenarioSchema } from './scenarios/scenario-schema.ts';

// railyard's scenario language: scenarios/'s schema, loader, lint and JSON Schema for the
// providers of src/providers/index.ts. The composition root hands their ids down here, so
// scenarios/, below the providers, imports none.

/** The scenario language: a rule names behaviours for each provider of the list, or `any`. */
export const SCENARIO_SCHEMA = scenarioSchema(PROVIDERS.map((p) => p.id));

/** The providers a rule names behaviours for: every provider of the list, and `any` for those not named. */
export const SCENARIO_PROVIDERS = SCENARIO_SCHEMA.providers;

/** A rule written as in YAML (bare values, single behaviours) to its normalised form. */
export function parseRule(input: ScenarioRuleInput): ScenarioRule {
  return SCENARIO_SCHEMA.rule.parse(input);
}

/** One scenario file's text; a bad file throws YamlSourceError naming file:line:column. */
export function parseScenario(text: string, file: string): ScenarioFile {
  return loader.parseScenario(SCENARIO_SCHEMA, text, file);
}

/** Loads every file; a bad file throws YamlSourceError naming file:line:column. */
export function loadScenarios(paths: readonly string[], cwd = process.cwd()): loader.LoadedScenarios {
  return loader.loadScenarios(SCENARIO_SCHEMA, paths, cwd);
}

/** `railyard scenarios lint`: each file's problems (one error per load problem of a file that does not load). */
export function lintScenarioFiles(paths: readonly string[], cwd = process.cwd()): { file: string; problems: lint.LintProblem[] }[] {
  return loader.lintScenarioFiles(SCENARIO_SCHEMA, paths, cwd);
}

/** Every problem in one parsed scenario file, located through `locate`. */
export function lintScenario(scenario: ScenarioFile, file: string, locate: lint.Locate): lint.LintProblem[] {
  return lint.lintScenario(SCENARIO_SCHEMA, scenario, file, locate);
}

/** The JSON Schema of scenario files (scenarios/scenario.schema.json). */
export function scenarioJsonSchema(): Record<string, unknown> {
  return jsonSchema.scenarioJsonSchema(SCENARIO_SCHEMA);
}

/** scenarios/scenario.schema.json's text, as the generator makes it now. */
export function scenarioJsonSchemaText(): string {
  return jsonSchema.scenarioJsonSchemaText(SCENARIO_SCHEMA);
}

// `npm run scenarios:schema [path]` writes it (by default next to the shipped scenarios).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const written = jsonSchema.writeScenarioJsonSchema(SCENARIO_SCHEMA, process.argv[2] ? resolve(process.argv[2]) : jsonSchema.SCENARIO_SCHEMA_PATH);
  process.stdout.write(`wrote ${written}\n`);
}
