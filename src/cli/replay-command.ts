// railyard replay: runs the scripts of scenario files, each in its own in-process sandbox on a
// virtual clock, and checks their expectations.
//
//   railyard replay <files or dirs...> [--json] [--seed N]
//
// Directories expand to their *.yaml / *.yml files, sorted by name. Files without a `script` are
// listed as skipped (no script) and do not fail; a file that does not load fails with its
// file:line:column problems. stdout gets each file's timeline and checks, then per-file PASS /
// FAIL / SKIP lines and `N passed, M failed`; stderr gets progress (`[3/10] file ... PASS`). With
// --json, stdout gets one JSON document (files, timelines, steps, summary) and stderr nothing.
//
// Exit codes: 0 every script passed, 1 any failed (or a file is invalid), 2 usage errors.

import { expandScenarioPaths } from '../scenarios/scenario-loader.ts';
import { formatJson, formatResult, formatSummary } from '../replay/replay-report.ts';
import type { ReplayResult } from '../replay/replay-result.ts';
import { displayPath } from '../kernel/display-path.ts';
import { replayFile } from '../replay/replay-runner.ts';
import type { CommandIo } from './listen-command.ts';

export interface ReplayCommandOptions {
  json?: boolean;
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

  const results: ReplayResult[] = [];
  for (const [i, file] of files.entries()) {
    if (!options.json) io.stderr.write(`[${i + 1}/${files.length}] ${displayPath(file, cwd)} ... `);
    const result = await replayFile(file, {
      cwd,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    results.push(result);
    if (!options.json) {
      io.stderr.write(`${result.status === 'passed' ? 'PASS' : result.status === 'skipped' ? 'skipped (no script)' : result.status === 'invalid' ? 'FAIL (invalid)' : 'FAIL'}\n`);
      io.stdout.write(formatResult(result) + '\n');
    }
  }
  io.stdout.write(options.json ? formatJson(results) : formatSummary(results));
  return results.every((r) => r.passed) ? 0 : 1;
}
