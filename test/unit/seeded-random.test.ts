import { describe, expect, it } from 'vitest';
import { indexedRandom, Rng, seededRandom } from '../../chaos/seeded-random.ts';
import { SeededRandom } from '../../src/kernel/ids.ts';

// The one seeded generator of the chaos harness and the OpenAPI fuzzer: the kernel's SeededRandom
// behind both, and the sequences a `--seed` or FUZZ_SEED run was reported with, kept.

const draws = (rng: Rng, n = 5) => Array.from({ length: n }, () => rng.int(0, 999));

describe('the seeded generator of chaos and the fuzzer', () => {
  it("draws the kernel's SeededRandom, the generator of railyard's own ids", () => {
    const rng = new Rng(42);
    const kernel = new SeededRandom(42);
    for (let i = 0; i < 100; i++) expect(rng.next()).toBe(kernel.nextUint32() / 2 ** 32);
  });

  it('gives any draw of a SeededRandom by its place, without drawing the ones before it', () => {
    const kernel = new SeededRandom(0xfeed);
    for (let i = 0; i < 1_000; i++) expect(SeededRandom.uint32At(0xfeed, i)).toBe(kernel.nextUint32());
    const far = new SeededRandom(3);
    for (let i = 0; i < 5_000_000; i++) far.nextUint32();
    expect(SeededRandom.uint32At(3, 5_000_000)).toBe(far.nextUint32());
  });

  it('gives a chaos trial the sequence its seed always gave', () => {
    expect(draws(seededRandom(1))).toEqual([797, 505, 733, 458, 47]);
    expect(draws(seededRandom(2))).toEqual([987, 476, 378, 645, 897]);
  });

  it('gives each fuzzed request the sequence its seed and index always gave, whatever came before', () => {
    expect(draws(indexedRandom(20_260_101, 0))).toEqual([909, 816, 165, 657, 313]);
    expect(draws(indexedRandom(20_260_101, 2_999))).toEqual([588, 998, 294, 725, 375]);
  });

  it('draws integers within their bounds, items from their list, and samples without repeats', () => {
    const rng = seededRandom(7);
    for (let i = 0; i < 1_000; i++) {
      const n = rng.int(3, 5);
      expect(n >= 3 && n <= 5 && Number.isInteger(n)).toBe(true);
      expect(rng.below(4)).toBeLessThan(4);
      expect(['a', 'b']).toContain(rng.pick(['a', 'b']));
      expect(
        rng.weighted([
          ['never', 0],
          ['always', 1],
        ] as const),
      ).toBe('always');
    }
    const sample = rng.sample([1, 2, 3, 4, 5, 6], 4);
    expect(new Set(sample).size).toBe(4);
  });
});
