// Requests a script sends to its sandbox, as a merchant would: the sandbox key, a signature on
// signed routes, the Idempotency-Key the step chose.

import { ApiClient } from '../kernel/api-client.ts';
import type { RouteSpec } from '../http/route.ts';
import { isPlainObject } from './partial-match.ts';
import type { RunContext } from './run-context.ts';

/** The route a method and path (query ignored) reach, for its signed and idempotent flags. */
export function findRoute(routes: readonly RouteSpec[], method: string, pathAndQuery: string): RouteSpec | undefined {
  const path = pathAndQuery.split('?')[0]!;
  return routes.find((r) => {
    if (r.method !== method.toLowerCase()) return false;
    const pattern = r.path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return new RegExp(`^${pattern}/?$`).test(path);
  });
}

interface Envelope {
  data?: unknown;
  error?: { code?: unknown; details?: { id?: unknown; reference?: unknown } };
}

/** `chg_… pending_provider`, `provider_unavailable chg_…`, `3 items`: what a response says, briefly. */
export function summariseResponse(body: unknown): string {
  if (!isPlainObject(body)) return '';
  const envelope = body as Envelope;
  if (isPlainObject(envelope.error)) {
    const details = envelope.error.details;
    const ref = isPlainObject(details) ? (details.id ?? details.reference) : undefined;
    return [envelope.error.code, typeof ref === 'string' ? ref : undefined].filter((p) => typeof p === 'string').join(' ');
  }
  const data = envelope.data;
  if (Array.isArray(data)) return `${data.length} item${data.length === 1 ? '' : 's'}`;
  if (isPlainObject(data)) {
    const ref = data.id ?? data.reference;
    return [ref, data.status].filter((p) => typeof p === 'string').join(' ');
  }
  return '';
}

/** A script's request may start a long clock advance; the script's own time limit governs it. */
const REQUEST_TIMEOUT_MS = 10 * 60_000;

export interface SandboxRequest {
  method: string;
  path: string;
  body?: unknown;
  idempotencyKey?: string;
}

export interface SandboxResponse {
  status: number;
  /** Parsed JSON; the text itself when it is not JSON; null when empty. */
  body: unknown;
  /** Answered from the idempotency store (`Idempotent-Replayed: true`). */
  replayed: boolean;
  contentType: string | null;
}

export async function sendToSandbox(ctx: Pick<RunContext, 'ry' | 'baseUrl'>, req: SandboxRequest): Promise<SandboxResponse> {
  const { ry } = ctx;
  const url = new URL(req.path, ctx.baseUrl);
  const pathAndQuery = url.pathname + url.search;
  const client = new ApiClient({ baseUrl: ctx.baseUrl, key: ry.sandbox.key, signingSecret: ry.sandbox.signingSecret, now: () => ry.wallClock.now(), timeoutMs: REQUEST_TIMEOUT_MS });
  const res = await client.request({
    method: req.method,
    path: pathAndQuery,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    idempotencyKey: req.idempotencyKey,
    sign: findRoute(ry.routes, req.method, pathAndQuery)?.signed,
  });
  const contentType = res.headers['content-type'] ?? null;
  return { status: res.status, body: res.text === '' ? null : res.json === undefined ? res.text : res.json, replayed: res.headers['idempotent-replayed'] === 'true', contentType };
}
