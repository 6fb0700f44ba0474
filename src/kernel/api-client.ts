import type { Agent, IncomingHttpHeaders } from 'node:http';
import { httpExchange } from './http-exchange.ts';
import { signatureHeaders } from './sign-request.ts';

// The one client of railyard's own API, as a merchant's code talks to it: a base URL, the API key
// as Bearer, an optional Idempotency-Key, JSON in and out, and the request signature on signed
// routes. The dashboard, the CLI's trigger, the replay's requests, the contracts' remote run, the
// bench and the tests go through it (each keeps only its own conveniences on top).

export interface ApiCredentials {
  /** Sent as `Authorization: Bearer <key>`; none when absent (public endpoints, /openapi.json). */
  key?: string | undefined;
  /** The key's signing secret; a request asking to be signed without one is sent unsigned. */
  signingSecret?: string | null | undefined;
}

export interface ApiRequest extends ApiCredentials {
  method: string;
  /** Path and query, as signed (`/api/v1/events?type=charge.success`). */
  path: string;
  /** A string is sent as is (a signature covers these exact bytes); anything else is JSON-encoded. */
  body?: unknown;
  /** The body's media type: application/json unless told otherwise (a form, say). */
  contentType?: string;
  idempotencyKey?: string | undefined;
  /** Adds X-Service-Timestamp and X-Service-Signature over the request. */
  sign?: boolean | undefined;
  /** Further headers (a user agent, X-Forwarded-For). */
  headers?: Record<string, string> | undefined;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Connections of the caller's own (a load generator's pool). */
  agent?: Agent | undefined;
}

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as sent. */
  text: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  json: unknown;
}

/** The spec's envelope, as far as a client reads it: any field may be missing from a foreign answer. */
export interface ApiEnvelope<T = unknown> {
  status?: boolean;
  message?: string;
  data?: T;
  meta?: { next_cursor?: string | null };
  error?: { code?: string; details?: Record<string, unknown> };
}

export interface ApiClientOptions extends ApiCredentials {
  /** Where the API is: `http://127.0.0.1:4010`; a function when it is known only later. */
  baseUrl: string | (() => string);
  /** Real time in ms for signature timestamps: merchants sign with their own clocks (default Date.now). */
  now?: () => number;
  /** Per request, in real time (default 30 s). */
  timeoutMs?: number;
  /** Headers on every request (a user agent). */
  headers?: Record<string, string>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The body's bytes: a string as is, anything else as JSON, undefined for none. */
export function rawBodyOf(body: unknown): string | undefined {
  return body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
}

/**
 * What makes a request the merchant's: the key, the Idempotency-Key and, when signed, the
 * signature over exactly `rawBody`. Also for callers whose transport is not this client's (a
 * test's supertest agent, the Pact verifier's proxy).
 */
export function merchantHeaders(req: Omit<ApiRequest, 'body' | 'headers'>, rawBody: string, nowMs: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (req.key) headers.authorization = `Bearer ${req.key}`;
  if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey;
  if (req.sign && req.signingSecret) {
    Object.assign(headers, signatureHeaders(req.signingSecret, nowMs, { method: req.method, pathAndQuery: req.path, idempotencyKey: req.idempotencyKey, rawBody }));
  }
  return headers;
}

/** Parses a body that should be JSON; undefined when it is empty or not. */
export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export class ApiClient {
  constructor(private readonly options: ApiClientOptions) {}

  get baseUrl(): string {
    const { baseUrl } = this.options;
    return typeof baseUrl === 'string' ? baseUrl : baseUrl();
  }

  /**
   * One request; the answer whatever its status. Throws only when there is no answer: the
   * kernel's HttpConnectionError (refused, reset, stopped) or HttpTimeoutError.
   */
  async request(req: ApiRequest): Promise<ApiResponse> {
    const o = this.options;
    const raw = rawBodyOf(req.body);
    const credentials = { key: req.key ?? o.key, signingSecret: req.signingSecret !== undefined ? req.signingSecret : o.signingSecret };
    const headers: Record<string, string> = { accept: 'application/json' };
    if (raw !== undefined) headers['content-type'] = req.contentType ?? 'application/json';
    Object.assign(headers, merchantHeaders({ ...req, ...credentials }, raw ?? '', (o.now ?? Date.now)()), o.headers, req.headers);
    const answer = await httpExchange(new URL(req.path, this.baseUrl), {
      method: req.method,
      headers,
      body: raw,
      timeoutMs: req.timeoutMs ?? o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: req.signal,
      agent: req.agent,
    });
    return { status: answer.status, headers: answer.headers, text: answer.text, json: parseJson(answer.text) };
  }
}

/** The envelope of an answer (an empty one when the body is not an object). */
export function envelopeOfAnswer<T = unknown>(res: ApiResponse): ApiEnvelope<T> {
  return res.json !== null && typeof res.json === 'object' && !Array.isArray(res.json) ? (res.json as ApiEnvelope<T>) : {};
}
