// railyard contracts: Pact files from the scripted scenarios, and their verification.
//
//   railyard contracts generate [--dir contracts] [--scenarios <dir or files>...] [--check]
//   railyard contracts verify [--dir contracts] [--provider <name>]... [--provider-base-url <url>]
//                             [--key <sk_test_…>] [--secret <signing secret>] [--log-level <level>]
//                             [--reporter default|junit|json] [--output <file>]
//
// generate replays every scripted scenario and rewrites the folder's pact files; with --check it
// generates into a temporary folder instead and fails (exit 1) when that differs from --dir, naming
// the files and the first line that differs: contract drift. verify runs the Pact verifier in a
// child process (verification-worker.ts) and prints its report, then one line per pact file and a
// summary; exit 1 on any mismatch. With --reporter junit or json (docs/ci.md), stdout gets that
// one document and the verifier's report goes to stderr; with --output <file>, the document goes
// to the file and the console shows the default report. Exit 2: usage errors, nothing to
// generate or verify, or a pact file whose provider states name a scenario it does not embed and
// that is not on disk.

import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateContracts, hasScript, scriptedScenarios, type GeneratedPact } from '../contracts/contract-generator.ts';
import { MissingScenarioError, type PactVerification, type VerifyOptions } from '../contracts/contract-verifier.ts';
import { expandScenarioPaths } from '../scenarios/scenario-loader.ts';
import type { CommandIo } from './listen-command.ts';
import { ansiFilter, colourWanted } from './terminal-colour.ts';
import { jsonDocument, junitXml, writeReportFile, type ReporterName, type TestCase, type TestRun } from './test-reporter.ts';

export interface GenerateCommandOptions {
  dir: string;
  scenarios?: string[];
  check?: boolean;
}

export interface VerifyCommandOptions {
  dir: string;
  providers?: string[];
  providerBaseUrl?: string;
  apiKey?: string;
  signingSecret?: string;
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** default: the readable report; junit or json: one document for a CI system. */
  reporter?: ReporterName;
  /** Where the junit or json document goes instead of stdout. */
  output?: string;
}

function describe(p: GeneratedPact, cwd: string): string {
  const parts = [`${p.http} HTTP interaction${p.http === 1 ? '' : 's'}`];
  if (p.messages) parts.push(`${p.messages} message${p.messages === 1 ? '' : 's'}`);
  return `${p.consumer} -> ${p.provider}: ${parts.join(', ')}  (${relative(cwd, p.file) || p.file})`;
}

/** Files that differ between two folders of pact files, each with the first line that differs. */
export function compareFolders(expected: string, actual: string): string[] {
  const list = (dir: string) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort()
      : [];
  const want = list(expected);
  const have = list(actual);
  const problems: string[] = [];
  for (const f of want.filter((f) => !have.includes(f))) problems.push(`${join(actual, f)} is missing: generation makes it`);
  for (const f of have.filter((f) => !want.includes(f))) problems.push(`${join(actual, f)} is not generated any more`);
  for (const f of want.filter((f) => have.includes(f))) {
    const a = readFileSync(join(expected, f), 'utf8').split('\n');
    const b = readFileSync(join(actual, f), 'utf8').split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    if (line === -1 && a.length === b.length) continue;
    const at = line === -1 ? Math.min(a.length, b.length) : line;
    problems.push(`${join(actual, f)} differs at line ${at + 1}:\n    committed: ${(b[at] ?? '(end of file)').trim()}\n    generated: ${(a[at] ?? '(end of file)').trim()}`);
  }
  return problems;
}

export async function runGenerate(options: GenerateCommandOptions, io: CommandIo, cwd = process.cwd()): Promise<0 | 1 | 2> {
  let files: string[];
  try {
    files = options.scenarios?.length ? expandScenarioPaths(options.scenarios, cwd).filter(hasScript) : scriptedScenarios(resolve(cwd, 'scenarios'));
  } catch (err) {
    io.stderr.write(`railyard contracts generate: ${(err as Error).message}\n`);
    return 2;
  }
  if (files.length === 0) {
    io.stderr.write('railyard contracts generate: no scenario file with a script\n');
    return 2;
  }
  const target = resolve(cwd, options.dir);
  const out = options.check ? mkdtempSync(join(tmpdir(), 'railyard-contracts-')) : target;
  try {
    const pacts = await generateContracts({ scenarios: files, dir: out, cwd });
    if (!options.check) {
      for (const p of pacts) io.stdout.write(`${describe(p, cwd)}\n`);
      io.stdout.write(`generated ${pacts.length} pact file${pacts.length === 1 ? '' : 's'} from ${files.length} scenario${files.length === 1 ? '' : 's'} into ${options.dir}\n`);
      return 0;
    }
    const problems = compareFolders(out, target);
    if (problems.length) {
      io.stdout.write(`contract drift: ${options.dir} differs from a fresh generation\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
      io.stdout.write('run `npm run contracts:generate` and commit the result, if the change is meant\n');
      return 1;
    }
    io.stdout.write(`${options.dir} matches a fresh generation (${pacts.length} pact files from ${files.length} scenarios)\n`);
    return 0;
  } catch (err) {
    io.stderr.write(`railyard contracts generate: ${(err as Error).message}\n`);
    return 1;
  } finally {
    if (options.check) rmSync(out, { recursive: true, force: true });
  }
}

/** One line per pact file, the failing interactions with each mismatch, and a summary. */
export function formatVerification(results: readonly PactVerification[]): string {
  const lines: string[] = [];
  let ok = 0;
  let failed = 0;
  for (const r of results) {
    const bad = r.interactions.filter((i) => !i.passed);
    ok += r.interactions.length - bad.length;
    failed += bad.length;
    lines.push(
      `${r.passed ? 'PASS' : 'FAIL'}  ${r.consumer} -> ${r.provider}  ${r.interactions.length - bad.length}/${r.interactions.length} interactions  (${relative(process.cwd(), r.file) || r.file})`,
    );
    if (r.error) lines.push(`      ${r.error}`);
    for (const i of bad) {
      lines.push(`      ✗ ${i.description}`);
      for (const m of i.mismatches) lines.push(`          ${m.path ? `${m.path}: ` : ''}${m.message}`);
    }
  }
  lines.push(`${ok} interactions verified, ${failed} failed${results.some((r) => r.error) ? `, ${results.filter((r) => r.error).length} pact file(s) could not be verified` : ''}`);
  return `${lines.join('\n')}\n`;
}

/** A path relative to cwd when it lies inside it, absolute otherwise. */
function shownPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') ? rel : file;
}

/** The verification as a test run: a suite per pact file, a test case per interaction. */
export function verificationTestRun(results: readonly PactVerification[], cwd = process.cwd(), time?: number): TestRun {
  const suites = results.map((r) => {
    const name = `${r.consumer} -> ${r.provider}`;
    const cases: TestCase[] = r.interactions.map((i) => {
      const mismatches = i.mismatches.map((m) => `${m.path ? `${m.path}: ` : ''}${m.message}`);
      return i.passed
        ? { name: i.description, classname: name, status: 'passed' }
        : { name: i.description, classname: name, status: 'failed', message: mismatches[0] ?? 'failed', details: mismatches.join('\n') };
    });
    if (r.error) cases.push({ name: 'verification', classname: name, status: 'error', message: r.error });
    return { name, file: shownPath(r.file, cwd), cases };
  });
  return { name: 'railyard contracts verify', suites, ...(time !== undefined ? { time } : {}) };
}

/**
 * Runs verifyContracts in a child process (verification-worker.ts, see why there), handing each
 * chunk of the verifier's own report to `report` as it comes.
 */
export function verifyInWorker(options: VerifyOptions, report: (chunk: string) => void): Promise<PactVerification[]> {
  const here = fileURLToPath(import.meta.url);
  const worker = join(dirname(here), `verification-worker${extname(here)}`);
  // Run from TypeScript sources (tsx), the child needs the loader too.
  const loader = extname(here) === '.ts' && !process.execArgv.some((a) => a.includes('tsx')) ? ['--import', import.meta.resolve('tsx')] : [];
  const child = fork(worker, [], {
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...loader, '--disable-warning=DEP0060'],
  });
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', report);
  return new Promise((done, fail) => {
    let answer: { results?: PactVerification[]; error?: string; missingScenario?: boolean } | undefined;
    child.on('message', (message) => (answer = message as typeof answer));
    child.on('error', fail);
    // close: the process has exited and its stdout is drained, so the report is complete.
    child.on('close', (code, signal) => {
      if (answer?.results) done(answer.results);
      else if (answer?.missingScenario) fail(new MissingScenarioError(answer.error));
      else fail(new Error(answer?.error ?? `the verifier stopped (${signal ?? `exit code ${code}`}) before it answered`));
    });
    child.send(options);
  });
}

export async function runVerify(options: VerifyCommandOptions, io: CommandIo, cwd = process.cwd()): Promise<0 | 1 | 2> {
  const dir = resolve(cwd, options.dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory() || !readdirSync(dir).some((f) => f.endsWith('.json'))) {
    io.stderr.write(`railyard contracts verify: no pact files in ${options.dir} (run railyard contracts generate)\n`);
    return 2;
  }
  const { reporter = 'default', output, ...verify } = options;
  // The verifier's report goes where the readable report goes: stdout, unless the document takes it.
  const readable = reporter === 'default' || output !== undefined ? io.stdout : io.stderr;
  const verifierReport = ansiFilter((text) => readable.write(text), colourWanted(readable as { isTTY?: boolean }));
  let results: PactVerification[];
  const started = performance.now();
  try {
    results = await verifyInWorker({ ...verify, dir, cwd }, (chunk) => verifierReport.write(chunk));
  } catch (err) {
    io.stderr.write(`railyard contracts verify: ${(err as Error).message}\n`);
    return err instanceof MissingScenarioError ? 2 : 1;
  } finally {
    verifierReport.end();
  }
  if (results.length === 0) {
    io.stderr.write(`railyard contracts verify: no pact file in ${options.dir} matches${options.providerBaseUrl ? ' (a running railyard is verified against merchant-railyard only)' : ''}\n`);
    return 2;
  }
  readable.write(`\n${formatVerification(results)}`);
  if (reporter !== 'default') {
    const run = verificationTestRun(results, cwd, (performance.now() - started) / 1000);
    const pacts = results.map(({ report: _report, ...pact }) => ({ ...pact, file: shownPath(pact.file, cwd) }));
    const document = reporter === 'junit' ? junitXml(run) : jsonDocument(run, { pacts });
    if (output === undefined) io.stdout.write(document);
    else writeReportFile(resolve(cwd, output), document);
  }
  return results.every((r) => r.passed) ? 0 : 1;
}
