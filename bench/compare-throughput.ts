import type { RequestSpec } from 'autocannon';
import type { JsonResponse } from './http-json.ts';
import { launchBaseline, type ChildServer } from './launch.ts';
import { load, type LoadResult, type LoadSpec } from './load.ts';
import { interleave, type BenchContext, type RoundPair } from './measure.ts';
import { median } from './stats.ts';

export interface LoadSummary {
  okPerSec: number;
  p50Ms: number;
  p99Ms: number;
  invalidRounds: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  sampleFailures: string[];
}

export interface Comparison {
  pairs: RoundPair<LoadResult>[];
  warmup: { baseline: LoadResult; railyard: LoadResult };
  baseline: LoadSummary;
  railyard: LoadSummary;
  /** median railyard 2xx/s ÷ median baseline 2xx/s */
  ratio: number;
}

export function summarise(results: LoadResult[]): LoadSummary {
  const statusCodes: Record<string, number> = {};
  for (const r of results) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    okPerSec: median(results.map((r) => r.okPerSec)),
    p50Ms: median(results.map((r) => r.p50Ms)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    invalidRounds: results.filter((r) => r.invalid).length,
    non2xx: results.reduce((s, r) => s + r.non2xx, 0),
    errors: results.reduce((s, r) => s + r.errors, 0),
    statusCodes,
    sampleFailures: results.flatMap((r) => r.sampleFailures).slice(0, 5),
  };
}

export interface ComparisonSpec {
  label: string;
  railyardUrl: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: RequestSpec) => RequestSpec;
  /** railyard's answer to one such request: the baseline answers these bytes with this status. */
  probe: JsonResponse;
}

/**
 * The same load against the bare express baseline and railyard: a warm-up of each, then
 * interleaved rounds, medians and the ratio of 2xx per second.
 */
export async function compareThroughput(ctx: BenchContext, spec: ComparisonSpec): Promise<Comparison> {
  const baseline: ChildServer = await launchBaseline({
    dir: ctx.runDir,
    label: `baseline-${spec.label}`,
    method: spec.method === 'GET' ? 'get' : 'post',
    path: spec.path.split('?')[0]!,
    status: spec.probe.status,
    body: spec.probe.text,
  });
  try {
    const run = (baseUrl: string, durationSec: number) => {
      const loadSpec: LoadSpec = {
        baseUrl,
        method: spec.method,
        path: spec.path,
        connections: ctx.connections,
        durationSec,
        ...(spec.headers ? { headers: spec.headers } : {}),
        ...(spec.body !== undefined ? { body: spec.body } : {}),
        ...(spec.setupRequest ? { setupRequest: spec.setupRequest } : {}),
      };
      return load(loadSpec);
    };
    ctx.log(`  ${spec.label}: warm-up`);
    const warmup = { baseline: await run(baseline.baseUrl, ctx.warmupSec), railyard: await run(spec.railyardUrl, ctx.warmupSec) };
    const pairs = await interleave(
      ctx,
      spec.label,
      () => run(baseline.baseUrl, ctx.durationSec),
      () => run(spec.railyardUrl, ctx.durationSec),
    );
    const b = summarise(pairs.map((p) => p.baseline));
    const r = summarise(pairs.map((p) => p.railyard));
    return { pairs, warmup, baseline: b, railyard: r, ratio: r.okPerSec / b.okPerSec };
  } finally {
    await baseline.stop();
  }
}
