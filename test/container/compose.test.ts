import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, planWorkload, recordOperation, type Attempt, type Operation, type Phase } from '../../chaos/client-workload.ts';
import { checkAnswers, checkDatabase, checkViaApi, emptyFindings, FAILURE_KINDS, firstAcknowledged, type Findings } from '../../chaos/reconcile.ts';
import { apiCall, sendRecorded } from '../../chaos/recorded-request.ts';
import { checkFleet, settleWebhooks, type FleetFigures } from '../../chaos/run-fleet-trial.ts';
import { seededRandom } from '../../chaos/seeded-random.ts';
import { freePort, SANDBOX_KEY, SANDBOX_SECRET } from '../../chaos/spawn-server.ts';
import { openStore } from '../../src/store/open-store.ts';
import { ComposeStack } from './compose-stack.ts';
import { baseImages, buildImage, podman, podmanAsync, podmanOk, ROOT, sleep } from './podman.ts';

// deploy/compose.yaml run for real (npm run test:compose): PostgreSQL 15, the migrate step, three
// railyard instances built from the Dockerfile and nginx in front, brought up in the file's order.
// Merchant clients send charges and transfers through the balancer while one instance crashes
// (its process is killed) and its restart policy brings it back; then the chaos harness's fleet
// checks (chaos/): nothing lost or duplicated, every answer replays, the ledger balances, one
// webhook per event. Needs root and podman, so it is not part of `npm test`.
const run = randomUUID().slice(0, 8);
const project = `railyard-compose-${run}`;
const image = `localhost/railyard:compose-test-${run}`;
const INSTANCES = ['railyard-1', 'railyard-2', 'railyard-3'];
const REQUESTS = 120;
const CLIENTS = 8;
const FUND = 5_000_000;
const SEED = 26;
/** The webhook dispatcher's per-attempt timeout (railyard's default): a delivery may be in flight this long at a kill. */
const WEBHOOK_TIMEOUT_MS = 10_000;

const figures: Record<string, unknown> = {};
const findings: Findings = emptyFindings();
const fleet: FleetFigures = { instances: 3, kills: [], sendsPerInstance: [], events: 0, receipts: 0, atLeastOnceRetries: 0, lostWebhooks: 0, undeliveredEvents: 0 };
const receipts: { id: string; type: string; at: number }[] = [];
let stack: ComposeStack;
let receiver: Server;
let lbPort = 0;
/** API requests the crashed instance had logged when it was healthy again. */
let servedBeforeRestart = 0;
let ops: Operation[] = [];
const t0 = performance.now();
const since = () => Math.round(performance.now() - t0);

/** A webhook endpoint on the host, reached from the stack's network at its gateway address. */
async function startReceiver(): Promise<string> {
  receiver = createServer((req, res) => {
    // Stamped on arrival: a delivery in flight at a kill is told apart by when it came.
    const at = since();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let type = '?';
      try {
        type = JSON.parse(Buffer.concat(chunks).toString('utf8'))?.type ?? '?';
      } catch {
        // Not JSON: recorded with an unknown type.
      }
      receipts.push({ id: String(req.headers['webhook-id'] ?? '?'), type, at });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  const port = await freePort();
  await new Promise<void>((done) => receiver.listen(port, '0.0.0.0', done));
  return `http://${stack.gateway()}:${port}/hooks`;
}

/**
 * nginx's own error page (502/504: the instance it chose died with the request): no answer from
 * railyard, so the client re-sends with the same Idempotency-Key, as a merchant would.
 */
const fromBalancer = (status: number, body: string) => status >= 502 && status <= 504 && body.includes('nginx');

/** Sends one operation through the balancer until railyard answers it (bounded). */
async function untilAnswered(op: Operation, first: Phase, deadline: number): Promise<void> {
  let phase = first;
  for (let tries = 1; Date.now() < deadline; tries++) {
    const at = since();
    const out = await sendRecorded(lbPort, recordOperation(op, lbPort, SANDBOX_KEY, SANDBOX_SECRET), 30_000);
    const attempt: Attempt =
      out.ok && !fromBalancer(out.status, out.body)
        ? { phase, at, ms: out.ms, status: out.status, body: out.body, replayed: out.headers['idempotent-replayed'] === 'true' }
        : { phase, at, ms: out.ms, error: out.ok ? `balancer ${out.status}` : out.error };
    op.attempts.push(attempt);
    phase = first === 'replay-sample' ? first : 'retry';
    const conflict = attempt.status === 409 && errorCode(attempt.body) === 'idempotency_conflict';
    if (attempt.status !== undefined && !conflict) return;
    if (tries >= 40) return;
    await sleep(Math.min(2_000, 100 * 2 ** Math.min(tries, 5)));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills the instance's process from the host (a crash, not a stop) and waits until its restart policy has it healthy again. */
async function crash(service: string): Promise<void> {
  const name = stack.container(service);
  const inspect = async (field: string) => Number((await podmanAsync(['inspect', '--format', `{{${field}}}`, name])).stdout);
  const restarts = await inspect('.RestartCount');
  const pid = await inspect('.State.Pid');
  process.kill(pid, 'SIGKILL');
  // The kill's moment is when the process is gone: a webhook that arrives before then may have
  // been in flight from it (the fleet checks count its re-delivery as at-least-once).
  while (alive(pid)) await sleep(5);
  const at = since();
  const until = Date.now() + 60_000;
  while ((await inspect('.RestartCount')) === restarts) {
    if (Date.now() > until) throw new Error(`${service} was not restarted by its restart policy`);
    await sleep(100);
  }
  await stack.waitHealthy(service);
  servedBeforeRestart = (await apiRequestsPerInstance())[INSTANCES.indexOf(service)]!;
  fleet.kills.push({ instance: INSTANCES.indexOf(service) + 1, signal: 'SIGKILL', at, downMs: since() - at });
}

/** API requests each instance logged (RAILYARD_LOG_REQUESTS), across its restarts. */
async function apiRequestsPerInstance(): Promise<number[]> {
  return Promise.all(
    INSTANCES.map(async (s) => {
      const r = await podmanAsync(['logs', stack.container(s)]);
      return `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/api/v1/')).length;
    }),
  );
}

beforeAll(async () => {
  const { NODE_IMAGE, POSTGRES_IMAGE, NGINX_IMAGE } = baseImages();
  figures.buildMs = buildImage(image, NODE_IMAGE);
  lbPort = await freePort();
  stack = new ComposeStack({
    project,
    file: resolve(ROOT, 'deploy/compose.yaml'),
    images: { postgres: POSTGRES_IMAGE, lb: NGINX_IMAGE, migrate: image, ...Object.fromEntries(INSTANCES.map((s) => [s, image])) },
    hostPorts: { '8080': lbPort },
  });
  const up = performance.now();
  await stack.up();
  figures.upMs = Math.round(performance.now() - up);
  figures.readyMs = stack.started;
}, 900_000);

afterAll(async () => {
  receiver?.close();
  stack?.down();
  podman(['rmi', '-f', image]);
  console.log(`compose figures: ${JSON.stringify(figures)}`);
}, 300_000);

describe('deploy/compose.yaml, run', () => {
  it('migrates once, in the migrate step, which exits 0 before any instance starts', () => {
    expect(podmanOk(['inspect', '--format', '{{.State.ExitCode}}', stack.container('migrate')])).toBe('0');
    expect(stack.logs('migrate')).toMatch(/^railyard migrate: PostgreSQL postgres:\/\/railyard:\*\*\*@postgres:5432\/railyard is at schema version \d+$/m);
    const order = stack.started.map((s) => s.service);
    for (const instance of INSTANCES) expect(order.indexOf(instance)).toBeGreaterThan(order.indexOf('migrate'));
    expect(order.at(-1)).toBe('lb');
  });

  it('answers through the load balancer, which publishes the only port', async () => {
    const res = await fetch(`http://127.0.0.1:${lbPort}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
    const published = stack.order().filter((s) => podmanOk(['port', stack.container(s)]) !== '');
    expect(published).toEqual(['lb']);
  });

  it('takes charges and transfers through the balancer while an instance crashes and restarts, losing and duplicating nothing', async () => {
    const hooks = await startReceiver();
    const endpoint = await apiCall(lbPort, SANDBOX_KEY, 'POST', '/api/v1/webhook_endpoints', { url: hooks });
    expect(endpoint.status, endpoint.raw).toBe(201);
    const fund = await apiCall(lbPort, SANDBOX_KEY, 'POST', '/api/v1/sandbox/wallet/fund', { amount: FUND });
    expect(fund.status, fund.raw).toBe(200);
    const before = await apiRequestsPerInstance();

    const rng = seededRandom(SEED);
    ops = planWorkload(rng, REQUESTS, 1, FUND);
    const killAt = Math.floor(ops.length * 0.35);
    let started = 0;
    let crashed: Promise<void> | undefined;
    const deadline = Date.now() + 240_000;
    const loadStart = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (started < ops.length && Date.now() < deadline) {
          const op = ops[started++]!;
          if (started === killAt) crashed = crash('railyard-2');
          await untilAnswered(op, 'first-send', deadline);
        }
      }),
    );
    await crashed;
    figures.loadMs = Math.round(performance.now() - loadStart);

    // Answered requests re-sent through the balancer (to any instance) replay the same answer.
    const sample = rng.sample(
      ops.filter((op) => firstAcknowledged(op)),
      20,
    );
    for (const op of sample) await untilAnswered(op, 'replay-sample', Date.now() + 60_000);

    // Real time: the mocks call back after seconds; let the fleet settle every charge and transfer
    // and deliver what it emitted, so the API's wallet and the records are read at rest.
    const pg = `postgres://railyard:railyard@${stack.address('postgres')}:5432/railyard`;
    await settleWebhooks(pg, 60_000, { unsettled: true, pollMs: 500 });
    const api = await checkViaApi(lbPort, SANDBOX_KEY, ops, findings);
    const after = await apiRequestsPerInstance();
    fleet.sendsPerInstance = after.map((n, i) => n - before[i]!);

    // A graceful stop of every instance (compose stop): exit 0, and the database holds still for the checks.
    for (const s of INSTANCES) podmanOk(['stop', '-t', '30', stack.container(s)], 60_000);
    const exitCodes = INSTANCES.map((s) => podmanOk(['inspect', '--format', '{{.State.ExitCode}}', stack.container(s)]));

    checkAnswers(ops, findings);
    const db = await openStore(pg);
    try {
      await checkDatabase(db, ops, FUND, api, findings);
      await checkFleet(db, receipts, fleet, WEBHOOK_TIMEOUT_MS, findings);
    } finally {
      await db.close();
    }
    figures.requests = ops.filter((op) => op.attempts.length > 0).length;
    figures.sends = ops.reduce((n, op) => n + op.attempts.length, 0);
    figures.noAnswer = ops.reduce((n, op) => n + op.attempts.filter((a) => a.status === undefined).length, 0);
    figures.acknowledged = ops.filter((op) => firstAcknowledged(op)).length;
    figures.fleet = fleet;
    figures.conflictsAfterRestart = findings.conflictAnswers;
    figures.warnings = findings.warnings;

    const { warnings: _notFailures, conflictsAfterRestart: _retriedConflicts, conflictAnswers: _n, ...failures } = findings;
    // Every kind of failure the chaos checks know, empty (a kind they learn is held here too).
    expect(failures).toEqual(Object.fromEntries(FAILURE_KINDS.filter((kind) => kind !== 'conflictsAfterRestart').map((kind) => [kind, []])));
    expect(fleet.kills).toHaveLength(1);
    expect(fleet.events).toBeGreaterThan(0);
    // One webhook per event: every event delivered was received, and none twice beyond an at-least-once retry at the crash.
    expect(new Set(receipts.map((r) => r.id)).size).toBe(fleet.receipts - fleet.atLeastOnceRetries);
    expect(fleet.lostWebhooks).toBe(0);
    // All three instances served merchant requests through the balancer, the restarted one too.
    for (const n of fleet.sendsPerInstance) expect(n).toBeGreaterThan(0);
    figures.servedByRestartedInstance = after[1]! - servedBeforeRestart;
    expect(after[1]!).toBeGreaterThan(servedBeforeRestart);
    expect(exitCodes).toEqual(['0', '0', '0']);
  });
});
