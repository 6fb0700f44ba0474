import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acknowledgedId, planWorkload, runAfterRestart, runUntilKill, type ClientSettings, type Operation } from './client-workload.ts';
import { checkAnswers, checkDatabase, checkViaApi, emptyFindings, FAILURE_KINDS, firstAcknowledged, type FindingKind, type Findings } from './reconcile.ts';
import { apiCall } from './recorded-request.ts';
import { openStore } from '../src/store/open-store.ts';
import { seededRandom } from './seeded-random.ts';
import { freePort, RailyardProcess, SANDBOX_KEY, SANDBOX_SECRET } from './spawn-server.ts';

export interface TrialOptions {
  trial: number;
  seed: number;
  clients: number;
  requests: number;
  sigtermRatio: number;
  keep: boolean;
  keepAll: boolean;
  railTimeoutMs: number;
  fundAmount: number;
  settleSeconds: number;
  sampleSize: number;
  scenarios: string;
  requestTimeoutMs: number;
}

export interface TrialResult {
  trial: number;
  seed: number;
  dir: string;
  kept: boolean;
  killedWith: 'SIGKILL' | 'SIGTERM' | '-';
  /** Operations sent at least once. */
  requests: number;
  acknowledged: number;
  /** Acknowledged with 502 provider_unavailable (allowed: the object exists, failed). */
  unavailable: number;
  startedBeforeKill: number;
  unansweredAtKill: number;
  /** Byte-identical sends, after the restart, of the requests unanswered at the kill. */
  retried: number;
  replaySampled: number;
  findings: Findings;
  /** error-level lines from the server's log, for evidence. */
  logErrors: string[];
  /** The trial could not run to the end (the harness or the server broke). */
  error?: string;
  /** Finding kinds shown but not failing this trial (fleet mode: a 409 while a dead instance holds the key). */
  tolerated?: FindingKind[];
}

export function trialFailed(r: TrialResult): boolean {
  return !!r.error || FAILURE_KINDS.some((k) => !r.tolerated?.includes(k) && r.findings[k].length > 0);
}

/**
 * One trial: start, fund, load, kill (SIGKILL or SIGTERM) at a random moment, restart on the same
 * database and port, retry what went unanswered and replay a sample of what was answered, settle
 * the virtual clock, reconcile through the API, stop gracefully, reconcile the SQLite file.
 */
export async function runTrial(o: TrialOptions): Promise<TrialResult> {
  const rng = seededRandom(o.seed);
  const dir = mkdtempSync(join(tmpdir(), `railyard-chaos-t${o.trial}-`));
  const dbPath = join(dir, 'railyard.db');
  const logFile = join(dir, 'server.log');
  const findings = emptyFindings();
  const signal = rng.chance(o.sigtermRatio) ? ('SIGTERM' as const) : ('SIGKILL' as const);
  const result: TrialResult = {
    trial: o.trial, seed: o.seed, dir, kept: false, killedWith: '-', requests: 0, acknowledged: 0, unavailable: 0, startedBeforeKill: 0,
    unansweredAtKill: 0, retried: 0, replaySampled: 0, findings, logErrors: [],
  };
  let ops: Operation[] = [];
  let server: RailyardProcess | null = null;
  try {
    const port = await freePort();
    const serverOptions = { port, dbPath, seed: o.seed, logFile, railTimeoutMs: o.railTimeoutMs, scenarios: o.scenarios };
    server = await RailyardProcess.start(serverOptions);

    const fund = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/wallet/fund', { amount: o.fundAmount });
    if (fund.status !== 200) throw new Error(`funding the wallet answered ${fund.status}: ${fund.raw}`);

    ops = planWorkload(rng, o.requests, o.trial, o.fundAmount);
    const killAfterStarted = rng.int(Math.max(1, Math.ceil(ops.length * 0.15)), Math.max(1, Math.floor(ops.length * 0.85)));
    const killDelayMs = rng.int(0, 400);
    const t0 = performance.now();
    const settings: ClientSettings = { port, clients: o.clients, key: SANDBOX_KEY, secret: SANDBOX_SECRET, requestTimeoutMs: o.requestTimeoutMs, t0 };

    const running = server;
    const { started } = await runUntilKill(ops, {
      ...settings,
      killAfterStarted,
      killDelayMs,
      deadlineMs: 180_000,
      kill: async () => {
        result.killedWith = signal;
        const stopped = await running.kill(signal);
        if (signal === 'SIGTERM' && (stopped.code !== 0 || stopped.escalated)) {
          findings.warnings.push(`SIGTERM did not stop the server cleanly: exit ${JSON.stringify(stopped)}`);
        }
      },
    });
    server = null;
    result.startedBeforeKill = started;
    const unanswered = ops.filter((op) => op.attempts.length > 0 && op.attempts.every((a) => a.status === undefined));
    const fresh = ops.filter((op) => op.attempts.length === 0);
    const acknowledgedBefore = ops.filter((op) => firstAcknowledged(op));
    result.unansweredAtKill = unanswered.length;

    // Same database, same port: the clients' recorded Host headers and signatures stay valid.
    server = await RailyardProcess.start(serverOptions);
    const sample = rng.sample(acknowledgedBefore, o.sampleSize);
    result.replaySampled = sample.length;
    const limits = { maxNetworkRetries: 8, maxConflictRetries: 6, deadlineMs: 120_000 };
    await runAfterRestart({ retries: unanswered, fresh, sample }, settings, limits);
    // What a retry was told after the restart (often an answer recovery wrote) must replay too.
    const recovered = unanswered.filter((op) => firstAcknowledged(op));
    await runAfterRestart({ retries: [], fresh: [], sample: recovered }, settings, limits);
    result.replaySampled += recovered.length;

    // Business time for callbacks (5-10 s), then status polls (every 300 s) and their retries.
    let elapsed = 0;
    while (elapsed < o.settleSeconds) {
      const step = elapsed < 60 ? 5 : 60;
      const res = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/clock/advance', { seconds: step }, 120_000);
      if (res.status !== 200) findings.serverErrors.push(`POST /api/v1/sandbox/clock/advance {"seconds":${step}} at +${elapsed} s answered ${res.status} ${res.raw.slice(0, 300)}`);
      elapsed += step;
    }

    const api = await checkViaApi(port, SANDBOX_KEY, ops, findings);
    const stopped = await server.kill('SIGTERM');
    server = null;
    if (stopped.code !== 0 || stopped.escalated) findings.warnings.push(`the final graceful stop did not exit cleanly: ${JSON.stringify(stopped)}`);

    checkAnswers(ops, findings);
    const store = await openStore(dbPath);
    try {
      await checkDatabase(store, ops, o.fundAmount, api, findings);
    } finally {
      await store.close();
    }
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
  } finally {
    if (server) await server.kill('SIGKILL').catch(() => undefined);
  }

  result.requests = ops.filter((op) => op.attempts.length > 0).length;
  result.acknowledged = ops.filter((op) => firstAcknowledged(op)).length;
  result.retried = ops.reduce((n, op) => n + op.attempts.filter((a) => a.phase === 'retry-after-restart').length, 0);
  result.unavailable = ops.filter((op) => op.attempts.some((a) => a.status === 502 && acknowledgedId(op.kind, a))).length;
  result.logErrors = logErrors(logFile);
  writeFileSync(join(dir, 'requests.jsonl'), ops.map((op) => JSON.stringify(op)).join('\n') + '\n');
  writeFileSync(join(dir, 'findings.json'), JSON.stringify({ ...result, findings }, null, 2));
  if ((trialFailed(result) && o.keep) || o.keepAll) result.kept = true;
  else rmSync(dir, { recursive: true, force: true });
  return result;
}

/** Distinct error-level lines of the server log (the request log itself holds no bodies). */
export function logErrors(logFile: string): string[] {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  const seen = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.includes('"level":"error"') && !/^\s*(Error|TypeError|RangeError)\b|Unhandled|uncaught/i.test(line)) continue;
    seen.set(line, (seen.get(line) ?? 0) + 1);
  }
  return [...seen].map(([line, n]) => (n > 1 ? `${n}x ${line}` : line));
}
