import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface JsonResponse {
  status: number;
  /** The raw body; `json` is it parsed, or undefined when it is not JSON. */
  text: string;
  json: any;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as is when a string (so a signature covers these exact bytes), else JSON-encoded. */
  body?: unknown;
  timeoutMs?: number;
  agent?: Agent;
}

/**
 * One HTTP request with a hard time limit. node:http rather than fetch: fetch (undici) has its own
 * 300 s header and body timeouts, which would cut a long clock advance short with a vague error.
 */
export function requestJson(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<JsonResponse> {
  const url = new URL(path, baseUrl);
  if (url.hostname !== '127.0.0.1') throw new Error(`the bench only talks to 127.0.0.1, not ${url.hostname}`);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method,
        agent: options.agent,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...(options.headers ?? {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          done({ status: res.statusCode ?? 0, text, json, headers: res.headers, ms: performance.now() - started });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          fail(err);
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new TimeoutError(`${method} ${path} had no answer after ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** The sandbox key's Authorization header. */
export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
