// Several railyard instances on one PostgreSQL database (issue 15): what each shares with the others.
// Every test starts two or three apps on one fresh database of a throwaway cluster, as a fleet
// behind a load balancer would run them.
import express from 'express';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createApp, type Railyard } from '../../src/app.ts';
import { VirtualClock } from '../../src/kernel/clock.ts';
import { JOB_LEASE_MS } from '../../src/scheduler/scheduler.ts';
import { PostgresStore } from '../../src/store/postgres-store.ts';
import { saveHeartbeat } from '../../src/store/runtime-state.ts';
import type { ScenarioRule } from '../../src/scenarios/scenario-schema.ts';
import { fleetHarness } from '../support/fleet-harness.ts';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

const { postgres, cleanups } = fleetHarness();

/** `n` served sandboxes started together on one fresh database (with the sandbox scenarios, or `rules`). */
async function fleet(n: number, rules?: readonly ScenarioRule[]): Promise<TestSandbox[]> {
  const db = await (await postgres()).createDatabase();
  const sandboxes = await Promise.all(Array.from({ length: n }, () => startTestSandbox({ trading: { market: { volatility_bps: 0 } }, db }, rules)));
  for (const sb of sandboxes) cleanups.push(() => sb.close());
  return sandboxes;
}

/** An app on `db` with a wall clock the test moves: leases and heartbeats are in real time. */
async function instance(db: string, wallClock: VirtualClock): Promise<Railyard> {
  const ry = await createApp(buildConfig({ db, clock: 'virtual', seed: 7, log_requests: false }), { wallClock });
  cleanups.push(() => ry.close());
  return ry;
}

/** Records which instance ran each job of kind `test.note`. */
function recordRuns(instances: Railyard[]): { instance: number; name: string }[] {
  const runs: { instance: number; name: string }[] = [];
  for (const [instance, ry] of instances.entries()) ry.scheduler.register('test.note', async (p: { name: string }) => void runs.push({ instance, name: p.name }));
  return runs;
}

describe('several instances on one PostgreSQL database', () => {
  it('runs every job exactly once when three instances run their schedulers at the same time', async () => {
    const sandboxes = await fleet(3);
    const instances = sandboxes.map((sb) => sb.ry);
    const runs = recordRuns(instances);
    const [a] = instances;
    const now = a!.clock.now();
    // Jobs due at a few instants, so claims of whole instants and single jobs both race.
    for (let i = 0; i < 60; i++) await a!.scheduler.schedule(a!.store, { kind: 'test.note', runAt: now - (i % 4), payload: { name: `job-${i}` } });
    const ran = await Promise.all(instances.flatMap((ry) => [ry.scheduler.runDue(), ry.scheduler.runDue()]));
    expect(ran.reduce((x, y) => x + y, 0)).toBe(60);
    expect(runs.map((r) => r.name).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `job-${i}`).sort());
    expect(await a!.scheduler.pending()).toEqual({ count: 0, nextRunAt: null });
  });

  it("leaves a live instance's claimed job alone, even across another instance's start, and takes it over once the lease of a dead one runs out", async () => {
    const db = await (await postgres()).createDatabase();
    const wallA = new VirtualClock(Date.UTC(2026, 10, 25));
    const wallB = new VirtualClock(wallA.now());
    const a = await instance(db, wallA);
    const b = await instance(db, wallB);
    const runs: string[] = [];
    let unblock!: () => void;
    const blocked = new Promise<void>((done) => (unblock = done));
    // A runs the job and hangs in it (as a process about to be killed would); B would finish it.
    a.scheduler.register('test.slow', async () => {
      runs.push('a');
      await blocked;
    });
    b.scheduler.register('test.slow', async () => void runs.push('b'));
    await a.scheduler.schedule(a.store, { kind: 'test.slow', runAt: a.clock.now(), payload: {} });
    const aRunning = a.scheduler.runDue();
    cleanups.push(async () => {
      unblock();
      await aRunning;
    });
    await expect.poll(() => runs).toEqual(['a']);

    expect(await b.scheduler.runDue()).toBe(0);
    // A third instance starting now frees no claim of a live instance.
    const wallC = new VirtualClock(wallA.now());
    const c = await instance(db, wallC);
    c.scheduler.register('test.slow', async () => void runs.push('c'));
    expect(await c.scheduler.runDue()).toBe(0);
    expect(await b.scheduler.runDue()).toBe(0);
    expect(runs).toEqual(['a']);

    // A dies: its heartbeat stops at wallA. Once B's real time passes A's lease, B takes the job.
    wallB.set(wallA.now() + JOB_LEASE_MS + 1);
    expect(await b.scheduler.runDue()).toBe(1);
    expect(runs).toEqual(['a', 'b']);
  });

  it("recovers only the in-flight Idempotency-Keys of instances whose heartbeat stopped, never a live one's", async () => {
    const db = await (await postgres()).createDatabase();
    const wall = new VirtualClock(Date.UTC(2026, 10, 25));
    const a = await instance(db, wall);
    // A request of A's is in flight (a resource kind with no recovery: recovering it just counts).
    await a.store.run(
      "INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, boot, created_at, expires_at) VALUES ('test', 'm', 'k1', 'h', 'in_flight', 'zzz_1', ?, 0, ?)",
      [a.boot, a.clock.now() + 86_400_000],
    );
    const laterWall = new VirtualClock(wall.now());
    const b = await instance(db, laterWall);
    expect(await b.recoverInterrupted()).toBe(0);
    expect(await b.scheduler.liveBoots()).toEqual([a.boot]);
    laterWall.set(wall.now() + JOB_LEASE_MS + 1);
    expect(await b.scheduler.liveBoots()).toEqual([]);
    expect(await b.recoverInterrupted()).toBe(1);
  });

  it('knows an instance dead the moment its connection drops (as under SIGKILL), its heartbeat still fresh, and recovers its in-flight keys at once', async () => {
    const db = await (await postgres()).createDatabase();
    const wall = new VirtualClock(Date.UTC(2026, 10, 25));
    const b = await instance(db, wall);
    // Another process, boot 900: it holds its presence and has just beaten, and a request of its is in flight.
    const other = await PostgresStore.open(db);
    await other.holdPresence(900);
    await saveHeartbeat(other, 900, wall.now());
    await other.run(
      "INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, boot, created_at, expires_at) VALUES ('test', 'm', 'k1', 'h', 'in_flight', 'zzz_1', 900, 0, ?)",
      [b.clock.now() + 86_400_000],
    );
    expect(await b.scheduler.liveBoots()).toEqual([900]);
    expect(await b.recoverInterrupted()).toBe(0);
    // It dies without a word: its connections drop, and its heartbeat row stays, as fresh as before.
    await other.close();
    expect(await b.scheduler.liveBoots()).toEqual([]);
    expect(await b.recoverInterrupted()).toBe(1);
  });

  it('opens its presence again when the session is lost while the process lives (a restarted server), so it is not taken for dead', async () => {
    const db = await (await postgres()).createDatabase();
    const a = await instance(db, new VirtualClock(Date.UTC(2026, 10, 25)));
    const b = await instance(db, new VirtualClock(Date.UTC(2026, 10, 25)));
    expect(await b.scheduler.liveBoots()).toEqual([a.boot]);
    await b.store.get(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND objid = ? AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      [a.boot],
    );
    await vi.waitFor(async () => expect(await b.scheduler.liveBoots()).toEqual([a.boot]), { timeout: 5_000 });
  });

  it('finishes, on a surviving instance, a charge whose initiation a dead instance left in flight', async () => {
    const [a, b] = await fleet(2);
    await a!.fund(50_000);
    const charge = await a!.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'cut-off' });
    expect(charge.status).toBe(201);
    const id = charge.body.data.id as string;
    // As if boot 999 claimed the key and died before the provider answered: no heartbeat of its own.
    await a!.ry.store.run('UPDATE charges SET provider = NULL, provider_reference = NULL WHERE id = ?', [id]);
    await a!.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', boot = 999, response_status = NULL, response_body = NULL WHERE resource_id = ?", [id]);
    await a!.ry.store.run('DELETE FROM rail_attempts WHERE ref_id = ?', [id]);
    const keyState = async () => (await a!.ry.store.get<{ state: string }>('SELECT state FROM idempotency_keys WHERE resource_id = ?', [id]))!.state;
    // A heartbeat of B's that takes the fleet's sweep turn recovers it (one instance sweeps at a time).
    await expect
      .poll(
        async () => {
          await b!.ry.scheduler.heartbeat();
          return keyState();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe('done');
    expect((await b!.get(`/api/v1/charges/${id}`)).body.data).toMatchObject({ id, provider: 'mtn-momo', status: 'pending_provider' });
  });

  it('frees the claims of an instance that stops cleanly at once', async () => {
    const db = await (await postgres()).createDatabase();
    const wall = new VirtualClock(Date.UTC(2026, 10, 25));
    const a = await instance(db, wall);
    const b = await instance(db, wall);
    const runs = recordRuns([a, b]);
    await a.scheduler.schedule(a.store, { kind: 'test.note', runAt: a.clock.now(), payload: { name: 'left behind' } });
    // A claims the job (with its instant) but stops before running it.
    await a.store.run('UPDATE jobs SET claimed_by = ?, lease_until = ?', [a.boot, wall.now() + JOB_LEASE_MS]);
    expect(await b.scheduler.runDue()).toBe(0);
    await a.close();
    expect(await b.scheduler.runDue()).toBe(1);
    expect(runs).toEqual([{ instance: 1, name: 'left behind' }]);
  });
});

describe('webhook fan-out across instances', () => {
  it('delivers each event once when three instances fan the outbox out at the same time', async () => {
    const received: string[] = [];
    const app = express();
    app.post('/hooks', express.raw({ type: () => true }), (req, res) => {
      received.push(String(req.headers['webhook-id']));
      res.status(200).send('thanks');
    });
    const server: Server = createServer(app);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    });
    const sandboxes = await fleet(3);
    const [a] = sandboxes;
    const created = await a!.post('/api/v1/webhook_endpoints', { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` });
    expect(created.status).toBe(201);
    // Quotes made round-robin across the fleet: one quote.created event each.
    const quotes: string[] = [];
    for (let i = 0; i < 18; i++) {
      const res = await sandboxes[i % 3]!.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 + i });
      expect(res.status).toBe(201);
      quotes.push(res.body.data.reference);
    }
    const eventIds = (await Promise.all(quotes.map((q) => a!.ry.outbox.forObject(a!.ry.store, q)))).flat().map((e) => e.id);
    expect(eventIds).toHaveLength(18);
    // Every instance fans the same committed events out at once, then runs the delivery jobs.
    await Promise.all(sandboxes.flatMap((sb) => [sb.ry.dispatcher.fanOut(), sb.ry.dispatcher.fanOut()]));
    for (let round = 0; round < 3; round++) await Promise.all(sandboxes.flatMap((sb) => [sb.ry.scheduler.runDue(), sb.ry.scheduler.runDue()]));
    expect(received.sort()).toEqual([...eventIds].sort());
    expect(await a!.ry.store.get("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'")).toEqual({ n: 18 });
    // One fan-out per event: one delivery job each, none scheduled for a delivery another instance made.
    expect(await a!.ry.store.get("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'webhook.deliver'")).toEqual({ n: 18 });
  });
});

describe('one virtual clock for the fleet', () => {
  it('moves every instance when one advances: the next request anywhere sees the new time', async () => {
    const [a, b, c] = await fleet(3);
    const start = a!.ry.clock.now();
    const advanced = await a!.post('/api/v1/sandbox/clock/advance', { seconds: 3600 });
    expect(advanced.status).toBe(200);
    for (const sb of [b!, c!]) {
      const res = await sb.get('/api/v1/sandbox/clock');
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.data.now)).toBe(start + 3_600_000);
    }
    // Advances add up wherever they are made.
    expect((await c!.post('/api/v1/sandbox/clock/advance', { seconds: 60 })).status).toBe(200);
    expect(Date.parse((await a!.get('/api/v1/sandbox/clock')).body.data.now)).toBe(start + 3_660_000);
  });

  it('runs the jobs due during an advance across the fleet, each once at its own time, and answers when all are done', async () => {
    const sandboxes = await fleet(3);
    const instances = sandboxes.map((sb) => sb.ry);
    const [a, b, c] = instances;
    const start = a!.clock.now();
    const seen: { name: string; at: number; instance: number }[] = [];
    for (const [instance, ry] of instances.entries())
      ry.scheduler.register('test.note', async (p: { name: string }) => {
        seen.push({ name: p.name, at: ry.clock.now(), instance });
        // A job running elsewhere holds the advance until it is done.
        await new Promise((done) => setTimeout(done, 5));
      });
    const due = Array.from({ length: 12 }, (_, i) => ({ name: `job-${i}`, runAt: start + 1_000 * (1 + Math.floor(i / 3)) }));
    for (const job of due) await a!.scheduler.schedule(a!.store, { kind: 'test.note', runAt: job.runAt, payload: { name: job.name } });
    // B and C poll for due jobs while A advances.
    b!.scheduler.start(5);
    c!.scheduler.start(5);
    await a!.scheduler.advanceBy(10_000);
    expect(await a!.scheduler.pending()).toEqual({ count: 0, nextRunAt: null });
    expect(seen.map((s) => s.name).sort()).toEqual(due.map((d) => d.name).sort());
    for (const s of seen) expect(s.at).toBeGreaterThanOrEqual(due.find((d) => d.name === s.name)!.runAt);
    await b!.scheduler.stop();
    await c!.scheduler.stop();
    await b!.scheduler.runDue();
    expect(b!.clock.now()).toBe(start + 10_000);
  });
});

/** The sandbox scenarios with `yaml`'s rules first. */
function rulesWith(yaml: string): ScenarioRule[] {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-fleet-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'fleet.yaml'), yaml);
  return loadScenarios([join(dir, 'fleet.yaml'), SANDBOX_SCENARIOS]).rules;
}

/** A rule under which `msisdn` answers a name enquiry with the next of `names` at each call, then the last. */
const nameSequence = (msisdn: string, names: string[]) =>
  rulesWith(`version: 1
name: fleet
rules:
  - name: a number that answers a new name each call
    match: { msisdn: "${msisdn}" }
    resolve:
      any: [${names.map((name) => `{ name: ${name} }`).join(', ')}]
`);

describe('scenario state, outages and mock transactions across instances', () => {
  it('continues a scenario sequence advanced on one instance on the next, whichever serves the call', async () => {
    const rules = nameSequence('0241110001', ['Ama First', 'Ama Second', 'Ama Third']);
    const [a, b, c] = await fleet(3, rules);
    const names: string[] = [];
    for (const sb of [a!, b!, c!, a!]) {
      const res = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0241110001' });
      expect(res.status).toBe(200);
      names.push(res.body.data.name);
    }
    expect(names).toEqual(['Ama First', 'Ama Second', 'Ama Third', 'Ama Third']);
    // Every instance counts the calls the fleet made.
    const listed = (await c!.get('/api/v1/sandbox/scenarios')).body.data[0].rules[0];
    expect(listed).toMatchObject({ name: 'a number that answers a new name each call', matched_count: 4 });
  });

  it('takes each step of a sequence once when instances answer calls at the same time', async () => {
    const rules = nameSequence('0241110002', ['Step One', 'Step Two', 'Step Three', 'Step Four', 'Step Five', 'Step Six']);
    const sandboxes = await fleet(3, rules);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => sandboxes[i % 3]!.post('/api/v1/resolve/momo-name', { msisdn: '0241110002' })));
    expect(answers.map((r) => r.body.data.name).sort()).toEqual(['Step Five', 'Step Four', 'Step One', 'Step Six', 'Step Three', 'Step Two']);
  });

  it('takes each step once when many calls arrive at once on each of two instances (decisions take turns on the state row, not in a queue)', async () => {
    const steps = Array.from({ length: 10 }, (_, i) => `Step ${i + 1}`);
    const rules = nameSequence('0241110003', steps);
    const [a, b] = await fleet(2, rules);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i < 5 ? a! : b!).post('/api/v1/resolve/momo-name', { msisdn: '0241110003' })));
    expect(answers.map((r) => r.body.data.name).sort()).toEqual([...steps].sort());
    const listed = (await a!.get('/api/v1/sandbox/scenarios')).body.data[0].rules[0];
    expect(listed).toMatchObject({ matched_count: 10 });
  });

  it('sees an outage set on one instance on the others, and its end too', async () => {
    const [a, b, c] = await fleet(3);
    expect((await a!.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true })).status).toBe(200);
    const statusOn = async (sb: TestSandbox) => (await sb.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo').status;
    expect(await statusOn(b!)).toBe('down');
    expect(await statusOn(c!)).toBe('down');
    // B routes around the outage A declared: the name enquiry fails over to the next provider.
    const resolved = await b!.post('/api/v1/resolve/momo-name', { msisdn: '0551234987' });
    expect(resolved.body.data).toMatchObject({ name: 'Kwame Mensah' });
    expect(resolved.body.data.provider).not.toBe('mtn-momo');
    expect((await c!.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: false })).status).toBe(200);
    expect(await statusOn(a!)).toBe('up');
  });

  it("knows at one instance's mock a transaction another instance's mock took, and takes the token another issued", async () => {
    const [a, b] = await fleet(2);
    const charge = await a!.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(charge.status).toBe(201);
    const taken = await a!.ry.store.get<{ reference: string }>("SELECT reference FROM mock_transactions WHERE provider = 'mtn-momo' AND book = 'collection'");
    expect(taken).toBeDefined();
    // A client of the MTN mock gets its token from A and asks B about the transaction A took.
    const mtn = (await a!.get('/api/v1/sandbox/providers')).body.data.find((p: { name: string }) => p.name === 'mtn-momo').mock;
    const credential = (name: string) => mtn.credentials.find((c: { name: string }) => c.name === name).value as string;
    const token = await fetch(`${a!.baseUrl}/mocks/mtn-momo/collection/token/`, {
      method: 'POST',
      headers: {
        'Ocp-Apim-Subscription-Key': credential('collection subscription key'),
        Authorization: `Basic ${Buffer.from(`${credential('API user')}:${credential('API key')}`).toString('base64')}`,
      },
    });
    expect(token.status).toBe(200);
    const status = await fetch(`${b!.baseUrl}/mocks/mtn-momo/collection/v1_0/requesttopay/${taken!.reference}`, {
      headers: {
        'Ocp-Apim-Subscription-Key': credential('collection subscription key'),
        Authorization: `Bearer ${((await token.json()) as { access_token: string }).access_token}`,
        'X-Target-Environment': credential('target environment'),
      },
    });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ status: 'PENDING' });
  });
});

describe('the event stream across instances', () => {
  it('shows a listener on one instance the events written on the others, each once', async () => {
    const [a, b, c] = await fleet(3);
    const heardOnA: string[] = [];
    const heardOnB: string[] = [];
    const stopA = a!.ry.stream.subscribe((p) => heardOnA.push(p.event.id));
    const stopB = b!.ry.stream.subscribe((p) => heardOnB.push(p.event.id));
    cleanups.push(async () => {
      stopA();
      stopB();
    });
    // Let the followers note where the outbox ends before anything is written.
    await new Promise((done) => setTimeout(done, 500));
    const written: string[] = [];
    for (const sb of [a!, b!, c!, c!]) {
      const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
      expect(quote.status).toBe(201);
      written.push(...(await sb.ry.outbox.forObject(sb.ry.store, quote.body.data.reference)).map((e) => e.id));
    }
    // Fanning out (on any instance) publishes nothing more on a shared database.
    await Promise.all([a!.ry.scheduler.runDue(), b!.ry.scheduler.runDue(), c!.ry.scheduler.runDue()]);
    await expect.poll(() => heardOnB.length).toBe(4);
    await expect.poll(() => heardOnA.length).toBe(4);
    expect(heardOnB).toEqual(written);
    expect(heardOnA).toEqual(written);
  });
});
