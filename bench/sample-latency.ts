import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestJson } from './http-json.ts';
import { mean, percentile, round } from './stats.ts';

export interface LatencySpec {
  baseUrl: string;
  /** Paths sent in turn (e.g. one cursor after another); one path is fine. */
  paths: string[];
  headers?: Record<string, string>;
  /** Clients, each sending its next request when the last is answered. */
  connections: number;
  maxRequests: number;
  maxSeconds: number;
}

export interface LatencyResult {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
  answersPerSec: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  sampleFailures: string[];
  invalid: boolean;
}

/**
 * Latency at low concurrency with sub-millisecond resolution (autocannon's histogram counts whole
 * milliseconds, too coarse for a 1-2 ms page). Bounded by count and by time.
 */
export async function sampleLatency(spec: LatencySpec): Promise<LatencyResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const times: number[] = [];
  const statusCodes: Record<string, number> = {};
  const sampleFailures: string[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + spec.maxSeconds * 1_000;
  const client = async () => {
    while (next < spec.maxRequests && performance.now() < deadline) {
      const path = spec.paths[next++ % spec.paths.length]!;
      try {
        const res = await requestJson(spec.baseUrl, 'GET', path, { headers: spec.headers ?? {}, agent, timeoutMs: 30_000 });
        statusCodes[res.status] = (statusCodes[res.status] ?? 0) + 1;
        if (res.status >= 200 && res.status < 300) times.push(res.ms);
        else if (sampleFailures.length < 5) sampleFailures.push(`${res.status} ${res.text.slice(0, 300)}`);
      } catch (err) {
        errors++;
        if (sampleFailures.length < 5) sampleFailures.push(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, client));
  agent.destroy();
  const elapsed = (performance.now() - started) / 1_000;
  const requests = Object.values(statusCodes).reduce((s, n) => s + n, 0) + errors;
  const non2xx = requests - errors - times.length;
  return {
    p50Ms: round(percentile(times, 50), 3),
    p90Ms: round(percentile(times, 90), 3),
    p99Ms: round(percentile(times, 99), 3),
    meanMs: round(mean(times), 3),
    answersPerSec: round(requests / elapsed, 1),
    requests,
    non2xx,
    errors,
    statusCodes,
    sampleFailures,
    invalid: times.length === 0 || non2xx + errors > 0.01 * requests,
  };
}
