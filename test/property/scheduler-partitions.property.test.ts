import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

// Random mixes of jobs over a few objects, each object with its own sequence of jobs at random
// times (many at the same instant), some of them scheduling a follow-up for their object. Whatever
// the concurrency, every job runs exactly once, the jobs of one object run one at a time in the
// order they were due (and, at one instant, written), and each sees its own run_at as the time;
// half the objects' jobs are in the outbound lane.

interface PlannedJob {
  object: number;
  /** Seconds after the start. */
  at: number;
  /** Turns of the event loop the job's work takes (its "network call"). */
  work: number;
  /** Seconds after its own run_at that the job's follow-up falls due, if it has one. */
  followUp: number | null;
}

const plannedJob = fc.record({
  object: fc.integer({ min: 0, max: 5 }),
  at: fc.integer({ min: 0, max: 3 }),
  work: fc.integer({ min: 0, max: 4 }),
  followUp: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
});

interface Ran {
  name: string;
  object: number;
  runAt: number;
  clockAt: number;
}

async function runMix(plan: PlannedJob[], concurrency: number) {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(7));
  const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: new VirtualClock(Date.UTC(2026, 10, 26)), boot: 1, concurrency });
  const ran: Ran[] = [];
  /** Jobs of each object in flight right now: never more than one. */
  const inFlight = new Map<number, number>();
  let busiest = 0;
  let running = 0;
  /** The order each object's jobs were written in, due time first: what it must run in. */
  const written: { name: string; object: number; runAt: number; order: number }[] = [];
  let order = 0;
  const write = async (name: string, object: number, runAt: number, job: Omit<PlannedJob, 'at' | 'object'>) => {
    written.push({ name, object, runAt, order: order++ });
    // Objects 3 to 5 are outbound, as a webhook endpoint's deliveries are: their own lane in each round.
    await scheduler.schedule(store, { kind: 'step', runAt, payload: { name, object, ...job }, partition: `object:${object}`, ...(object >= 3 ? { lane: 'outbound' as const } : {}) });
  };
  scheduler.register('step', async (p: { name: string; object: number; work: number; followUp: number | null }, job) => {
    const mine = (inFlight.get(p.object) ?? 0) + 1;
    inFlight.set(p.object, mine);
    running++;
    busiest = Math.max(busiest, running);
    expect(mine, `object ${p.object} ran two jobs at once`).toBe(1);
    for (let i = 0; i < p.work; i++) await new Promise((turn) => setImmediate(turn));
    ran.push({ name: p.name, object: p.object, runAt: job.runAt, clockAt: clock.now() });
    if (p.followUp !== null) await write(`${p.name}+`, p.object, job.runAt + p.followUp * 1000, { work: p.work, followUp: null });
    running--;
    inFlight.set(p.object, mine - 1);
  });
  for (const [i, job] of plan.entries()) await write(`j${i}`, job.object, VIRTUAL_EPOCH + job.at * 1000, job);
  const count = await scheduler.advanceBy(10_000);
  await store.close();
  return { ran, written, count, busiest };
}

describe('the scheduler over random job mixes', () => {
  it('runs every job exactly once, one object at a time in due (then written) order, each at its own run_at', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plannedJob, { minLength: 1, maxLength: 40 }), fc.constantFrom(1, 2, 4, 32), async (plan, concurrency) => {
        const { ran, written, count } = await runMix(plan, concurrency);
        // Exactly once: every written job ran, none twice.
        expect(ran.map((r) => r.name).sort()).toEqual(written.map((w) => w.name).sort());
        expect(count).toBe(written.length);
        // Each saw its own run_at on the clock.
        for (const r of ran) expect(r.clockAt, r.name).toBe(r.runAt);
        // Per object: the order it was due in, jobs due at one instant in the order they were written.
        for (let object = 0; object <= 5; object++) {
          const expected = written
            .filter((w) => w.object === object)
            .sort((a, b) => a.runAt - b.runAt || a.order - b.order)
            .map((w) => w.name);
          expect(ran.filter((r) => r.object === object).map((r) => r.name)).toEqual(expected);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('runs the jobs of different objects side by side, and a serial run and a concurrent one in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plannedJob, { minLength: 1, maxLength: 40 }), async (plan) => {
        const serial = await runMix(plan, 1);
        const concurrent = await runMix(plan, 32);
        expect(serial.busiest).toBe(1);
        // Two objects due at one instant, both with work to wait on: they overlap.
        const instants = new Map<number, Set<number>>();
        for (const job of plan) if (job.work > 0) instants.set(job.at, (instants.get(job.at) ?? new Set()).add(job.object));
        if ([...instants.values()].some((objects) => objects.size > 1)) expect(concurrent.busiest).toBeGreaterThan(1);
        // Per object, the same order either way (across objects the finishing order may differ).
        for (let object = 0; object <= 5; object++) {
          const of = (r: Ran[]) => r.filter((x) => x.object === object).map((x) => x.name);
          expect(of(concurrent.ran)).toEqual(of(serial.ran));
        }
      }),
      { numRuns: 40 },
    );
  });
});
