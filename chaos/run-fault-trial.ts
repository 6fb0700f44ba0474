import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attempt, errorCode, planWorkload, type ClientSettings, type Operation } from './client-workload.ts';
import { checkAnswers, checkDatabase, checkViaApi, emptyFindings, firstAcknowledged } from './reconcile.ts';
import { apiCall } from './recorded-request.ts';
import { freshTrialResult, logErrors, trialFailed, type TrialOptions, type TrialResult } from './run-trial.ts';
import { openStore } from '../src/store/open-store.ts';
import { seededRandom } from './seeded-random.ts';
import { freePort, RailyardProcess, SANDBOX_KEY, SANDBOX_SECRET, sleep } from './spawn-server.ts';

// --faults: instead of killing the process, the server injects faults into its own API (the
// sandbox control, POST /api/v1/sandbox/faults: docs/retries.md) and the clients retry through
// them as a merchant's client should: the same bytes and Idempotency-Key after no answer, a cut
// connection, a 5xx, a 429 (waiting what it says) or a 409. Then the same reconciliation as a
// crash trial: every request has exactly one object, nothing lost, nothing duplicated.

/** What the clients meet on POST /api/v1/charges and /api/v1/transfers, tried in this order. */
function faultPlan(clientTimeoutMs: number): Record<string, unknown>[] {
  const plan: Record<string, unknown>[] = [];
  for (const route of ['POST /api/v1/charges', 'POST /api/v1/transfers']) {
    plan.push(
      { profile: 'rate-limit', route, requests: 40, per_seconds: 1 },
      { profile: 'lost-responses', route, probability: 0.15 },
      { profile: 'server-errors', route, probability: 0.1 },
      { profile: 'server-errors', route, after_commit: true, probability: 0.1 },
      { profile: 'cut-connections', route, probability: 0.05 },
      // Past the client's timeout, after the commit: the retry meets the stored answer.
      { profile: 'slow-responses', route, after_commit: true, latency_ms: clientTimeoutMs + 500, probability: 0.02 },
    );
  }
  return plan;
}

const RETRIED_STATUSES = new Set([429, 500, 503]);
const MAX_SENDS = 40;

/** One operation until its answer is final, as docs/retries.md's client loop does it. */
async function untilFinal(op: Operation, s: ClientSettings, deadline: number): Promise<void> {
  for (let n = 1; n <= MAX_SENDS && Date.now() < deadline; n++) {
    const a = await attempt(op, n === 1 ? 'first-send' : 'retry', s);
    const conflict = a.status === 409 && errorCode(a.body) === 'idempotency_conflict';
    if (a.status !== undefined && !RETRIED_STATUSES.has(a.status) && !conflict) return;
    if (a.status === 429) {
      // The server runs on a virtual clock, where the window is business time: honouring
      // Retry-After means advancing the clock by it, not sleeping (docs/scenarios.md).
      const seconds = Number((JSON.parse(a.body ?? '{}') as { error?: { details?: { retry_after_seconds?: number } } }).error?.details?.retry_after_seconds);
      await apiCall(s.port, s.key, 'POST', '/api/v1/sandbox/clock/advance', { seconds: Number.isFinite(seconds) ? seconds : 1, wait: true }, 120_000);
      continue;
    }
    await sleep(Math.min(1_000, 50 * 2 ** n));
  }
}

export interface FaultTrialResult extends TrialResult {
  /** Each fault rule: how often it fired. */
  faults: { name: string; fired: number }[];
}

export async function runFaultTrial(o: TrialOptions): Promise<FaultTrialResult> {
  const rng = seededRandom(o.seed);
  const dir = mkdtempSync(join(tmpdir(), `railyard-chaos-faults-t${o.trial}-`));
  const dbPath = join(dir, 'railyard.db');
  const logFile = join(dir, 'server.log');
  const findings = emptyFindings();
  const result: FaultTrialResult = {
    ...freshTrialResult(o, dir, findings),
    faults: [],
    // A retry that meets its first send still running (a rail timing out) is answered 409, as it should be.
    tolerated: ['conflictsAfterRestart'],
  };
  let ops: Operation[] = [];
  let server: RailyardProcess | null = null;
  try {
    const port = await freePort();
    server = await RailyardProcess.start({ port, dbPath, seed: o.seed, logFile, railTimeoutMs: o.railTimeoutMs, scenarios: o.scenarios });
    const fund = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/wallet/fund', { amount: o.fundAmount });
    if (fund.status !== 200) throw new Error(`funding the wallet answered ${fund.status}: ${fund.raw}`);
    // Long enough for a failover (the timeout numbers wait out one rail timeout), short enough to give up on a slow answer.
    const clientTimeoutMs = 2 * o.railTimeoutMs + 2_000;
    for (const fault of faultPlan(clientTimeoutMs)) {
      const on = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/faults', fault);
      if (on.status !== 201) throw new Error(`switching ${JSON.stringify(fault)} on answered ${on.status}: ${on.raw}`);
    }

    ops = planWorkload(rng, o.requests, o.trial, o.fundAmount);
    const settings: ClientSettings = { port, clients: o.clients, key: SANDBOX_KEY, secret: SANDBOX_SECRET, requestTimeoutMs: clientTimeoutMs, t0: performance.now() };
    const deadline = Date.now() + 300_000;
    let next = 0;
    const client = async () => {
      while (next < ops.length && Date.now() < deadline) await untilFinal(ops[next++]!, settings, deadline);
    };
    await Promise.all(Array.from({ length: o.clients }, client));

    let elapsed = 0;
    while (elapsed < o.settleSeconds) {
      const step = elapsed < 60 ? 5 : 60;
      const res = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/clock/advance', { seconds: step, wait: true }, 120_000);
      if (res.status !== 200) findings.serverErrors.push(`POST /api/v1/sandbox/clock/advance {"seconds":${step}} answered ${res.status} ${res.raw.slice(0, 300)}`);
      elapsed += step;
    }
    const listed = await apiCall(port, SANDBOX_KEY, 'GET', '/api/v1/sandbox/faults');
    const inForce = (listed.json?.data ?? []) as { name: string; action: string; fired: number; rule: { respond?: { before_commit: boolean } } }[];
    result.faults = inForce.map((f) => ({ name: f.rule.respond ? `${f.name} (${f.rule.respond.before_commit ? 'before' : 'after'} the commit)` : f.name, fired: f.fired }));
    const injected5xx = inForce.filter((f) => f.action === 'respond').reduce((n, f) => n + f.fired, 0);

    const api = await checkViaApi(port, SANDBOX_KEY, ops, findings);
    const stopped = await server.kill('SIGTERM');
    server = null;
    if (stopped.code !== 0 || stopped.escalated) findings.warnings.push(`the final graceful stop did not exit cleanly: ${JSON.stringify(stopped)}`);

    checkAnswers(ops, findings);
    // The 5xx the faults injected are expected; any beyond their count is railyard's own.
    const answered5xx = ops.flatMap((op) => op.attempts).filter((a) => a.status !== undefined && a.status >= 500 && !(a.status === 502 && errorCode(a.body) === 'provider_unavailable')).length;
    if (answered5xx <= injected5xx) findings.serverErrors.length = 0;
    else findings.serverErrors.unshift(`${answered5xx} answers were 5xx, but the faults injected only ${injected5xx}`);
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
  result.retried = ops.reduce((n, op) => n + op.attempts.filter((a) => a.phase === 'retry').length, 0);
  result.unansweredAtKill = ops.filter((op) => op.attempts.some((a) => a.status === undefined)).length;
  result.unavailable = ops.filter((op) => op.attempts.some((a) => a.status === 502)).length;
  result.logErrors = logErrors(logFile);
  writeFileSync(join(dir, 'requests.jsonl'), `${ops.map((op) => JSON.stringify(op)).join('\n')}\n`);
  writeFileSync(join(dir, 'findings.json'), JSON.stringify({ ...result, findings }, null, 2));
  if ((trialFailed(result) && o.keep) || o.keepAll) result.kept = true;
  else rmSync(dir, { recursive: true, force: true });
  return result;
}
