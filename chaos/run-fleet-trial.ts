import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../src/store/db.ts';
import { openStore } from '../src/store/open-store.ts';
import type { PostgresCluster } from '../test/support/postgres-cluster.ts';
import { acknowledgedId, errorCode, planWorkload, recordOperation, type Attempt, type Operation, type Phase } from './client-workload.ts';
import { checkAnswers, checkDatabase, checkViaApi, emptyFindings, firstAcknowledged, type Findings } from './reconcile.ts';
import { apiCall, LOOPBACK, sendRecorded } from './recorded-request.ts';
import { freshTrialResult, logErrors, trialFailed, type TrialOptions, type TrialResult } from './run-trial.ts';
import { seededRandom, type Rng } from './seeded-random.ts';
import { freePort, RailyardProcess, SANDBOX_KEY, SANDBOX_SECRET, sleep } from './spawn-server.ts';

// Fleet mode (npm run chaos -- --instances 3): N `railyard serve` processes on one PostgreSQL
// database. The clients round-robin across them, as a load balancer would, and re-send a request
// that got no answer to the next instance; meanwhile one instance at a time is killed (SIGKILL or
// SIGTERM) and restarted on its port. Afterwards: the usual reconciliation (nothing lost or
// duplicated, no 5xx, the wallet equals the records, balanced journals) over the shared database,
// plus the fleet's own checks: no webhook received twice except an at-least-once retry of a
// delivery in flight at a kill, no job run twice (no event emitted twice, no delivery attempt
// recorded twice), every delivery the database calls delivered received.

export interface FleetTrialOptions extends TrialOptions {
  instances: number;
  kills: number;
  /** The instances' shared database: a fresh one on this cluster, or (one instance) a SQLite file in the trial's directory. */
  cluster: PostgresCluster | null;
  /**
   * The instances' clock. On the system clock callbacks come in real time while the clients load
   * (and, on a SQLite file, on the job thread): a further kill lands while they are being settled,
   * and the trial waits for them instead of advancing the clock.
   */
  clock: 'virtual' | 'system';
  /** The webhook dispatcher's real-time timeout: a delivery may be in flight this long before a kill. */
  webhookTimeoutMs: number;
}

export interface KillRecord {
  instance: number;
  signal: 'SIGKILL' | 'SIGTERM';
  /** ms since the trial started. */
  at: number;
  /** How long the instance was down, until /healthz answered again. */
  downMs: number;
  /** The kill while callbacks are settled (system clock): webhooks still to go out, records still to settle, keys in flight, just before it. */
  unsettled?: number;
}

export interface FleetFigures {
  instances: number;
  kills: KillRecord[];
  /** Sends per instance (every attempt, first sends and retries). */
  sendsPerInstance: number[];
  events: number;
  receipts: number;
  /** Second and later receipts of an event explained by a delivery in flight at a kill. */
  atLeastOnceRetries: number;
  /** Deliveries the database calls delivered that the receiver never got. */
  lostWebhooks: number;
  /** Events with no delivered delivery after settling (not a failure: the fleet may not have settled them). */
  undeliveredEvents: number;
}

export type FleetTrialResult = TrialResult & { fleet: FleetFigures };

interface Receipt {
  id: string;
  type: string;
  /** ms since the trial started. */
  at: number;
}

/** A webhook endpoint that answers 200 at once and writes down every receipt. */
async function startReceiver(t0: number): Promise<{ url: string; receipts: Receipt[]; close: () => Promise<void> }> {
  const receipts: Receipt[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let type = '?';
      try {
        type = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.type ?? '?';
      } catch {
        // Not JSON: recorded with an unknown type.
      }
      receipts.push({ id: String(req.headers['webhook-id'] ?? '?'), type, at: Math.round(performance.now() - t0) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, LOOPBACK, done));
  return {
    url: `http://${LOOPBACK}:${port}/hooks`,
    receipts,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Round-robin over the instances' ports, the way a load balancer spreads requests. */
class RoundRobin {
  private next = 0;
  readonly sends: number[];
  constructor(readonly ports: number[]) {
    this.sends = ports.map(() => 0);
  }
  take(avoid?: number): number {
    let i = this.next++ % this.ports.length;
    if (this.ports[i] === avoid && this.ports.length > 1) i = this.next++ % this.ports.length;
    this.sends[i]!++;
    return this.ports[i]!;
  }
}

interface FleetClient {
  rr: RoundRobin;
  /** Host header and signing are recorded once, against the first instance, as behind one balancer address. */
  recordPort: number;
  t0: number;
  requestTimeoutMs: number;
  /** The instance (port) that gave each request its answer: a replay goes to another one. */
  answeredBy: Map<Operation, number>;
}

async function send(op: Operation, phase: Phase, port: number, c: FleetClient): Promise<Attempt & { port: number }> {
  const request = recordOperation(op, c.recordPort, SANDBOX_KEY, SANDBOX_SECRET);
  const at = Math.round(performance.now() - c.t0);
  const outcome = await sendRecorded(port, request, c.requestTimeoutMs);
  const record: Attempt = outcome.ok
    ? { phase, at, ms: outcome.ms, status: outcome.status, body: outcome.body, replayed: outcome.headers['idempotent-replayed'] === 'true' }
    : { phase, at, ms: outcome.ms, error: outcome.error };
  op.attempts.push(record);
  return { ...record, port };
}

/** How long a client keeps re-sending a request answered 409 idempotency_conflict. */
const CONFLICT_PATIENCE_MS = 90_000;

/**
 * Sends one request until it is answered: after no answer to the next instance (a balancer skips
 * a dead one), after 409 idempotency_conflict (the key is in flight, perhaps on a dead instance)
 * after a pause. Both bounded.
 */
async function untilAnswered(op: Operation, first: Phase, c: FleetClient, deadline: number): Promise<void> {
  let network = 0;
  let conflicts = 0;
  let conflictsSince: number | undefined;
  let phase = first;
  let port = c.rr.take(first === 'replay-sample' ? c.answeredBy.get(op) : undefined);
  while (Date.now() < deadline) {
    const a = await send(op, phase, port, c);
    phase = first === 'replay-sample' ? first : 'retry';
    if (a.status === undefined) {
      if (++network >= 12) return;
      await sleep(Math.min(2_000, 25 * 2 ** network));
    } else if (a.status === 409 && errorCode(a.body) === 'idempotency_conflict') {
      // A key held by a killed instance stays in flight until the fleet finds that instance dead
      // (its lease runs out) and recovers the request: keep asking for a while, as a client would.
      conflictsSince ??= Date.now();
      if (Date.now() - conflictsSince > CONFLICT_PATIENCE_MS) return;
      await sleep(Math.min(2_000, 250 * ++conflicts));
    } else {
      if (!c.answeredBy.has(op)) c.answeredBy.set(op, port);
      return;
    }
    port = c.rr.take(port);
  }
}

export async function runFleetTrial(o: FleetTrialOptions): Promise<FleetTrialResult> {
  const rng: Rng = seededRandom(o.seed);
  const dir = mkdtempSync(join(tmpdir(), `railyard-chaos-fleet-t${o.trial}-`));
  const findings: Findings = emptyFindings();
  const fleet: FleetFigures = {
    instances: o.instances,
    kills: [],
    sendsPerInstance: [],
    events: 0,
    receipts: 0,
    atLeastOnceRetries: 0,
    lostWebhooks: 0,
    undeliveredEvents: 0,
  };
  const result: FleetTrialResult = {
    ...freshTrialResult(o, dir, findings),
    fleet,
    // A request re-sent while its key is in flight on a killed instance is told 409 and retries.
    // One server on a SQLite file frees its dead boot's keys when it restarts: no 409 is tolerated.
    tolerated: o.cluster ? ['conflictsAfterRestart'] : [],
  };
  const t0 = performance.now();
  const servers: (RailyardProcess | null)[] = [];
  const logFiles: string[] = [];
  let ops: Operation[] = [];
  let dbUrl: string | undefined;
  const receiver = await startReceiver(t0);
  try {
    if (!o.cluster && o.instances > 1) throw new Error('instances sharing a database need PostgreSQL: a cluster');
    dbUrl = o.cluster ? await o.cluster.createDatabase() : join(dir, 'railyard.db');
    const ports: number[] = [];
    for (let i = 0; i < o.instances; i++) ports.push(await freePort());
    const serverOptions = (i: number) => ({
      port: ports[i]!,
      dbPath: dbUrl!,
      seed: o.seed + i,
      logFile: join(dir, `server-${i + 1}.log`),
      railTimeoutMs: o.railTimeoutMs,
      scenarios: o.scenarios,
      name: `instance ${i + 1}`,
      clock: o.clock,
    });
    for (let i = 0; i < o.instances; i++) logFiles.push(serverOptions(i).logFile);
    // The first migrates; the others start together and find the work done (advisory lock).
    servers.push(await RailyardProcess.start(serverOptions(0)));
    servers.push(...(await Promise.all(ports.slice(1).map((_, i) => RailyardProcess.start(serverOptions(i + 1))))));

    const endpoint = await apiCall(ports[0]!, SANDBOX_KEY, 'POST', '/api/v1/webhook_endpoints', { url: receiver.url });
    if (endpoint.status !== 201) throw new Error(`registering the webhook endpoint answered ${endpoint.status}: ${endpoint.raw}`);
    const fund = await apiCall(ports[1 % ports.length]!, SANDBOX_KEY, 'POST', '/api/v1/sandbox/wallet/fund', { amount: o.fundAmount });
    if (fund.status !== 200) throw new Error(`funding the wallet answered ${fund.status}: ${fund.raw}`);

    ops = planWorkload(rng, o.requests, o.trial, o.fundAmount);
    const rr = new RoundRobin(ports);
    const client: FleetClient = { rr, recordPort: ports[0]!, t0, requestTimeoutMs: o.requestTimeoutMs, answeredBy: new Map() };
    // Kill points spread over 15-85 % of the plan, one instance down at a time.
    const killPoints = Array.from({ length: o.kills }, () => rng.int(Math.max(1, Math.ceil(ops.length * 0.15)), Math.max(1, Math.floor(ops.length * 0.85)))).sort((a, b) => a - b);
    const killPlan = killPoints.map((at) => ({
      at,
      instance: rng.int(0, o.instances - 1),
      signal: rng.chance(o.sigtermRatio) ? ('SIGTERM' as const) : ('SIGKILL' as const),
      delayMs: rng.int(0, 400),
      downMs: rng.int(200, 2_000),
      countUnsettled: false,
    }));

    let started = 0;
    let killer: Promise<void> = Promise.resolve();
    const killNext = (next = killPlan.shift()) => {
      const plan = next;
      if (!plan) return;
      killer = killer.then(async () => {
        await sleep(plan.delayMs);
        const unsettled = plan.countUnsettled ? await unsettledCount(dbUrl!) : undefined;
        const victim = servers[plan.instance]!;
        const at = Math.round(performance.now() - t0);
        servers[plan.instance] = null;
        const stopped = await victim.kill(plan.signal);
        if (plan.signal === 'SIGTERM' && (stopped.code !== 0 || stopped.escalated)) {
          findings.warnings.push(`SIGTERM did not stop instance ${plan.instance + 1} cleanly: ${JSON.stringify(stopped)}`);
        }
        if (result.killedWith === '-') {
          result.killedWith = plan.signal;
          result.startedBeforeKill = started;
          result.unansweredAtKill = ops.filter((op) => op.attempts.length > 0 && op.attempts.every((a) => a.status === undefined)).length;
        }
        await sleep(plan.downMs);
        servers[plan.instance] = await RailyardProcess.start(serverOptions(plan.instance));
        fleet.kills.push({ instance: plan.instance + 1, signal: plan.signal, at, downMs: Math.round(performance.now() - t0) - at, ...(unsettled === undefined ? {} : { unsettled }) });
      });
    };
    const deadline = Date.now() + 240_000;
    const worker = async () => {
      while (started < ops.length && Date.now() < deadline) {
        const op = ops[started++]!;
        while (killPlan.length && started >= killPlan[0]!.at) killNext();
        await untilAnswered(op, 'first-send', client, deadline);
      }
    };
    await Promise.all(Array.from({ length: o.clients }, worker));
    while (killPlan.length) killNext(); // the plan ran out first: kill anyway
    await killer;

    // Answered requests re-sent to another instance must replay the same answer.
    const acknowledged = ops.filter((op) => firstAcknowledged(op));
    const sample = rng.sample(acknowledged, o.sampleSize);
    result.replaySampled = sample.length;
    let nextSample = 0;
    await Promise.all(
      Array.from({ length: o.clients }, async () => {
        while (nextSample < sample.length) await untilAnswered(sample[nextSample++]!, 'replay-sample', client, Date.now() + 60_000);
      }),
    );

    if (o.clock === 'system') {
      // One more kill while the callbacks of the last requests come in (5 to 10 s after their
      // acceptance) and their webhooks go out: on a SQLite file, while the job thread settles them.
      killNext({
        at: ops.length,
        instance: rng.int(0, o.instances - 1),
        signal: rng.chance(o.sigtermRatio) ? 'SIGTERM' : 'SIGKILL',
        delayMs: rng.int(0, 3_000),
        downMs: rng.int(200, 2_000),
        countUnsettled: true,
      });
      await killer;
      // Real time: every callback falls due within seconds; the status polls (minutes away) are not waited for.
      await settleWebhooks(dbUrl, 120_000, { unsettled: true });
    } else {
      // The clock advanced through every instance in turn: an advance on any one is the fleet's.
      let elapsed = 0;
      let step = 0;
      while (elapsed < o.settleSeconds) {
        const seconds = elapsed < 60 ? 5 : 60;
        const port = ports[step++ % ports.length]!;
        const res = await apiCall(port, SANDBOX_KEY, 'POST', '/api/v1/sandbox/clock/advance', { seconds, wait: true }, 120_000);
        if (res.status !== 200)
          findings.serverErrors.push(`POST /api/v1/sandbox/clock/advance {"seconds":${seconds}} on port ${port} at +${elapsed} s answered ${res.status} ${res.raw.slice(0, 300)}`);
        elapsed += seconds;
      }
      await settleWebhooks(dbUrl, 15_000);
    }

    const api = await checkViaApi(ports[rng.int(0, ports.length - 1)]!, SANDBOX_KEY, ops, findings);
    for (let i = 0; i < servers.length; i++) {
      const s = servers[i];
      servers[i] = null;
      if (!s) continue;
      const stopped = await s.kill('SIGTERM');
      if (stopped.code !== 0 || stopped.escalated) findings.warnings.push(`the final graceful stop of instance ${i + 1} did not exit cleanly: ${JSON.stringify(stopped)}`);
    }
    fleet.sendsPerInstance = rr.sends;

    checkAnswers(ops, findings);
    const store = await openStore(dbUrl);
    try {
      await checkDatabase(store, ops, o.fundAmount, api, findings);
      await checkFleet(store, receiver.receipts, fleet, o.webhookTimeoutMs, findings);
    } finally {
      await store.close();
    }
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
  } finally {
    for (const s of servers) if (s) await s.kill('SIGKILL').catch(() => undefined);
    await receiver.close();
    // A kept trial keeps the database's evidence too: the cluster goes with the run (a SQLite file stays in the trial's directory).
    if (dbUrl && o.cluster) {
      if ((o.keep && trialFailed(result)) || o.keepAll) await dumpTables(dbUrl, join(dir, 'database.json')).catch((err) => findings.warnings.push(`dumping the database failed: ${String(err)}`));
      await o.cluster.dropDatabase(dbUrl).catch(() => undefined);
    }
  }

  result.requests = ops.filter((op) => op.attempts.length > 0).length;
  result.acknowledged = ops.filter((op) => firstAcknowledged(op)).length;
  result.retried = ops.reduce((n, op) => n + op.attempts.filter((a) => a.phase === 'retry').length, 0);
  result.unavailable = ops.filter((op) => op.attempts.some((a) => a.status === 502 && acknowledgedId(op.kind, a))).length;
  result.logErrors = logFiles.flatMap((file, i) => logErrors(file).map((line) => `instance ${i + 1}: ${line}`));
  writeFileSync(join(dir, 'requests.jsonl'), `${ops.map((op) => JSON.stringify(op)).join('\n')}\n`);
  writeFileSync(join(dir, 'webhooks.jsonl'), `${receiver.receipts.map((r) => JSON.stringify(r)).join('\n')}\n`);
  writeFileSync(join(dir, 'findings.json'), JSON.stringify({ ...result, findings }, null, 2));
  if ((trialFailed(result) && o.keep) || o.keepAll) result.kept = true;
  else rmSync(dir, { recursive: true, force: true });
  return result;
}

const DUMPED_TABLES = ['charges', 'transfers', 'idempotency_keys', 'outbox_events', 'jobs', 'webhook_deliveries', 'webhook_attempts', 'ledger_journals', 'rail_attempts', 'late_settlements'];

/** The tables a diagnosis needs, as JSON, for a kept trial. */
async function dumpTables(dbUrl: string, file: string): Promise<void> {
  const store = await openStore(dbUrl);
  try {
    const dump: Record<string, unknown[]> = {};
    for (const table of DUMPED_TABLES) {
      const order = ['charges', 'transfers', 'idempotency_keys'].includes(table) ? 'created_at' : 'seq';
      dump[table] = await store.all(`SELECT * FROM ${table} ORDER BY ${order}`);
    }
    writeFileSync(
      file,
      JSON.stringify(dump, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 1),
    );
  } finally {
    await store.close();
  }
}

/**
 * Waits (real time) until no delivery is pending and every event has been dispatched, or the time
 * is up; with `unsettled`, also until every charge and transfer has settled and no key is in
 * flight (on the system clock callbacks come seconds later), so that what the API says next is
 * what the database will hold.
 */
export async function settleWebhooks(dbUrl: string, maxMs: number, o: { unsettled?: boolean; pollMs?: number } = {}): Promise<void> {
  const store = await openStore(dbUrl);
  try {
    const until = Date.now() + maxMs;
    while (Date.now() < until) {
      if ((await stillToDo(store, o.unsettled === true)) === 0) return;
      await sleep(o.pollMs ?? 250);
    }
  } finally {
    await store.close();
  }
}

/** Deliveries pending and events not yet fanned out; with `unsettled`, also charges and transfers not settled and keys in flight. */
async function stillToDo(db: Db, unsettled: boolean): Promise<number> {
  const records = unsettled
    ? " + (SELECT COUNT(*) FROM charges WHERE status NOT IN ('success', 'failed')) + (SELECT COUNT(*) FROM transfers WHERE status NOT IN ('success', 'failed')) + (SELECT COUNT(*) FROM idempotency_keys WHERE state = 'in_flight')"
    : '';
  const row = await db.get<{ n: number }>(`SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending') + (SELECT COUNT(*) FROM outbox_pending)${records} AS n`);
  return Number(row?.n ?? 0);
}

/** What is still to settle at this moment (stillToDo, records included), read on a connection of its own. */
async function unsettledCount(dbUrl: string): Promise<number> {
  const store = await openStore(dbUrl);
  try {
    return await stillToDo(store, true);
  } finally {
    await store.close();
  }
}

/**
 * The fleet's own checks, from the receiver's log and the shared database:
 * - a webhook received twice is an at-least-once retry only when its first receipt came while
 *   a killed instance may have had it in flight (within the webhook timeout before a kill);
 *   any other second receipt is a duplicate delivery;
 * - a delivery with two 2xx attempts recorded, or one attempt number recorded twice, means its job ran twice;
 * - an event emitted twice for one object means a job (callback, poll) ran twice; but for
 *   `<object>.late_success_reversed`, which is once per abandoned provider that moved the money,
 *   once per late settlement the database holds for the object (one per provider, by a unique key);
 * - a delivery the database calls delivered must have been received.
 */
/** How long after a kill a webhook the killed instance had already sent may reach the receiver. */
export const RECEIPT_AFTER_KILL_MS = 250;

export async function checkFleet(db: Db, receipts: Receipt[], fleet: FleetFigures, webhookTimeoutMs: number, f: Findings): Promise<void> {
  const events = await db.all<{ id: string; type: string; object_id: string }>("SELECT id, type, object_id FROM outbox_events WHERE environment = 'test'");
  const deliveries = await db.all<{ id: string; event_id: string; status: string }>("SELECT id, event_id, status FROM webhook_deliveries WHERE environment = 'test'");
  const attempts = await db.all<{ delivery_id: string; attempt: number; http_status: number | null }>('SELECT delivery_id, attempt, http_status FROM webhook_attempts');
  const lateSettlements = await db.all<{ object_id: string }>("SELECT object_id FROM late_settlements WHERE environment = 'test'");
  fleet.events = events.length;
  fleet.receipts = receipts.length;

  const byEvent = new Map<string, Receipt[]>();
  for (const r of receipts) byEvent.set(r.id, [...(byEvent.get(r.id) ?? []), r]);
  const killTimes = fleet.kills.map((k) => k.at);
  // A receipt up to RECEIPT_AFTER_KILL_MS after a kill may still be the killed instance's: its
  // request was on the wire when it died, and the receiver read it a moment later.
  const inFlightAtKill = (at: number) => killTimes.some((k) => at - k <= RECEIPT_AFTER_KILL_MS && k - at <= webhookTimeoutMs);
  for (const [id, got] of byEvent) {
    for (const again of got.slice(1)) {
      const previous = got[got.indexOf(again) - 1]!;
      if (inFlightAtKill(previous.at)) fleet.atLeastOnceRetries++;
      else
        f.webhookDuplicates.push(
          `event ${id} (${again.type}) received again at +${again.at} ms; before at +${previous.at} ms, with no kill in the ${webhookTimeoutMs} ms after it (or the ${RECEIPT_AFTER_KILL_MS} ms before)`,
        );
    }
  }

  const attemptsOf = new Map<string, { attempt: number; http_status: number | null }[]>();
  for (const a of attempts) attemptsOf.set(a.delivery_id, [...(attemptsOf.get(a.delivery_id) ?? []), a]);
  for (const d of deliveries) {
    const list = attemptsOf.get(d.id) ?? [];
    const ok = list.filter((a) => a.http_status !== null && a.http_status >= 200 && a.http_status < 300);
    if (ok.length > 1) f.jobsTwice.push(`delivery ${d.id} of event ${d.event_id} has ${ok.length} successful attempts recorded`);
    const numbers = list.map((a) => Number(a.attempt));
    const repeated = [...new Set(numbers.filter((n, i) => numbers.indexOf(n) !== i))];
    if (repeated.length) f.jobsTwice.push(`delivery ${d.id} of event ${d.event_id} recorded attempt number(s) ${repeated.join(', ')} more than once`);
    if (d.status === 'delivered' && !byEvent.has(d.event_id)) {
      fleet.lostWebhooks++;
      f.lost.push(`webhook delivery ${d.id} of event ${d.event_id} is delivered in the database but the receiver never got it`);
    }
  }
  const delivered = new Set(deliveries.filter((d) => d.status === 'delivered').map((d) => d.event_id));
  fleet.undeliveredEvents = events.filter((e) => !delivered.has(e.id)).length;
  if (fleet.undeliveredEvents) f.warnings.push(`${fleet.undeliveredEvents} of ${events.length} event(s) not delivered after settling`);

  const emitted = new Map<string, number>();
  for (const e of events) emitted.set(`${e.object_id} ${e.type}`, (emitted.get(`${e.object_id} ${e.type}`) ?? 0) + 1);
  const lateOf = new Map<string, number>();
  for (const l of lateSettlements) lateOf.set(l.object_id, (lateOf.get(l.object_id) ?? 0) + 1);
  const allowed = (what: string) => (what.endsWith('.late_success_reversed') ? Math.max(1, lateOf.get(what.split(' ')[0]!) ?? 0) : 1);
  for (const [what, n] of emitted) if (n > allowed(what)) f.jobsTwice.push(`event ${what} was emitted ${n} times`);
}
