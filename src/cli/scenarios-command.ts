import { formatLintProblem, type LintProblem } from '../scenarios/scenario-lint.ts';
import { configuredScenarioPaths, parseCommandArgs, usageError } from './cli-support.ts';
import { loadConfig } from '../railyard-config.ts';
import { lintScenarioFiles } from '../railyard-scenarios.ts';

interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export interface LintOptions {
  /** Warnings count as errors. */
  strict: boolean;
  reporter: 'text' | 'json';
  cwd?: string;
}

/**
 * Lints scenario files: 0 when clean or only warnings, 1 on errors (and on warnings with
 * --strict), 2 when a path does not exist.
 */
export function runLint(paths: readonly string[], options: LintOptions, io: Io): number {
  let files: ReturnType<typeof lintScenarioFiles>;
  try {
    files = lintScenarioFiles(paths, options.cwd);
  } catch (err) {
    io.stderr.write(`railyard scenarios lint: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  if (!files.length) {
    io.stderr.write(`railyard scenarios lint: no scenario files (*.yaml, *.yml) in ${paths.join(' ')}\n`);
    return 2;
  }
  const graded = files.map((f) => ({ file: f.file, problems: f.problems.map((p): LintProblem => (options.strict ? { ...p, severity: 'error' } : p)) }));
  const all = graded.flatMap((f) => f.problems);
  const errors = all.filter((p) => p.severity === 'error').length;
  const warnings = all.length - errors;
  const passed = errors === 0;
  if (options.reporter === 'json') {
    io.stdout.write(`${JSON.stringify({ passed, strict: options.strict, errors, warnings, files: graded }, null, 2)}\n`);
  } else {
    for (const p of all) io.stdout.write(`${formatLintProblem(p)}\n`);
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
    io.stdout.write(
      `${passed ? 'PASS' : 'FAIL'}  ${plural(files.length, 'file')}: ${plural(errors, 'error')}, ${plural(warnings, 'warning')}${options.strict ? ' (--strict: warnings are errors)' : ''}\n`,
    );
  }
  return passed ? 0 : 1;
}

/** `railyard scenarios lint [paths...] [--strict] [--reporter text|json]`. */
export async function scenariosMain(args: string[], usage: string): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') return (void process.stdout.write(usage), 0);
  if (sub !== 'lint') return usageError('scenarios', `say lint${sub ? `, not ${JSON.stringify(sub)}` : ''}`, usage);
  const parsed = parseCommandArgs('scenarios lint', usage, {
    args: rest,
    strict: true,
    allowPositionals: true,
    options: { strict: { type: 'boolean' }, reporter: { type: 'string', default: 'text' }, help: { type: 'boolean', short: 'h' } },
  });
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) return (void process.stdout.write(usage), 0);
  if (values.reporter !== 'text' && values.reporter !== 'json') {
    return usageError('scenarios lint', `--reporter is text or json, not ${JSON.stringify(values.reporter)}`, usage);
  }
  const paths = positionals.length ? positionals : configuredScenarioPaths(loadConfig().scenarios);
  if (!paths.length) return usageError('scenarios lint', 'no scenario files configured: name the files or directories to lint', usage);
  return runLint(paths, { strict: values.strict === true, reporter: values.reporter }, { stdout: process.stdout, stderr: process.stderr });
}
