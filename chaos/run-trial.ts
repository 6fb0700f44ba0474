import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Db } from '../src/store/db.ts';
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
  /** The kill during a clock advance: "KILL at 57/312 jobs", or why it did not land mid-advance. */
  advanceKill?: string;
  /** The trial could not run to the end (the harness or the server broke). */
  error?: string;
  /** Finding kinds shown but not failing this trial (fleet mode: a 409 while a dead instance holds the key). */
  tolerated?: FindingKind[];
}

/** A trial's result before anything has happened: nothing sent, nothing killed, nothing found. */
export function freshTrialResult(o: Pick<TrialOptions, 'trial' | 'seed'>, dir: string, findings: Findings): TrialResult {
  return {
    trial: o.trial,
    seed: o.seed,
    dir,
    kept: false,
    killedWith: '-',
    requests: 0,
    acknowledged: 0,
    unavailable: 0,
    startedBeforeKill: 0,
    unansweredAtKill: 0,
    retried: 0,
    replaySampled: 0,
    findings,
    logErrors: [],
  };
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
  const result: TrialResult = freshTrialResult(o, dir, findings);
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

    // A second kill, in the middle of a background clock advance over the callbacks and polls.
    server = await killDuringAdvance(server, serverOptions, dbPath, rng.chance(o.sigtermRatio) ? 'SIGTERM' : 'SIGKILL', rng, result, findings);

    // Business time for callbacks (5-10 s), then status polls (every 300 s) and their retries.
    let elapsed = 0;
    while (elapsed < o.settleSeconds) {
      const step = elapsed < 60 ? 5 : 60;
      const res = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/clock/advance', { seconds: step, wait: true }, 120_000);
      if (res.status !== 200) findings.serverErrors.push(`POST /api/v1/sandbox/clock/advance {"seconds":${step}} at +${elapsed} s answered ${res.status} ${res.raw.slice(0, 300)}`);
      elapsed += step;
    }

    const clockAtEnd = Date.parse((await apiCall(port, SANDBOX_KEY, 'GET', '/api/v1/sandbox/clock')).json?.data?.now ?? '');
    const api = await checkViaApi(port, SANDBOX_KEY, ops, findings);
    const stopped = await server.kill('SIGTERM');
    server = null;
    if (stopped.code !== 0 || stopped.escalated) findings.warnings.push(`the final graceful stop did not exit cleanly: ${JSON.stringify(stopped)}`);

    checkAnswers(ops, findings);
    const store = await openStore(dbPath);
    try {
      await checkDatabase(store, ops, o.fundAmount, api, findings);
      await checkJobsAfterAdvances(store, clockAtEnd, findings);
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
  writeFileSync(join(dir, 'requests.jsonl'), `${ops.map((op) => JSON.stringify(op)).join('\n')}\n`);
  writeFileSync(join(dir, 'findings.json'), JSON.stringify({ ...result, findings }, null, 2));
  if ((trialFailed(result) && o.keep) || o.keepAll) result.kept = true;
  else rmSync(dir, { recursive: true, force: true });
  return result;
}

/** Virtual seconds the killed advance covers: the callbacks (5-10 s) and the first status polls (300 s). */
const ADVANCE_KILL_SECONDS = 600;

/**
 * Starts a background advance, kills the server once a random share of the advance's jobs ran
 * (or as soon as it can, when there are few), restarts it on the same database and port, and
 * checks what a restart must keep: the advance is gone with its process (404, not a 5xx), and
 * business time resumes no earlier than the last job that ran. Returns the restarted server.
 */
async function killDuringAdvance(
  server: RailyardProcess,
  options: Parameters<typeof RailyardProcess.start>[0],
  dbPath: string,
  signal: 'SIGKILL' | 'SIGTERM',
  rng: ReturnType<typeof seededRandom>,
  result: TrialResult,
  f: Findings,
): Promise<RailyardProcess> {
  const port = options.port;
  const started = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/clock/advance', { seconds: ADVANCE_KILL_SECONDS, async: true }, 120_000);
  if (started.status !== 202) {
    f.advance.push(`POST /api/v1/sandbox/clock/advance {"async":true} answered ${started.status}, not 202: ${started.raw.slice(0, 300)}`);
    result.advanceKill = 'not started';
    return server;
  }
  const id: string = started.json.data.id;
  const total: number = started.json.data.jobs_total;
  const killAfter = rng.int(1, Math.max(1, Math.floor(total * 0.9)));
  let seen = started.json.data as { state: string; jobs_done: number; jobs_total: number };
  while (seen.state === 'running' && seen.jobs_done < killAfter) {
    const polled = await apiCall(port, SANDBOX_KEY, 'GET', `/api/v1/sandbox/clock/advances/${id}`);
    if (polled.status !== 200) {
      f.advance.push(`GET /api/v1/sandbox/clock/advances/${id} answered ${polled.status} while it ran: ${polled.raw.slice(0, 300)}`);
      break;
    }
    seen = polled.json.data;
  }
  const stopped = await server.kill(signal);
  if (signal === 'SIGTERM' && (stopped.code !== 0 || stopped.escalated)) f.warnings.push(`SIGTERM during an advance did not stop the server cleanly: exit ${JSON.stringify(stopped)}`);
  result.advanceKill = seen.state === 'running' ? `${signal === 'SIGKILL' ? 'KILL' : 'TERM'} at ${seen.jobs_done}/${seen.jobs_total} jobs` : `ended first (${seen.jobs_done} jobs)`;

  const ranBeforeRestart = readOnly(dbPath, "SELECT MAX(run_at) AS at FROM jobs WHERE state <> 'pending'");
  const restarted = await RailyardProcess.start(options);
  const gone = await apiCall(port, SANDBOX_KEY, 'GET', `/api/v1/sandbox/clock/advances/${id}`);
  if (gone.status !== 404) f.advance.push(`after the restart GET /api/v1/sandbox/clock/advances/${id} answered ${gone.status}, not 404: ${gone.raw.slice(0, 300)}`);
  const now = Date.parse((await apiCall(port, SANDBOX_KEY, 'GET', '/api/v1/sandbox/clock')).json?.data?.now ?? '');
  const lastRan = ranBeforeRestart?.at ?? null;
  if (!Number.isFinite(now)) f.advance.push('after the restart GET /api/v1/sandbox/clock did not give the time');
  else if (lastRan !== null && now < lastRan) f.advance.push(`after the restart the clock reads ${new Date(now).toISOString()}, behind a job that ran at ${new Date(lastRan).toISOString()}`);
  return restarted;
}

/** One row from the server's SQLite file, read beside it (WAL): the server may be gone or running. */
function readOnly(dbPath: string, sql: string): { at: number | null } | undefined {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    return db.prepare(sql).get() as { at: number | null } | undefined;
  } finally {
    db.close();
  }
}

/** After the settle: every job due by the final clock ran, and no event was emitted twice for one object. */
async function checkJobsAfterAdvances(db: Db, clockAtEnd: number, f: Findings): Promise<void> {
  if (!Number.isFinite(clockAtEnd)) {
    f.advance.push('GET /api/v1/sandbox/clock did not give the final time');
    return;
  }
  const left = await db.all<{ kind: string; n: number }>("SELECT kind, COUNT(*) AS n FROM jobs WHERE state = 'pending' AND run_at <= ? GROUP BY kind", [clockAtEnd]);
  for (const j of left) f.advance.push(`${j.n} ${j.kind} job(s) due by the final clock ${new Date(clockAtEnd).toISOString()} never ran`);
  const twice = await db.all<{ object_id: string; type: string; n: number }>(
    // A late success reversed is once per abandoned provider: once per late settlement of the object (unique per provider).
    `SELECT object_id, type, COUNT(*) AS n FROM outbox_events e WHERE environment = 'test' GROUP BY object_id, type
     HAVING COUNT(*) > CASE WHEN type LIKE '%.late_success_reversed' THEN MAX(1, (SELECT COUNT(*) FROM late_settlements l WHERE l.object_id = e.object_id)) ELSE 1 END`,
  );
  for (const e of twice) f.jobsTwice.push(`event ${e.type} of ${e.object_id} was emitted ${e.n} times`);
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
