import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';

// Jobs forked at one virtual instant (and the next), each with its own seq, drawing ids in any
// interleaving, some more than a millisecond's 1,024 counter values: every id is distinct and
// keeps the id format, and the ids drawn at one instant sort in the order of the jobs' seqs.

const job = fc.record({
  /** The job's seq: distinct across jobs (a gap between neighbours, or none). */
  gap: fc.integer({ min: 1, max: 1_000 }),
  /** 0: the round's instant; 1: the next millisecond, a later round. */
  instant: fc.integer({ min: 0, max: 1 }),
  draws: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 0, max: 6 }) }, { weight: 1, arbitrary: fc.integer({ min: 1_020, max: 1_100 }) }),
});

describe('job ids', () => {
  it('are distinct and sort in the jobs’ order at one instant, counter overflow included', () => {
    fc.assert(
      fc.property(fc.array(job, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 2 ** 25 - 1 }), fc.integer(), (jobs, firstSeq, seed) => {
        const clock = new VirtualClock(VIRTUAL_EPOCH);
        const ids = new IdGenerator(clock, new SeededRandom(seed));
        let seq = firstSeq;
        const forks = jobs.map((j) => {
          seq += j.gap;
          return { ...j, seq, ids: undefined as IdGenerator | undefined, drawn: [] as string[] };
        });
        // Round by round (instant by instant); within one, the jobs draw interleaved, last job first.
        for (const instant of [0, 1]) {
          clock.set(VIRTUAL_EPOCH + instant);
          const round = forks.filter((f) => f.instant === instant);
          for (const f of round) f.ids = ids.fork(`job_${f.seq}@${clock.now()}`, f.seq);
          for (let left = true; left; ) {
            left = false;
            for (const f of [...round].reverse()) {
              if (f.drawn.length < f.draws) {
                f.drawn.push(f.ids!.next('evt'));
                left = true;
              }
            }
          }
        }
        const all = forks.flatMap((f) => f.drawn);
        expect(new Set(all).size).toBe(all.length);
        for (const id of all) expect(id).toMatch(/^evt_[0-9a-z]{20}$/);
        // Within an instant, ids follow the seqs: short of the 32^5 wrap of the order, and of a
        // job that ran out of its millisecond's counter (its later ids move on to the next one).
        for (const instant of [0, 1]) {
          const round = forks.filter((f) => f.instant === instant);
          if (round.some((f) => f.seq >= 32 ** 5 || f.draws > 1_024)) continue;
          const inOrder = round.flatMap((f) => f.drawn);
          expect([...inOrder].sort()).toEqual(inOrder);
        }
      }),
      { numRuns: 60 },
    );
  });
});
