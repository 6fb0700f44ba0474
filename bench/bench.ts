// npm run bench -- [options]
//
// Benchmarks railyard as a user runs it (`npm start`, in a child process on 127.0.0.1) and reports
// every figure as a ratio against a baseline measured in the same run: a bare express endpoint
// answering the same JSON (for throughput and latency), the 1k-row page (for the 1M-row page),
// or an absolute target (P4-P6, with bare express figures kept for context). The machine is
// shared, so absolute numbers from two runs are not comparable; ratios within one run are.
// Writes bench/results/latest.json and prints a markdown table. Run on demand, never in CI tests.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, arch, platform } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { killAllStarted, RailyardProcess, REPO_ROOT, startScript, tail } from './launch.ts';
import type { BenchContext, Measure, MeasureResult, TableRow } from './measure.ts';
import { chargeFlow, chargeFlowSystemClock } from './measures/charge-flow.ts';
import { chargeInitiate } from './measures/charge-initiate.ts';
import { coldStart } from './measures/cold-start.ts';
import { dueCallbacks } from './measures/due-callbacks.ts';
import { history } from './measures/history.ts';
import { settleRate } from './measures/settle-rate.ts';
import { webhookLag } from './measures/webhook-lag.ts';
import { listPage } from './measures/list-page.ts';
import { memory } from './measures/memory.ts';
import { postgresFleet } from './measures/postgres-fleet.ts';
import { quote } from './measures/quote.ts';
import { signedTransfer } from './measures/signed-transfer.ts';
import { simulatedDay } from './measures/simulated-day.ts';
import { DatabaseCache } from './seed-database.ts';
import { wholeNumberOption } from '../chaos/process-group.ts';

export const MEASURES: Measure[] = [
  quote,
  chargeInitiate,
  signedTransfer,
  postgresFleet,
  chargeFlow,
  chargeFlowSystemClock,
  listPage,
  memory,
  simulatedDay,
  dueCallbacks,
  coldStart,
  history,
  webhookLag,
  settleRate,
];

const USAGE = `npm run bench -- [options]

  --rounds N         interleaved rounds (baseline, railyard, ...) per measure (default 3; --quick 2)
  --duration S       seconds per load round (default 10; --quick 2)
  --warmup S         seconds of warm-up load per side (default 3; --quick 1)
  --connections N    autocannon connections (default 50)
  --only LIST        comma-separated measures: ${MEASURES.map((m) => [m.id, ...m.aliases].join('|')).join(', ')}
  --quick            a smoke run: short rounds, small databases and batches (figures not comparable to a full run)
  --large-rows N     rows of the large list database (default 1000000; --quick 20000)
  --history-charges N  charges of history in the history measure's grown store (default 1000000; --quick 20000)
  --lag-seconds S    seconds of sustained charges in the webhook lag measure (default 30; --quick 8)
  --settle-operations N  acknowledged operations the settle rate measure settles (default 20000; --quick 2000)
  --keep             keep the temp directory (logs, databases) after the run
  -h, --help
`;

function usage(message: string): never {
  process.stderr.write(`bench: ${message}\n\n${USAGE}`);
  process.exit(2);
}

const int = (name: string, value: string | undefined, fallback: number, min: number, max: number) => wholeNumberOption(name, value, fallback, min, max, usage);

function parseOptions() {
  const parsed = (() => {
    try {
      return parseArgs({
        strict: true,
        allowPositionals: false,
        options: {
          rounds: { type: 'string' },
          duration: { type: 'string' },
          warmup: { type: 'string' },
          connections: { type: 'string' },
          only: { type: 'string' },
          quick: { type: 'boolean', default: false },
          'large-rows': { type: 'string' },
          'history-charges': { type: 'string' },
          'lag-seconds': { type: 'string' },
          'settle-operations': { type: 'string' },
          keep: { type: 'boolean', default: false },
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
  const quick = v.quick === true;
  const selected = v.only
    ? v.only
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean)
    : MEASURES.map((m) => m.id);
  const measures = MEASURES.filter((m) => selected.includes(m.id) || m.aliases.some((a) => selected.includes(a)));
  const unknown = selected.filter((name) => !MEASURES.some((m) => m.id === name || m.aliases.includes(name)));
  if (unknown.length) usage(`unknown measure(s) in --only: ${unknown.join(', ')}`);
  return {
    quick,
    keep: v.keep === true,
    rounds: int('rounds', v.rounds, quick ? 2 : 3, 1, 20),
    durationSec: int('duration', v.duration, quick ? 2 : 10, 1, 120),
    warmupSec: int('warmup', v.warmup, quick ? 1 : 3, 1, 60),
    connections: int('connections', v.connections, 50, 1, 1_000),
    largeRows: int('large-rows', v['large-rows'], quick ? 20_000 : 1_000_000, 2_000, 5_000_000),
    historyCharges: int('history-charges', v['history-charges'], quick ? 20_000 : 1_000_000, 1_000, 5_000_000),
    lagSeconds: int('lag-seconds', v['lag-seconds'], quick ? 8 : 30, 2, 600),
    settleOperations: int('settle-operations', v['settle-operations'], quick ? 2_000 : 20_000, 100, 1_000_000),
    measures,
  };
}

function machine() {
  const cpu = cpus();
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim(); // read-only
  } catch {
    commit = null;
  }
  return {
    platform: platform(),
    release: release(),
    arch: arch(),
    cpuModel: cpu[0]?.model ?? 'unknown',
    cpuCount: cpu.length,
    totalMemMB: Math.round(totalmem() / 2 ** 20),
    loadavgAtStart: loadavg(),
    commit,
  };
}

/** The last lines of the railyard logs a failed measure wrote: why a server stopped answering shows there. */
function logTails(runDir: string, since: number): string[] {
  return readdirSync(runDir)
    .filter((f) => f.endsWith('.log') && !f.startsWith('baseline') && statSync(join(runDir, f)).mtimeMs >= since)
    .map(
      (f) =>
        `${f}: ${tail(join(runDir, f), 4)
          .split('\n')
          .filter((l) => l.trim())
          .join(' | ')}`,
    );
}

function markdownTable(rows: TableRow[]): string {
  const met = (m: boolean | null) => (m === null ? '—' : m ? 'yes' : 'NO');
  const lines = [
    '| measure | railyard | baseline | ratio | target | met? |',
    '|---|---:|---:|---:|---|:---:|',
    ...rows.map((r) => `| ${r.measure} | ${r.railyard} | ${r.baseline} | ${r.ratio} | ${r.target} | ${met(r.met)} |`),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions();
  const runDir = mkdtempSync(join(tmpdir(), 'railyard-bench-'));
  const started = performance.now();
  const log = (message: string) => process.stderr.write(`[bench +${((performance.now() - started) / 1_000).toFixed(0)}s] ${message}\n`);
  const ctx: BenchContext = {
    runDir,
    rounds: options.rounds,
    durationSec: options.durationSec,
    warmupSec: options.warmupSec,
    connections: options.connections,
    quick: options.quick,
    scale: {
      smallRows: 1_000,
      largeRows: options.largeRows,
      dayObjects: options.quick ? 1_000 : 10_000,
      dueCallbacks: options.quick ? 2_000 : 20_000,
      coldStarts: options.quick ? 3 : 5,
      historyCharges: options.historyCharges,
      lagSeconds: options.lagSeconds,
      settleOperations: options.settleOperations,
    },
    databases: new DatabaseCache(runDir, (m) => log(m)),
    log,
  };
  const resultsDir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const report = {
    date: new Date().toISOString(),
    quick: options.quick,
    options: {
      rounds: options.rounds,
      durationSec: options.durationSec,
      warmupSec: options.warmupSec,
      connections: options.connections,
      scale: ctx.scale,
      measures: options.measures.map((m) => m.id),
    },
    machine: machine(),
    node: { bench: process.version, server: null as null | { node: string; exe: string; cmdline: string } },
    startScript: startScript(),
    runDir,
    measures: [] as (MeasureResult & { seconds: number; error?: string })[],
    table: [] as TableRow[],
    summary: { met: 0, failed: 0, reported: 0 },
    loadavgAtEnd: [] as number[],
    seconds: 0,
  };
  const save = () => writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);

  log(
    `railyard bench${options.quick ? ' (quick)' : ''}: ${options.measures.map((m) => m.id).join(', ')}; ${options.rounds} rounds of ${options.durationSec} s at ${options.connections} connections; temp dir ${runDir}`,
  );
  // Start once as a user would: proves the launcher works and records the server's own Node.
  const probe = await RailyardProcess.start({ dir: runDir, label: 'probe', db: join(runDir, 'probe.sqlite'), clock: 'system' });
  try {
    report.node.server = probe.runtime();
    log(`npm start runs: ${report.node.server.cmdline} (${report.node.server.node}); started in ${probe.coldStartMs.toFixed(0)} ms`);
  } finally {
    await probe.stop();
  }

  let errors = 0;
  for (const measure of options.measures) {
    log(`${measure.title}`);
    const t = performance.now();
    const wallStart = Date.now();
    let result: MeasureResult & { seconds: number; error?: string };
    try {
      result = { ...(await measure.run(ctx)), seconds: 0 };
    } catch (err) {
      errors++;
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`${measure.title} failed: ${message}`);
      result = {
        id: measure.id,
        title: measure.title,
        rows: [{ measure: measure.title, railyard: 'error', baseline: 'n/a', ratio: 'n/a', target: 'runs', met: false }],
        raw: {},
        notes: [`${measure.title}: ${message.split('\n').slice(0, 3).join(' ')}`, ...logTails(runDir, wallStart).map((l) => `${measure.title} log ${l}`)],
        seconds: 0,
        error: message,
      };
    }
    result.seconds = Math.round((performance.now() - t) / 100) / 10;
    report.measures.push(result);
    report.table.push(...result.rows);
    for (const row of result.rows) log(`  ${row.measure}: ${row.railyard} vs ${row.baseline} (${row.ratio}), target ${row.target}: ${row.met === null ? 'reported' : row.met ? 'met' : 'NOT met'}`);
    save();
  }
  report.summary = {
    met: report.table.filter((r) => r.met === true).length,
    failed: report.table.filter((r) => r.met === false).length,
    reported: report.table.filter((r) => r.met === null).length,
  };
  report.loadavgAtEnd = loadavg();
  report.seconds = Math.round((performance.now() - started) / 1_000);
  save();

  const out = [
    '',
    `## railyard bench${options.quick ? ' (quick smoke run: small scales, not comparable)' : ''}`,
    '',
    `${report.date}; ${report.machine.cpuCount} × ${report.machine.cpuModel}; bench on Node ${process.version}, server ${report.node.server?.node ?? '?'} via \`npm start\` (${report.startScript}); ${options.rounds} interleaved rounds of ${options.durationSec} s at ${options.connections} connections, medians; load average ${report.machine.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')} → ${report.loadavgAtEnd.map((l) => l.toFixed(2)).join(' ')}`,
    '',
    markdownTable(report.table),
    '',
    `${report.summary.met} met, ${report.summary.failed} not met, ${report.summary.reported} reported without a target; ${report.seconds} s in all.`,
    '',
    'Notes:',
    ...report.measures.flatMap((m) => m.notes.map((n) => `- ${n}`)),
    '',
    `Raw rounds: bench/results/latest.json`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  // The printed report beside the raw one, so the two always describe the same run.
  writeFileSync(join(resultsDir, 'latest.md'), out.join('\n').trimStart());
  if (options.keep || errors) log(`temp dir kept: ${runDir}`);
  else rmSync(runDir, { recursive: true, force: true });
}

process.on('exit', killAllStarted);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAllStarted();
    process.exit(130);
  });
}

main().catch((err) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  killAllStarted();
  process.exit(1);
});
