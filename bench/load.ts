import autocannon, { type RequestSpec, type Result } from 'autocannon';
import { round } from './stats.ts';

export interface LoadSpec {
  /** Several base URLs (instances of one fleet): autocannon spreads the connections round-robin. */
  baseUrl: string | string[];
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Per-request rewrite (unique Idempotency-Key, a fresh signature), run before each request. */
  setupRequest?: (request: RequestSpec) => RequestSpec;
  connections: number;
  durationSec: number;
  /** Bounds the run in count as well as time. */
  maxRequests?: number;
  /** Per-request timeout, seconds. */
  timeoutSec?: number;
}

export interface LoadResult {
  /** 2xx answers per second: the figure reported. A run of 4xx is no throughput. */
  okPerSec: number;
  /** Every answer per second, whatever its status. */
  answersPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  durationSec: number;
  sent: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** A few bodies of non-2xx answers, as evidence. */
  sampleFailures: string[];
  /** True when non-2xx answers, errors or timeouts exceed 1% of what was sent. */
  invalid: boolean;
}

const MAX_FAILURE_SAMPLES = 5;

/**
 * One autocannon run against 127.0.0.1. Latency percentiles are autocannon's, over 2xx answers,
 * in whole milliseconds (its histogram's resolution); use sampleLatency for sub-millisecond p50s.
 */
export function load(spec: LoadSpec): Promise<LoadResult> {
  for (const base of [spec.baseUrl].flat()) {
    const url = new URL(base);
    if (url.hostname !== '127.0.0.1') throw new Error(`the bench only loads 127.0.0.1, not ${url.hostname}`);
  }
  const sampleFailures: string[] = [];
  const request: RequestSpec = {
    method: spec.method,
    path: spec.path,
    headers: { ...(spec.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(spec.headers ?? {}) },
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(spec.setupRequest ? { setupRequest: spec.setupRequest } : {}),
    onResponse: (status, body) => {
      if ((status < 200 || status >= 300) && sampleFailures.length < MAX_FAILURE_SAMPLES) sampleFailures.push(`${status} ${String(body).slice(0, 300)}`);
    },
  };
  return new Promise((done, fail) => {
    // A safety net over autocannon's own duration: the run ends, whatever happens.
    const guard = setTimeout(() => instance.stop(), (spec.durationSec + 30) * 1_000);
    const instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        duration: spec.durationSec,
        maxOverallRequests: spec.maxRequests ?? 5_000_000,
        timeout: spec.timeoutSec ?? 30,
        requests: [request],
      },
      (err, result) => {
        clearTimeout(guard);
        if (err) return fail(err);
        done(summarise(result, sampleFailures));
      },
    );
  });
}

function summarise(r: Result, sampleFailures: string[]): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodes[code] = count;
  const answers = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  const duration = r.duration > 0 ? r.duration : NaN;
  const bad = r.non2xx + r.errors;
  return {
    okPerSec: round(r['2xx'] / duration, 1),
    answersPerSec: round(answers / duration, 1),
    p50Ms: r.latency.p50,
    p90Ms: r.latency.p90,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    durationSec: r.duration,
    sent: r.requests.sent,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    sampleFailures,
    invalid: r['2xx'] === 0 || bad > 0.01 * Math.max(1, r.requests.sent),
  };
}
