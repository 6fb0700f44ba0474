import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { JOB_LEASE_MS, ROUND_SIZE, Scheduler } from '../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/**
 * One jobs table and the processes that use it: each its own scheduler and boot. `shared`, the
 * table is one several processes use (leased claims, as on PostgreSQL); otherwise it is the
 * SQLite default, one process's own.
 */
function sharedTable() {
  const store = new SqliteStore(':memory:');
  stores.push(store);
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const wall = new VirtualClock(Date.UTC(2026, 10, 23));
  const ids = new IdGenerator(clock, new SeededRandom(3));
  const process = (boot: number, shared = false) => {
    const ran: string[] = [];
    const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: wall, boot, shared });
    scheduler.register('note', async (payload: { name: string }) => void ran.push(payload.name));
    return { scheduler, ran };
  };
  return { store, clock, wall, process };
}

describe('the scheduler', () => {
  it('runs due jobs in (run_at, creation) order, including those a job schedules for now', async () => {
    const { store, process } = sharedTable();
    const { scheduler, ran } = process(1);
    scheduler.register('chain', async () => {
      await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + 2_000, payload: { name: 'scheduled by chain' } });
    });
    await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + 5_000, payload: { name: 'late' } });
    await scheduler.schedule(store, { kind: 'chain', runAt: VIRTUAL_EPOCH + 1_000, payload: {} });
    await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + 2_000, payload: { name: 'early' } });
    expect(await scheduler.pending()).toEqual({ count: 3, nextRunAt: VIRTUAL_EPOCH + 1_000 });
    expect(await scheduler.advanceBy(10_000)).toBe(4);
    expect(ran).toEqual(['early', 'scheduled by chain', 'late']);
    expect(await scheduler.pending()).toEqual({ count: 0, nextRunAt: null });
  });

  it('runs in the same look the jobs that fall due while it runs, on a clock that moves: a webhook follows its callback without waiting for the next poll', async () => {
    const { store, clock, process } = sharedTable();
    const { scheduler, ran } = process(1);
    scheduler.register('callback', async () => {
      clock.set(clock.now() + 5); // time passes while the job runs, as on the system clock
      await scheduler.schedule(store, { kind: 'note', runAt: clock.now(), payload: { name: 'webhook, due after the look began' } });
    });
    await scheduler.schedule(store, { kind: 'callback', runAt: clock.now(), payload: {} });
    expect(await scheduler.runDue()).toBe(2);
    expect(ran).toEqual(['webhook, due after the look began']);
  });

  it('ends a look that work keeps feeding when it stops, at the next round, and looks again when asked', async () => {
    const { store, clock, process } = sharedTable();
    const { scheduler, ran } = process(1);
    let rounds = 0;
    let feeding = true;
    let stopped: Promise<void> | undefined;
    scheduler.register('feed', async () => {
      clock.set(clock.now() + 1);
      if (++rounds === 3) stopped = scheduler.stop();
      if (feeding) await scheduler.schedule(store, { kind: 'feed', runAt: clock.now(), payload: {} });
    });
    await scheduler.schedule(store, { kind: 'feed', runAt: clock.now(), payload: {} });
    expect(await scheduler.runDue()).toBe(3);
    await stopped;
    feeding = false;
    await scheduler.schedule(store, { kind: 'note', runAt: clock.now(), payload: { name: 'after the stop' } });
    expect(await scheduler.runDue()).toBe(2);
    expect(ran).toEqual(['after the stop']);
  });

  it('leaves a job another process has claimed alone until its lease runs out, then runs it', async () => {
    const { store, wall, process } = sharedTable();
    const a = process(1, true);
    const b = process(2, true);
    await a.scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name: 'once' } });
    // Process 1 claims it and dies before marking it done.
    await store.run('UPDATE jobs SET claimed_by = 1, lease_until = ?', [wall.now() + JOB_LEASE_MS]);
    expect(await b.scheduler.runDue()).toBe(0);
    wall.set(wall.now() + JOB_LEASE_MS + 1);
    expect(await b.scheduler.runDue()).toBe(1);
    expect(b.ran).toEqual(['once']);
    expect(await store.get('SELECT state, claimed_by, lease_until FROM jobs')).toEqual({ state: 'done', claimed_by: 2, lease_until: null });
  });

  it('claims the jobs due at one instant in one write, in order, and another process takes none of them', async () => {
    const { store, process } = sharedTable();
    const a = process(1, true);
    const b = process(2, true);
    const claimedAtStart: number[] = [];
    a.scheduler.register('peek', async () => {
      const rows = await store.all<{ claimed_by: number | null }>("SELECT claimed_by FROM jobs WHERE kind = 'note' AND state = 'pending'");
      claimedAtStart.push(rows.filter((r) => r.claimed_by === 1).length);
      // The other process finds nothing it may run while these are claimed.
      expect(await b.scheduler.runDue()).toBe(0);
    });
    await a.scheduler.schedule(store, { kind: 'peek', runAt: VIRTUAL_EPOCH, payload: {} });
    for (const name of ['n1', 'n2', 'n3']) await a.scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name } });
    await a.scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + 1, payload: { name: 'later instant' } });
    expect(await a.scheduler.advanceBy(10)).toBe(5);
    // The first claim took the whole instant (peek and n1..n3), not the job due a millisecond later.
    expect(claimedAtStart).toEqual([3]);
    expect(a.ran).toEqual(['n1', 'n2', 'n3', 'later instant']);
    expect(b.ran).toEqual([]);
  });

  it('reads a round without writing a claim when one process owns the database, and runs a job scheduled during the round once, in the next', async () => {
    const { store, process } = sharedTable();
    const { scheduler, ran } = process(1);
    const seenDuringRound: unknown[] = [];
    scheduler.register('peek', async () => {
      seenDuringRound.push(...(await store.all("SELECT claimed_by, lease_until FROM jobs WHERE state = 'pending'")));
      await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name: 'scheduled for now' } });
    });
    await scheduler.schedule(store, { kind: 'peek', runAt: VIRTUAL_EPOCH, payload: {} });
    await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name: 'same round' } });
    expect(await scheduler.runDue()).toBe(3);
    expect(seenDuringRound).toEqual([
      { claimed_by: null, lease_until: null },
      { claimed_by: null, lease_until: null },
    ]);
    expect(ran).toEqual(['same round', 'scheduled for now']);
    expect(await scheduler.runDue()).toBe(0);
    expect(await store.all('SELECT state, attempts FROM jobs')).toEqual([
      { state: 'done', attempts: 1 },
      { state: 'done', attempts: 1 },
      { state: 'done', attempts: 1 },
    ]);
  });

  it('runs a round again at the next start when the process died before its jobs were marked, when one process owns the database', async () => {
    const { store, process } = sharedTable();
    const first = process(1);
    // The process dies in the middle of a job: the round never ends, nothing is marked.
    first.scheduler.register('dies', () => new Promise<void>(() => undefined));
    await first.scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name: 'ran before the crash' } });
    await first.scheduler.schedule(store, { kind: 'dies', runAt: VIRTUAL_EPOCH, payload: {} });
    void first.scheduler.runDue();
    await expect.poll(() => first.ran).toEqual(['ran before the crash']);
    const second = process(2);
    second.scheduler.register('dies', async () => void second.ran.push('ran after the restart'));
    expect(await second.scheduler.join()).toBe(0);
    expect(await second.scheduler.runDue()).toBe(2);
    // At least once: the job that finished before the crash runs again.
    expect(second.ran).toEqual(['ran before the crash', 'ran after the restart']);
  });

  it('frees the claims of earlier boots at once when one process owns the database', async () => {
    const { store, wall, process } = sharedTable();
    const first = process(1);
    await first.scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH, payload: { name: 'orphaned claim' } });
    await store.run('UPDATE jobs SET claimed_by = 1, lease_until = ?', [wall.now() + JOB_LEASE_MS]);
    const second = process(2);
    expect(await second.scheduler.join()).toBe(1);
    expect(await second.scheduler.runDue()).toBe(1);
    expect(second.ran).toEqual(['orphaned claim']);
  });

  it('reports the progress of an advance: done 0 first, then as each job finishes, last done equal to total', async () => {
    const { store, process } = sharedTable();
    const { scheduler } = process(1);
    scheduler.register('chain', async () => {
      await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + 3_000, payload: { name: 'follow-up' } });
    });
    for (const at of [1_000, 1_000, 2_000]) await scheduler.schedule(store, { kind: 'note', runAt: VIRTUAL_EPOCH + at, payload: { name: `at ${at}` } });
    await scheduler.schedule(store, { kind: 'chain', runAt: VIRTUAL_EPOCH + 2_000, payload: {} });
    const seen: { done: number; total: number }[] = [];
    expect(await scheduler.advanceBy(10_000, (p) => seen.push(p))).toBe(5);
    expect(seen.map((p) => p.done)).toEqual([0, 1, 2, 3, 4, 5, 5]);
    for (const p of seen) expect(p.total).toBeGreaterThanOrEqual(p.done);
    expect(seen.at(-1)).toEqual({ done: 5, total: 5 });
  });

  describe('the outbound lane (jobs that wait on a merchant endpoint, such as webhook deliveries)', () => {
    /** Work jobs that settle behind a gate, and outbound jobs that note when they go on the wire; each writes one row when done. */
    function laneTable(concurrency: number) {
      const { store, clock, wall } = sharedTable();
      const ids = new IdGenerator(clock, new SeededRandom(3));
      const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: wall, boot: 1, concurrency });
      const sent: string[] = [];
      const settling: string[] = [];
      let openGate!: () => void;
      const gate = new Promise<void>((open) => (openGate = open));
      const write = (name: string) => store.transaction((tx) => tx.run('INSERT INTO lane_trail (name) VALUES (?)', [name]));
      scheduler.register('settle', async (p: { name: string }) => {
        settling.push(p.name);
        await gate;
        await write(p.name);
      });
      scheduler.register('send', async (p: { name: string }) => {
        sent.push(p.name);
        await write(p.name);
      });
      const trail = async () => (await store.all<{ name: string }>('SELECT name FROM lane_trail ORDER BY seq')).map((r) => r.name);
      return { store, scheduler, sent, settling, openGate, trail };
    }

    it('sends the outbound jobs of a round at once, beside the work still running, each lane writing in its own order', async () => {
      const { store, scheduler, sent, openGate, trail } = laneTable(64);
      await store.run('CREATE TABLE lane_trail (seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)');
      await scheduler.schedule(store, { kind: 'send', runAt: VIRTUAL_EPOCH + 1_000, payload: { name: 'webhook 1' }, lane: 'outbound' });
      for (const name of ['callback 1', 'callback 2']) await scheduler.schedule(store, { kind: 'settle', runAt: VIRTUAL_EPOCH + 1_000, payload: { name } });
      await scheduler.schedule(store, { kind: 'send', runAt: VIRTUAL_EPOCH + 1_000, payload: { name: 'webhook 2' }, lane: 'outbound' });
      const advance = scheduler.advanceBy(5_000);
      // The callbacks wait at their gate; the webhooks go out and write what they did meanwhile, in their order.
      await vi.waitFor(async () => expect(await trail()).toEqual(['webhook 1', 'webhook 2']));
      expect(sent).toEqual(['webhook 1', 'webhook 2']);
      openGate();
      expect(await advance).toBe(4);
      expect(await trail()).toEqual(['webhook 1', 'webhook 2', 'callback 1', 'callback 2']);
    });

    it('puts more deliveries on the wire in one round than a round holds callbacks: a burst of webhooks goes out together', async () => {
      const { store, clock, wall } = sharedTable();
      const scheduler = new Scheduler({ store, clock, ids: new IdGenerator(clock, new SeededRandom(3)), logger: silentLogger, wallClock: wall, boot: 1, concurrency: 64 });
      const onTheWire: number[] = [];
      let answer!: () => void;
      const answered = new Promise<void>((open) => (answer = open));
      scheduler.register('send', async (p: { n: number }) => {
        onTheWire.push(p.n);
        await answered; // the receiver answers none until all are out
      });
      const burst = ROUND_SIZE + 44;
      for (let n = 0; n < burst; n++) await scheduler.schedule(store, { kind: 'send', runAt: VIRTUAL_EPOCH + 1_000, payload: { n }, lane: 'outbound' });
      const advance = scheduler.advanceBy(5_000);
      await vi.waitFor(() => expect(onTheWire).toHaveLength(burst));
      expect(onTheWire).toEqual(Array.from({ length: burst }, (_, n) => n));
      answer();
      expect(await advance).toBe(burst);
    });

    it('runs the outbound lane after the work lane, one job at a time, when run serially', async () => {
      const { store, scheduler, sent, settling, openGate, trail } = laneTable(1);
      await store.run('CREATE TABLE lane_trail (seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)');
      await scheduler.schedule(store, { kind: 'send', runAt: VIRTUAL_EPOCH + 1_000, payload: { name: 'webhook 1' }, lane: 'outbound' });
      await scheduler.schedule(store, { kind: 'settle', runAt: VIRTUAL_EPOCH + 1_000, payload: { name: 'callback 1' } });
      const advance = scheduler.advanceBy(5_000);
      // The one job in flight is the callback, at its gate: the webhook has not gone out.
      await vi.waitFor(() => expect(settling).toEqual(['callback 1']));
      expect(sent).toEqual([]);
      openGate();
      expect(await advance).toBe(2);
      expect(await trail()).toEqual(['callback 1', 'webhook 1']);
    });
  });
});
