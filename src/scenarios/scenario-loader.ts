import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseYamlWith } from '../kernel/yaml-source.ts';
import { tagRuleSource } from './rule-source.ts';
import type { RuleSource } from './rule-engine.ts';
import { scenarioFileSchema, type ScenarioFile, type ScenarioRule, type Wallet } from './scenario-schema.ts';

export interface LoadedScenarios {
  files: { path: string; scenario: ScenarioFile }[];
  rules: ScenarioRule[];
  wallets: Wallet[];
}

/** Files and directories (their *.yaml / *.yml, sorted by name) to scenario files, in order. */
export function expandScenarioPaths(paths: readonly string[], cwd = process.cwd()): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const full = resolve(cwd, p);
    let stat;
    try {
      stat = statSync(full);
    } catch {
      throw new Error(`scenario path ${p} does not exist`);
    }
    if (stat.isDirectory()) {
      for (const name of readdirSync(full).sort()) if (/\.ya?ml$/.test(name)) out.push(join(full, name));
    } else out.push(full);
  }
  return out;
}

export function parseScenario(text: string, file: string): ScenarioFile {
  return parseYamlWith(scenarioFileSchema, text, file);
}

/** Loads every file; a bad file throws YamlSourceError naming file:line:column. */
export function loadScenarios(paths: readonly string[], cwd = process.cwd()): LoadedScenarios {
  const files = expandScenarioPaths(paths, cwd).map((path) => ({ path, scenario: parseScenario(readFileSync(path, 'utf8'), path) }));
  // Each rule remembers its file and place, so the requests inspector can name it.
  for (const { path, scenario } of files) {
    const shown = relative(cwd, path);
    scenario.rules.forEach((rule, index) => tagRuleSource(rule, { file: shown.startsWith('..') ? path : shown, index }));
  }
  return { files, rules: files.flatMap((f) => f.scenario.rules), wallets: files.flatMap((f) => f.scenario.wallets) };
}

/** Which file each run of rules came from, for GET /api/v1/sandbox/scenarios (paths relative to cwd). */
export function ruleSources(loaded: Pick<LoadedScenarios, 'files'>, cwd = process.cwd()): RuleSource[] {
  return loaded.files.map((f) => ({ file: relative(cwd, f.path) || f.path, rules: f.scenario.rules.length }));
}
