// npm run chaos -- [options]
//
// Crash-recovery harness, run on demand (never in CI). Each trial starts `railyard serve` on a
// fresh SQLite file and a free loopback port, loads it with concurrent charges and signed
// transfers, kills it at a random moment (SIGKILL mostly, SIGTERM sometimes), restarts it on the
// same database and port, retries every unanswered request byte-identically, replays a sample of
// answered ones, settles the virtual clock and reconciles what the clients were told against the
// API and the database: nothing lost, nothing duplicated, nothing orphaned, no 5xx, no 409 after
// the restart, a balanced ledger, no key left in flight. Then it kills the server again in the
// middle of a background clock advance (POST /api/v1/sandbox/clock/advance with "async": true,
// once a random share of its jobs ran), restarts it, and checks the clock did not go back behind
// a job that ran, no event was emitted twice, and every job due by the final clock ran.
// Exit 1 when any trial shows a problem.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { formatFinding } from './openapi-fuzzer/format-finding.ts';
import { runFuzz } from './openapi-fuzzer/run-fuzz.ts';
import { storeDigest } from './openapi-fuzzer/store-digest.ts';
import type { FindingKind, Findings } from './reconcile.ts';
import { runFaultTrial, type FaultTrialResult } from './run-fault-trial.ts';
import { runFleetTrial, type FleetTrialResult } from './run-fleet-trial.ts';
import { runTrial, trialFailed, type TrialResult } from './run-trial.ts';
import { freePort, killAllStarted, RailyardProcess, REPO_ROOT, SANDBOX_KEY, SANDBOX_SECRET } from './spawn-server.ts';
import { wholeNumberOption } from './process-group.ts';

const USAGE = `npm run chaos -- [options]

  --trials N            trials to run (default 10)
  --clients N           concurrent clients (default 16)
  --requests N          charges and transfers per trial (default 160, at most 5000)
  --seed N              seed of the first trial; trial i uses seed + i (default: random, printed)
  --sigterm-ratio R     share of trials killed with SIGTERM instead of SIGKILL, 0..1 (default 0.25)
  --keep                keep the temp dirs (database, server log, requests) of failing trials
  --keep-all            keep every trial's temp dir, passing or not
  --fuzz N              also send N requests from the OpenAPI fuzzer (chaos/openapi-fuzzer/) to one fresh server
  --rail-timeout-ms N   real-time provider timeout; the timeout numbers hold requests this long (default 2000)
  --settle-seconds N    virtual seconds to advance after the restart (default 900)
  --fund N              pesewas put in the wallet before the load (default 50000000)
  --sample N            answered requests re-sent after the restart (default 20)
  --scenarios PATH      scenario file or dir for the servers (default scenarios/sandbox.yaml)
  --instances N         fleet mode when N > 1: N servers on one PostgreSQL database (a throwaway
                        cluster, or RAILYARD_TEST_PG_URL's server), requests round-robined across
                        them, one killed and restarted at a time; adds webhook and job checks (default 1)
  --kills N             fleet mode: kills (and restarts) per trial (default 1)
  --clock system        the servers run on the system clock (default virtual): callbacks come in real
                        time while the clients load, and one instance on a SQLite file runs its jobs on
                        its job thread; a further kill lands while they are settled, the trial waits
                        (real time) until every charge and transfer has settled; adds the webhook and
                        job checks of the fleet mode, on one server or (with --instances) on a fleet
  --faults              fault mode: no kill; the server injects faults into its own API (lost answers
                        after the commit, 5xx before and after it, cut connections, slow answers, 429s:
                        POST /api/v1/sandbox/faults) and the clients retry through them (docs/retries.md)
  -h, --help
`;

const int = (name: string, value: string | undefined, fallback: number, min: number, max: number) => wholeNumberOption(name, value, fallback, min, max, usage);

function usage(message: string): never {
  process.stderr.write(`chaos: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseOptions() {
  const parsed = (() => {
    try {
      return parseArgs({
        strict: true,
        allowPositionals: false,
        options: {
          trials: { type: 'string' },
          clients: { type: 'string' },
          requests: { type: 'string' },
          seed: { type: 'string' },
          'sigterm-ratio': { type: 'string' },
          keep: { type: 'boolean', default: false },
          'keep-all': { type: 'boolean', default: false },
          fuzz: { type: 'string' },
          'rail-timeout-ms': { type: 'string' },
          'settle-seconds': { type: 'string' },
          fund: { type: 'string' },
          sample: { type: 'string' },
          scenarios: { type: 'string' },
          instances: { type: 'string' },
          kills: { type: 'string' },
          faults: { type: 'boolean', default: false },
          clock: { type: 'string' },
          help: { type: 'boolean', short: 'h', default: false },
        },
      });
    } catch (err) {
      return usage(err instanceof Error ? err.message : String(err));
    }
  })();
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const ratioText = v['sigterm-ratio'];
  const ratio = ratioText === undefined ? 0.25 : Number(ratioText);
  if (ratioText !== undefined && (!/^\d*\.?\d+$/.test(ratioText) || ratio < 0 || ratio > 1)) usage(`--sigterm-ratio must be a number from 0 to 1, got ${JSON.stringify(ratioText)}`);
  const clock = v.clock ?? 'virtual';
  if (clock !== 'virtual' && clock !== 'system') usage(`--clock must be virtual or system, got ${JSON.stringify(clock)}`);
  if (clock === 'system' && v.faults === true) usage('--faults runs on the virtual clock (a 429 is honoured by advancing it): leave out --clock system');
  return {
    trials: int('trials', v.trials, 10, 0, 10_000),
    clients: int('clients', v.clients, 16, 1, 256),
    requests: int('requests', v.requests, 160, 1, 5_000),
    seed: int('seed', v.seed, Math.floor(Math.random() * 1_000_000), 0, 2 ** 31 - 1),
    sigtermRatio: ratio,
    keep: v.keep === true || v['keep-all'] === true,
    keepAll: v['keep-all'] === true,
    fuzz: v.fuzz === undefined ? 0 : int('fuzz', v.fuzz, 0, 1, 1_000_000),
    railTimeoutMs: int('rail-timeout-ms', v['rail-timeout-ms'], 2_000, 10, 120_000),
    settleSeconds: int('settle-seconds', v['settle-seconds'], 900, 0, 86_400),
    fundAmount: int('fund', v.fund, 50_000_000, 1, 1_000_000_000_000),
    sampleSize: int('sample', v.sample, 20, 0, 5_000),
    scenarios: resolve(REPO_ROOT, v.scenarios ?? 'scenarios/sandbox.yaml'),
    requestTimeoutMs: 60_000,
    instances: int('instances', v.instances, 1, 1, 8),
    kills: int('kills', v.kills, 1, 0, 20),
    faults: v.faults === true,
    clock: clock as 'virtual' | 'system',
  };
}

interface Column {
  title: string;
  cell: (r: TrialResult) => string | number;
  total: (rs: TrialResult[]) => string | number;
}

/** Columns that count a kind of finding (one finding per object, answer line or key). */
function counts(kinds: [string, Exclude<FindingKind, 'warnings' | 'conflictsAfterRestart'>][]): Column[] {
  return kinds.map(([title, kind]) => ({ title, cell: (r) => r.findings[kind].length, total: (rs) => sum(rs, (r) => r.findings[kind].length) }));
}

const COLUMNS: Column[] = [
  { title: 'trial', cell: (r) => `${r.trial} (seed ${r.seed})`, total: () => 'total' },
  { title: 'requests', cell: (r) => r.requests, total: (rs) => sum(rs, (r) => r.requests) },
  { title: 'acknowledged', cell: (r) => r.acknowledged, total: (rs) => sum(rs, (r) => r.acknowledged) },
  { title: 'of which 502', cell: (r) => r.unavailable, total: (rs) => sum(rs, (r) => r.unavailable) },
  {
    title: 'killed with',
    cell: (r) => `${r.killedWith} after ${r.startedBeforeKill}`,
    total: (rs) => `${rs.filter((r) => r.killedWith === 'SIGKILL').length}×KILL ${rs.filter((r) => r.killedWith === 'SIGTERM').length}×TERM`,
  },
  { title: 'unanswered at kill', cell: (r) => r.unansweredAtKill, total: (rs) => sum(rs, (r) => r.unansweredAtKill) },
  { title: 'retried', cell: (r) => r.retried, total: (rs) => sum(rs, (r) => r.retried) },
  { title: 'replayed', cell: (r) => r.replaySampled, total: (rs) => sum(rs, (r) => r.replaySampled) },
  ...counts([
    ['lost', 'lost'],
    ['duplicated', 'duplicated'],
    ['orphaned', 'orphaned'],
    ['5xx', 'serverErrors'],
  ]),
  {
    title: '409 after restart',
    cell: (r) => conflictCell(r.findings),
    total: (rs) => `${sum(rs, (r) => r.findings.conflictAnswers)} (${sum(rs, (r) => r.findings.conflictsAfterRestart.length)} keys)`,
  },
  ...counts([
    ['401', 'unauthorized'],
    ['replay ≠', 'replayMismatches'],
    ['keys in flight', 'inFlightKeys'],
    ['never answered', 'unansweredAtEnd'],
  ]),
  ...counts([
    ['webhooks twice', 'webhookDuplicates'],
    ['jobs twice', 'jobsTwice'],
  ]),
  { title: 'advance killed', cell: (r) => r.advanceKill ?? '-', total: (rs) => `${rs.filter((r) => r.advanceKill?.includes(' at ')).length} mid-advance` },
  ...counts([['advance', 'advance']]),
  {
    title: 'ledger balanced',
    cell: (r) => (r.error ? '?' : r.findings.ledger.length ? `no (${r.findings.ledger.length})` : 'yes'),
    total: (rs) => (rs.every((r) => !r.error && !r.findings.ledger.length) ? 'yes' : 'no'),
  },
  { title: 'result', cell: (r) => (r.error ? 'ERROR' : trialFailed(r) ? 'FAIL' : 'ok'), total: (rs) => `${rs.filter(trialFailed).length} failed` },
];

/** Fleet mode's own figures, one row per trial. */
function fleetTable(results: FleetTrialResult[]): string {
  const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  const kills = (r: FleetTrialResult) =>
    r.fleet.kills
      .map(
        (k) =>
          `#${k.instance} ${k.signal === 'SIGKILL' ? 'KILL' : 'TERM'} @${(k.at / 1000).toFixed(1)}s down ${(k.downMs / 1000).toFixed(1)}s${k.unsettled === undefined ? '' : ` (${k.unsettled} unsettled)`}`,
      )
      .join(', ') || '-';
  return [
    row(['trial', 'instances', 'sends per instance', 'kills', 'events', 'webhooks received', 'at-least-once retries', 'webhooks twice', 'webhooks lost', 'undelivered events', 'jobs twice']),
    row(Array(11).fill('---')),
    ...results.map((r) =>
      row([
        r.trial,
        r.fleet.instances,
        r.fleet.sendsPerInstance.join(' / '),
        kills(r),
        r.fleet.events,
        r.fleet.receipts,
        r.fleet.atLeastOnceRetries,
        r.findings.webhookDuplicates.length,
        r.fleet.lostWebhooks,
        r.fleet.undeliveredEvents,
        r.findings.jobsTwice.length,
      ]),
    ),
  ].join('\n');
}

/** Fault mode: how often each fault fired, per trial and in all. */
function faultTable(results: FaultTrialResult[]): string {
  const names = [...new Set(results.flatMap((r) => r.faults.map((f) => f.name)))];
  const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  const fired = (r: FaultTrialResult, name: string) => r.faults.filter((f) => f.name === name).reduce((n, f) => n + f.fired, 0);
  return [
    row(['fault (fired)', ...results.map((r) => `trial ${r.trial}`), 'total']),
    row(Array(results.length + 2).fill('---')),
    ...names.map((name) => row([name, ...results.map((r) => fired(r, name)), results.reduce((n, r) => n + fired(r, name), 0)])),
  ].join('\n');
}

/** 409 answers after the restart, and how many requests (keys) got them. */
function conflictCell(f: Findings): string {
  return f.conflictAnswers ? `${f.conflictAnswers} (${f.conflictsAfterRestart.length} keys)` : '0';
}

function sum(rs: TrialResult[], f: (r: TrialResult) => number): number {
  return rs.reduce((s, r) => s + f(r), 0);
}

function table(results: TrialResult[]): string {
  const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [row(COLUMNS.map((c) => c.title)), row(COLUMNS.map(() => '---')), ...results.map((r) => row(COLUMNS.map((c) => c.cell(r)))), row(COLUMNS.map((c) => `**${c.total(results)}**`))].join('\n');
}

const LABELS: Record<FindingKind, string> = {
  lost: 'lost',
  duplicated: 'duplicated',
  orphaned: 'orphaned',
  serverErrors: '5xx',
  conflictsAfterRestart: '409 after restart',
  unauthorized: '401',
  replayMismatches: 'replay mismatch',
  inFlightKeys: 'keys left in flight',
  unansweredAtEnd: 'never answered',
  ledger: 'ledger',
  advance: 'kill during a clock advance',
  webhookDuplicates: 'webhooks delivered twice',
  jobsTwice: 'work run twice (a job or an interrupted request recovered while it still ran)',
  warnings: 'warnings (not failures)',
};
const MAX_LINES = 8;

function details(r: TrialResult): string {
  const out: string[] = [`### trial ${r.trial} (seed ${r.seed}, ${r.killedWith})${r.kept ? ` — kept in ${r.dir}` : ''}`];
  if (r.error) out.push(`- **error**: ${r.error}`);
  for (const kind of Object.keys(LABELS) as FindingKind[]) {
    const lines = r.findings[kind];
    if (!lines.length) continue;
    out.push(`- **${LABELS[kind]}** (${lines.length}):`);
    for (const line of lines.slice(0, MAX_LINES)) out.push(`  - ${line}`);
    if (lines.length > MAX_LINES) out.push(`  - … and ${lines.length - MAX_LINES} more`);
  }
  if (r.logErrors.length && trialFailed(r)) {
    out.push(`- **server log errors** (${r.logErrors.length} distinct):`);
    for (const line of r.logErrors.slice(0, MAX_LINES)) out.push(`  - \`${line.slice(0, 400)}\``);
  }
  return out.join('\n');
}

/**
 * --fuzz: runFuzz (chaos/openapi-fuzzer/) against one fresh server, with a digest of its
 * database so that a request answered 4xx is checked to change nothing.
 */
async function fuzz(requests: number, seed: number, keep: boolean): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-chaos-fuzz-'));
  const dbPath = join(dir, 'railyard.db');
  const port = await freePort();
  const server = await RailyardProcess.start({
    port,
    dbPath,
    seed,
    logFile: join(dir, 'server.log'),
    railTimeoutMs: 2_000,
    scenarios: resolve(REPO_ROOT, 'scenarios/sandbox.yaml'),
  });
  // A second, read-only connection to the server's WAL database sees each commit as it lands.
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const reader = {
    get: async <T>(sql: string, params: SQLInputValue[] = []) => db.prepare(sql).get(...params) as T | undefined,
    all: async <T>(sql: string, params: SQLInputValue[] = []) => db.prepare(sql).all(...params) as T[],
  };
  let passed = false;
  try {
    const report = await runFuzz({
      baseUrl: `http://127.0.0.1:${port}`,
      key: SANDBOX_KEY,
      secret: SANDBOX_SECRET,
      requests,
      seed,
      digest: storeDigest(reader),
      onProgress: (sent, found) => process.stderr.write(`fuzz: ${sent}/${requests} sent, ${found} distinct finding(s)\n`),
    });
    passed = report.findings.length === 0;
    process.stdout.write(`\n## fuzz: ${report.sent} request(s), seed ${report.seed}, ${report.findings.length} distinct finding(s)\n\n`);
    process.stdout.write(`statuses: ${JSON.stringify(report.byStatus)}\n`);
    for (const finding of report.findings) process.stdout.write(`\n${formatFinding(finding)}\n`);
  } finally {
    db.close();
    await server.kill('SIGTERM');
    if (passed || !keep) rmSync(dir, { recursive: true, force: true });
    else process.stdout.write(`fuzz server dir kept: ${dir}\n`);
  }
  return passed;
}

async function main(): Promise<void> {
  const o = parseOptions();
  process.on('SIGINT', () => {
    killAllStarted();
    process.exit(130);
  });
  process.on('exit', killAllStarted);

  const fleetMode = o.instances > 1;
  const systemClock = o.clock === 'system';
  process.stdout.write(
    `# railyard chaos: ${o.trials} trial(s), ${o.clients} clients, ${o.requests} requests, seed ${o.seed}, SIGTERM ratio ${o.sigtermRatio}` +
      `${fleetMode ? `, fleet of ${o.instances} on PostgreSQL, ${o.kills} kill(s) per trial` : ''}${o.faults ? ', fault mode (no kill: faults on the API)' : ''}` +
      `${systemClock ? `, system clock (${fleetMode ? '' : 'one server on a SQLite file, jobs on its job thread; '}a further kill while the callbacks are settled)` : ''}\n\n`,
  );
  // Fleet mode: one PostgreSQL cluster for the run, a fresh database per trial.
  const cluster = fleetMode ? await (await import('../test/support/postgres-cluster.ts')).startPostgresCluster() : null;
  const results: TrialResult[] = [];
  for (let i = 1; i <= o.trials; i++) {
    const seed = o.seed + i - 1;
    process.stderr.write(`trial ${i}/${o.trials} (seed ${seed})… `);
    const r =
      cluster || systemClock
        ? await runFleetTrial({ ...o, trial: i, seed, cluster, webhookTimeoutMs: 10_000 })
        : o.faults
          ? await runFaultTrial({ ...o, trial: i, seed })
          : await runTrial({ ...o, trial: i, seed });
    results.push(r);
    process.stderr.write(
      `${r.error ? 'ERROR' : trialFailed(r) ? 'FAIL' : 'ok'} (${r.killedWith}, ${r.requests} requests, ${r.unansweredAtKill} unanswered at kill)${r.kept ? ` kept in ${r.dir}` : ''}\n`,
    );
  }
  if (results.length) {
    process.stdout.write(`${table(results)}\n`);
    if (fleetMode || systemClock) process.stdout.write(`\n${fleetTable(results as FleetTrialResult[])}\n`);
    if (o.faults) process.stdout.write(`\n${faultTable(results as FaultTrialResult[])}\n`);
    const notable = results.filter((r) => trialFailed(r) || r.findings.warnings.length);
    if (notable.length) process.stdout.write(`\n## findings\n\n${notable.map(details).join('\n\n')}\n`);
  }
  await cluster?.stop();
  const fuzzPassed = o.fuzz > 0 ? await fuzz(o.fuzz, o.seed, o.keep) : true;
  const failed = results.filter(trialFailed).length;
  process.stdout.write(
    `\n${failed ? `${failed} of ${results.length} trial(s) showed problems` : `${results.length} trial(s), no problems`}${o.fuzz ? `; fuzz ${fuzzPassed ? 'passed' : 'failed'}` : ''}\n`,
  );
  process.exitCode = failed || !fuzzPassed ? 1 : 0;
}

main().catch((err) => {
  killAllStarted();
  process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
