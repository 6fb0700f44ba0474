// autocannon ships no types and @types/autocannon is not a dependency: the subset bench/load.ts uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Called before each request is built; returning a falsy value skips it. */
    setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec | null | undefined;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
  }

  export interface Options {
    /** Several URLs: connection i goes to url[i % length] (round-robin by connection). */
    url: string | string[];
    connections?: number;
    duration?: number;
    amount?: number;
    /** Stops the run after this many requests in all, whatever the duration. */
    maxOverallRequests?: number;
    timeout?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: RequestSpec[];
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9?: number;
    [key: string]: number | undefined;
  }

  export interface Result {
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  export default function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): Instance;
}
