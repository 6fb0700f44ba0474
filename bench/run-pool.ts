import { performance } from 'node:perf_hooks';

export interface PoolResult {
  done: number;
  failed: number;
  seconds: number;
  timedOut: boolean;
  sampleFailures: string[];
}

/**
 * Runs task(0..count-1) with `concurrency` in flight, bounded by count and by time. A task that
 * returns false or throws counts as failed (with a few messages kept as evidence).
 */
export async function runPool(count: number, concurrency: number, maxSeconds: number, task: (i: number) => Promise<boolean | string>): Promise<PoolResult> {
  const started = performance.now();
  const deadline = started + maxSeconds * 1_000;
  let next = 0;
  let done = 0;
  let failed = 0;
  const sampleFailures: string[] = [];
  const worker = async () => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      try {
        const outcome = await task(i);
        if (outcome === true) done++;
        else {
          failed++;
          if (sampleFailures.length < 5) sampleFailures.push(typeof outcome === 'string' ? outcome : `task ${i} failed`);
        }
      } catch (err) {
        failed++;
        if (sampleFailures.length < 5) sampleFailures.push(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { done, failed, seconds: (performance.now() - started) / 1_000, timedOut: next < count, sampleFailures };
}
