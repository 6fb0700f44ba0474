import { readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { displayPath } from '../kernel/display-path.ts';
import { parseYamlSource, parseYamlWith, pathText, YamlSourceError, type Located, type SourceProblem } from '../kernel/yaml-source.ts';
import { lintScenario, type LintProblem } from './scenario-lint.ts';
import { tagRuleSource } from './rule-source.ts';
import type { RuleSource } from './rule-engine.ts';
import { IDENTIFIER_FIELDS, type ApiRule, type ScenarioFile, type ScenarioRule, type ScenarioSchema, type Wallet } from './scenario-schema.ts';

export interface LoadedScenarios {
  /** Each file, with what `railyard scenarios lint` says of it (load time shows them as warnings). */
  files: { path: string; scenario: ScenarioFile; problems: LintProblem[] }[];
  rules: ScenarioRule[];
  wallets: Wallet[];
  /** The files' `api:` rules, in file order: faults on railyard's own merchant API. */
  apiRules: ApiRule[];
}

/** Files and directories (their *.yaml / *.yml, sorted by name) to scenario files, in order. */
export function expandScenarioPaths(paths: readonly string[], cwd = process.cwd()): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const full = resolve(cwd, p);
    let stat: Stats;
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

// Each function takes the scenario language it reads (scenario-schema.ts's scenarioSchema, for the
// providers the composition root hands down): railyard's own is src/railyard-scenarios.ts's.

export function parseScenario(schema: ScenarioSchema, text: string, file: string): ScenarioFile {
  return parseYamlWith(schema.file, text, file, unquotedIdentifiers);
}

const IDENTIFIERS = new Set<string | number>(IDENTIFIER_FIELDS);

/**
 * Where an identifier sits in a scenario file: a match field (at any depth of all/any/not),
 * bare or under equals, prefix, regex or one_of, and a wallet's msisdn. Answers the field's
 * name, or undefined.
 */
function identifierAt(path: readonly (string | number)[]): string | undefined {
  if (path[0] === 'wallets' && typeof path[1] === 'number' && path[2] === 'msisdn' && path.length === 3) return 'msisdn';
  if (path[0] !== 'rules' || typeof path[1] !== 'number' || path[2] !== 'match') return undefined;
  let i = 3;
  for (;;) {
    if ((path[i] === 'all' || path[i] === 'any') && typeof path[i + 1] === 'number') i += 2;
    else if (path[i] === 'not') i += 1;
    else break;
  }
  const field = path[i];
  if (!IDENTIFIERS.has(field!)) return undefined;
  const rest = path.slice(i + 1);
  const inPredicate =
    rest.length === 0 || (rest.length === 1 && (rest[0] === 'equals' || rest[0] === 'prefix' || rest[0] === 'regex')) || (rest.length === 2 && rest[0] === 'one_of' && typeof rest[1] === 'number');
  return inPredicate ? String(field) : undefined;
}

/**
 * An identifier written as a bare YAML number (`msisdn: 0249990004`) is read as 249990004 and
 * would silently never match; it is refused, quoting the file's own text in the fix.
 */
function unquotedIdentifiers(source: Located): SourceProblem[] {
  return source
    .scalars()
    .filter((s) => !s.quoted && typeof s.value !== 'string' && s.value !== null && identifierAt(s.path) !== undefined)
    .map((s) => {
      const key = s.path.at(-1);
      const fix = typeof key === 'number' ? `"${s.source}"` : `${String(key)}: "${s.source}"`;
      const read = typeof s.value === 'number' && String(s.value) !== s.source ? ` (YAML reads ${s.source} as ${String(s.value)})` : '';
      return {
        path: s.path,
        message: `${pathText(s.path)}: ${s.source} is ${typeof s.value === 'number' ? 'a number' : `not a string`}, but a ${identifierAt(s.path)} is an identifier and must be a string${read}: quote it: ${fix}`,
      };
    });
}

/** Loads every file; a bad file throws YamlSourceError naming file:line:column. */
export function loadScenarios(schema: ScenarioSchema, paths: readonly string[], cwd = process.cwd()): LoadedScenarios {
  const files = expandScenarioPaths(paths, cwd).map((path) => {
    const text = readFileSync(path, 'utf8');
    const shown = displayPath(path, cwd);
    const scenario = parseScenario(schema, text, shown);
    return { path, scenario, problems: lintLoaded(schema, scenario, text, shown) };
  });
  // Each rule remembers its file and place, so the requests inspector can name it.
  for (const { path, scenario } of files) {
    for (const [index, rule] of scenario.rules.entries()) tagRuleSource(rule, { file: displayPath(path, cwd), index });
    for (const [index, rule] of scenario.api.entries()) tagRuleSource(rule, { file: displayPath(path, cwd), index });
  }
  return { files, rules: files.flatMap((f) => f.scenario.rules), wallets: files.flatMap((f) => f.scenario.wallets), apiRules: files.flatMap((f) => f.scenario.api) };
}

function lintLoaded(schema: ScenarioSchema, scenario: ScenarioFile, text: string, file: string): LintProblem[] {
  const source = parseYamlSource(text, file);
  return lintScenario(schema, scenario, file, (path) => source.locate(path));
}

/**
 * `railyard scenarios lint`: each file's problems, a file that does not load giving one error per
 * load problem (file:line:column as the loader reports it).
 */
export function lintScenarioFiles(schema: ScenarioSchema, paths: readonly string[], cwd = process.cwd()): { file: string; problems: LintProblem[] }[] {
  return expandScenarioPaths(paths, cwd).map((path) => {
    const file = displayPath(path, cwd);
    const text = readFileSync(path, 'utf8');
    try {
      return { file, problems: lintLoaded(schema, parseScenario(schema, text, file), text, file) };
    } catch (err) {
      if (!(err instanceof YamlSourceError)) throw err;
      const problems = err.problems.map((problem): LintProblem => {
        const at = /^(.*?):(\d+):(\d+): (.*)$/s.exec(problem);
        return { file, line: Number(at?.[2] ?? 1), column: Number(at?.[3] ?? 1), severity: 'error', code: 'invalid', message: at?.[4] ?? problem, rule: null };
      });
      return { file, problems };
    }
  });
}

/** Which file each run of rules came from, for GET /api/v1/sandbox/scenarios (as displayPath shows them). */
export function ruleSources(loaded: Pick<LoadedScenarios, 'files'>, cwd = process.cwd()): RuleSource[] {
  return loaded.files.map((f) => ({ file: displayPath(f.path, cwd), rules: f.scenario.rules.length, problems: f.problems }));
}
