import { httpExchange, HttpConnectionError, HttpTimeoutError } from '../kernel/http-exchange.ts';
import { RailError, type RailAdapterContext } from './provider-port.ts';
import type { UpstreamRequest } from './upstream-tap.ts';

export interface UpstreamResponse {
  status: number;
  text: string;
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  // The adapters pass plain records: names in lower case and values trimmed, as Headers would
  // give them, without building a Headers object for every call.
  if (headers && !(headers instanceof Headers) && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      const key = name.toLowerCase();
      const trimmed = String(value).trim();
      out[key] = out[key] === undefined ? trimmed : `${out[key]}, ${trimmed}`;
    }
    return out;
  }
  new Headers(headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * One HTTP call to an upstream with a real-time timeout. Transport failures become the
 * RailErrors the router fails over on: timeout, or connection (refused, reset, DNS).
 */
export async function callUpstream(provider: string, url: string, init: RequestInit, ctx: Pick<RailAdapterContext, 'timeoutMs' | 'tap' | 'exchange'>): Promise<UpstreamResponse> {
  const { timeoutMs, tap } = ctx;
  const method = init.method ?? 'GET';
  const what = `${method} ${new URL(url).pathname}`;
  const request: UpstreamRequest = { provider, method, url, headers: headerRecord(init.headers), body: typeof init.body === 'string' ? init.body : undefined };
  if (tap) tap.beforeCall?.(request);
  try {
    const response = await (ctx.exchange ?? httpExchange)(url, { method, headers: request.headers, body: request.body, timeoutMs });
    const answer = { status: response.status, text: response.text };
    if (tap) tap.answered?.(request, { ...answer, contentType: response.headers['content-type'] ?? null });
    return answer;
  } catch (err) {
    if (err instanceof HttpTimeoutError) throw new RailError('timeout', `${provider} did not answer ${what} within ${timeoutMs} ms`);
    const code = err instanceof HttpConnectionError ? (err.code ?? err.message) : String(err);
    throw new RailError('connection', `${provider} could not be reached for ${what}: ${code}`);
  }
}
