import type { Clock } from '../kernel/clock.ts';
import { httpExchange } from '../kernel/http-exchange.ts';
import { signRequest } from '../kernel/sign-request.ts';

// The dashboard's only way into railyard: its public HTTP API, over HTTP, with the session's
// API key as Bearer. Signed endpoints are signed here with the key's signing secret, exactly as
// a merchant's server signs them (X-Service-Timestamp / X-Service-Signature).

export interface ApiAnswer<T = unknown> {
  status: number;
  ok: boolean;
  /** The envelope's data (null on an error). */
  data: T;
  message: string;
  meta: { next_cursor?: string | null } | null;
  error: { code: string; details?: Record<string, unknown> } | null;
}

export interface ApiCall {
  key: string;
  idempotencyKey?: string;
  /** Signs the request with this secret. */
  signingSecret?: string | null;
  /**
   * The browser's address, sent as X-Forwarded-For: the API uses it for the key's IP allowlist
   * only where server.trust_proxy trusts this process (the dashboard checks it itself anyway).
   */
  forwardedFor?: string | undefined;
  timeoutMs?: number;
}

const TIMEOUT_MS = 60_000;

/** The API's envelope, as far as the dashboard reads it; any field may be missing from a foreign answer. */
interface Envelope {
  data?: unknown;
  message?: unknown;
  meta?: ApiAnswer['meta'];
  error?: ApiAnswer['error'];
}

export class ApiClient {
  constructor(private readonly deps: { baseUrl: () => string; wallClock: Clock }) {}

  get<T = unknown>(path: string, query: Record<string, string | undefined | null> = {}, call: ApiCall): Promise<ApiAnswer<T>> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, v);
    const qs = params.toString();
    return this.send<T>('GET', qs ? `${path}?${qs}` : path, undefined, call);
  }

  post<T = unknown>(path: string, body: unknown, call: ApiCall): Promise<ApiAnswer<T>> {
    return this.send<T>('POST', path, body, call);
  }

  put<T = unknown>(path: string, body: unknown, call: ApiCall): Promise<ApiAnswer<T>> {
    return this.send<T>('PUT', path, body, call);
  }

  delete<T = unknown>(path: string, call: ApiCall): Promise<ApiAnswer<T>> {
    return this.send<T>('DELETE', path, undefined, call);
  }

  async send<T>(method: string, pathAndQuery: string, body: unknown, call: ApiCall): Promise<ApiAnswer<T>> {
    const raw = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${call.key}`, accept: 'application/json' };
    if (raw !== undefined) headers['content-type'] = 'application/json';
    if (call.idempotencyKey) headers['idempotency-key'] = call.idempotencyKey;
    if (call.forwardedFor) headers['x-forwarded-for'] = call.forwardedFor;
    if (call.signingSecret) {
      const timestamp = String(Math.floor(this.deps.wallClock.now() / 1000));
      headers['x-service-timestamp'] = timestamp;
      headers['x-service-signature'] = signRequest(call.signingSecret, timestamp, { method, pathAndQuery, idempotencyKey: call.idempotencyKey, rawBody: raw ?? '' });
    }
    let answer;
    try {
      answer = await httpExchange(new URL(pathAndQuery, this.deps.baseUrl()), { method, headers, body: raw, timeoutMs: call.timeoutMs ?? TIMEOUT_MS });
    } catch (err) {
      return { status: 502, ok: false, data: null as T, message: `railyard's API did not answer: ${(err as Error).message}`, meta: null, error: { code: 'api_unreachable' } };
    }
    let parsed: Envelope | null = null;
    try {
      const value: unknown = JSON.parse(answer.text);
      parsed = value !== null && typeof value === 'object' ? (value as Envelope) : null;
    } catch {
      parsed = null;
    }
    const ok = answer.status >= 200 && answer.status < 300;
    return {
      status: answer.status,
      ok,
      data: (ok ? (parsed?.data ?? null) : null) as T,
      message: typeof parsed?.message === 'string' ? parsed.message : `HTTP ${answer.status}`,
      meta: parsed?.meta ?? null,
      error: ok ? null : (parsed?.error ?? { code: `http_${answer.status}` }),
    };
  }
}
