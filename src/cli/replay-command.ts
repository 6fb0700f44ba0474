// railyard replay: runs the scripts of scenario files, each in its own in-process sandbox on a
// virtual clock, and checks their expectations.
//
//   railyard replay <files or dirs...> [--reporter default|junit|json] [--output <file>] [--json] [--seed N]
//
// Directories expand to their *.yaml / *.yml files, sorted by name. Files without a `script` are
// listed as skipped (no script) and do not fail; a file that does not load fails with its
// file:line:column problems. stdout gets each file's timeline and checks, then per-file PASS /
// FAIL / SKIP lines and `N passed, M failed`; stderr gets progress (`[3/10] file ... PASS`). With
// --reporter json (or its alias --json) or junit, stdout gets that one document instead and stderr
// nothing; with --output <file> the document goes to the file, and the console shows the default
// report. The documents are described in docs/scenarios.md#replaying-in-ci.
//
// Exit codes: 0 every script passed, 1 any failed (or a file is invalid), 2 usage errors, or no
// file held a script (nothing was tested, as a test runner that finds no test).

import { dirname, resolve } from 'node:path';
import { expandScenarioPaths } from '../scenarios/scenario-loader.ts';
import { formatResult, formatSummary, summarise } from '../replay/replay-report.ts';
import type { ReplayResult } from '../replay/replay-result.ts';
import { displayPath } from '../kernel/display-path.ts';
import { replayFile } from '../replay/replay-runner.ts';
import type { CommandIo } from './listen-command.ts';
import { jsonDocument, junitXml, writeReportFile, type ReporterName, type TestCase, type TestRun } from './test-reporter.ts';

export interface ReplayCommandOptions {
  /** default: the readable report; junit or json: one document for a CI system. */
  reporter?: ReporterName;
  /** Where the junit or json document goes instead of stdout. */
  output?: string;
  /** Overrides each file's replay.seed. */
  seed?: number;
  /** Real-time limit per script. */
  timeoutMs?: number;
}

/** `--seed` text to a seed, or a complaint. */
export function parseSeed(text: string | undefined): number | string | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,10}$/.test(text) || Number(text) > 2 ** 32 - 1) return `--seed must be a whole number from 0 to ${2 ** 32 - 1}, got ${JSON.stringify(text)}`;
  return Number(text);
}

export async function runReplay(paths: readonly string[], options: ReplayCommandOptions, io: CommandIo, cwd = process.cwd()): Promise<0 | 1 | 2> {
  if (paths.length === 0) {
    io.stderr.write('railyard replay: name at least one scenario file or directory\n');
    return 2;
  }
  let files: string[];
  try {
    files = expandScenarioPaths(paths, cwd);
  } catch (err) {
    io.stderr.write(`railyard replay: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  if (files.length === 0) {
    io.stderr.write(`railyard replay: no *.yaml or *.yml files in ${paths.join(', ')}\n`);
    return 2;
  }

  const reporter = options.reporter ?? 'default';
  // The console shows the readable report unless the document takes stdout.
  const readable = reporter === 'default' || options.output !== undefined;
  const results: ReplayResult[] = [];
  const times: number[] = [];
  for (const [i, file] of files.entries()) {
    if (readable) io.stderr.write(`[${i + 1}/${files.length}] ${displayPath(file, cwd)} ... `);
    const started = performance.now();
    const result = await replayFile(file, {
      cwd,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    times.push((performance.now() - started) / 1000);
    results.push(result);
    if (readable) {
      io.stderr.write(`${result.status === 'passed' ? 'PASS' : result.status === 'skipped' ? 'skipped (no script)' : result.status === 'invalid' ? 'FAIL (invalid)' : 'FAIL'}\n`);
      io.stdout.write(`${formatResult(result)}\n`);
    }
  }
  if (readable) io.stdout.write(formatSummary(results));
  if (reporter !== 'default') {
    const run = replayTestRun(results, times);
    const document = reporter === 'junit' ? junitXml(run) : jsonDocument(run, { files: results });
    if (options.output === undefined) io.stdout.write(document);
    else writeReportFile(resolve(cwd, options.output), document);
  }
  const summary = summarise(results);
  if (summary.passed + summary.failed === 0) {
    io.stderr.write(`railyard replay: no script found in ${paths.join(', ')}: nothing was tested (a file needs a \`script:\` to replay; see docs/scenarios.md)\n`);
    return 2;
  }
  return results.every((r) => r.passed) ? 0 : 1;
}

/** The replay as a test run: one test case per file, in one suite. */
export function replayTestRun(results: readonly ReplayResult[], times: readonly number[] = []): TestRun {
  const cases = results.map((r, i): TestCase => {
    const time = times[i] !== undefined ? { time: times[i] } : {};
    const base = { name: r.name ? `${r.file}: ${r.name}` : r.file, classname: dirname(r.file), ...time };
    if (r.status === 'passed') return { ...base, status: 'passed' };
    if (r.status === 'skipped') return { ...base, status: 'skipped', message: 'no script' };
    if (r.status === 'invalid')
      return { ...base, status: 'error', message: `invalid scenario file: ${r.failures[0]?.message.split('\n')[0] ?? ''}`, details: r.failures.map((f) => f.message).join('\n') };
    return { ...base, status: 'failed', message: r.failures[0]?.label ?? 'failed', details: formatResult(r) };
  });
  const time = times.reduce((a, b) => a + b, 0);
  return { name: 'railyard replay', suites: [{ name: 'railyard replay', cases, time }], time };
}
