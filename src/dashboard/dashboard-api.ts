import type { Clock } from '../kernel/clock.ts';
import { ApiClient, type ApiResponse, envelopeOfAnswer } from '../kernel/api-client.ts';

// The dashboard's only way into railyard: its public HTTP API, over HTTP (the kernel's API
// client), with the session's API key as Bearer. Signed endpoints are signed with the key's
// signing secret, exactly as a merchant's server signs them (X-Service-Timestamp / X-Service-Signature).
// What the dashboard adds: answers it can render whatever happened (an unreachable API is a 502).

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

export class DashboardApi {
  private readonly client: ApiClient;

  constructor(deps: { baseUrl: () => string; wallClock: Clock }) {
    this.client = new ApiClient({ baseUrl: deps.baseUrl, now: () => deps.wallClock.now() });
  }

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
    let answer: ApiResponse;
    try {
      answer = await this.client.request({
        method,
        path: pathAndQuery,
        body,
        key: call.key,
        signingSecret: call.signingSecret,
        sign: true,
        idempotencyKey: call.idempotencyKey,
        headers: call.forwardedFor ? { 'x-forwarded-for': call.forwardedFor } : undefined,
        timeoutMs: call.timeoutMs ?? TIMEOUT_MS,
      });
    } catch (err) {
      return { status: 502, ok: false, data: null as T, message: `railyard's API did not answer: ${(err as Error).message}`, meta: null, error: { code: 'api_unreachable' } };
    }
    const parsed = envelopeOfAnswer(answer);
    const ok = answer.status >= 200 && answer.status < 300;
    return {
      status: answer.status,
      ok,
      data: (ok ? (parsed.data ?? null) : null) as T,
      message: typeof parsed.message === 'string' ? parsed.message : `HTTP ${answer.status}`,
      meta: parsed.meta ?? null,
      error: ok ? null : { code: `http_${answer.status}`, ...parsed.error },
    };
  }
}
