import type { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ApiClient } from '../src/kernel/api-client.ts';

// The bench's requests go through railyard's own API client (src/kernel/api-client.ts), with the
// headers each measure gives (the key, a signature it computed itself): nothing is added to the
// measured path but the exchange and a JSON parse, as a merchant's client would do.

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

const clients = new Map<string, ApiClient>();

/**
 * One HTTP request with a hard time limit (node:http rather than fetch: fetch has its own 300 s
 * header and body timeouts, which would cut a long clock advance short with a vague error). A
 * request without an answer in time rejects with an error named TimeoutError.
 */
export async function requestJson(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<JsonResponse> {
  const url = new URL(path, baseUrl);
  if (url.hostname !== '127.0.0.1') throw new Error(`the bench only talks to 127.0.0.1, not ${url.hostname}`);
  let client = clients.get(url.origin);
  if (!client) {
    client = new ApiClient({ baseUrl: url.origin });
    clients.set(url.origin, client);
  }
  const started = performance.now();
  const res = await client.request({ method, path: url.pathname + url.search, body: options.body, headers: options.headers, timeoutMs: options.timeoutMs ?? 30_000, agent: options.agent });
  return { status: res.status, text: res.text, json: res.json, headers: res.headers, ms: performance.now() - started };
}

/** The sandbox key's Authorization header. */
export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
