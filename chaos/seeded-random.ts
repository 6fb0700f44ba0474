// The one seeded generator of the chaos harness and the OpenAPI fuzzer. Their choices (workload
// mix, kill moment, signals; every part of a fuzzed request) come from a seed, so a failing trial
// or a finding can be re-run with the same plan; only real-time interleavings differ between runs.
// The numbers are the kernel's SeededRandom (mulberry32), the generator of railyard's own ids.
import { SeededRandom } from '../src/kernel/ids.ts';

/** Draws made from one seeded stream. */
export class Rng {
  private readonly source: SeededRandom;
  constructor(seed: number) {
    this.source = new SeededRandom(seed);
  }
  /** A float in [0, 1). */
  next(): number {
    return this.source.nextUint32() / 4294967296;
  }
  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** An integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
  /** An item drawn in proportion to its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let r = this.next() * items.reduce((sum, [, w]) => sum + w, 0);
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1]![0];
  }
  /** Up to n distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, Math.max(0, n));
  }
}

/** The stream of a chaos trial. Consecutive trial seeds must not give correlated first draws: the seed is scrambled first. */
export function seededRandom(seed: number): Rng {
  let state = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  state = Math.imul(state ^ (state >>> 13), 0xc2b2ae35) >>> 0;
  return new Rng(state);
}

/**
 * The stream of the index-th item of a run (a fuzzed request): it depends on the seed and the
 * index alone, so distinct seeds give unrelated sequences, not shifted ones.
 */
export function indexedRandom(seed: number, index: number): Rng {
  return new Rng(fmix32((fmix32(seed >>> 0) + Math.imul(index + 1, 0x9e3779b9)) >>> 0));
}

/** MurmurHash3's finaliser. */
function fmix32(x: number): number {
  let h = x;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
