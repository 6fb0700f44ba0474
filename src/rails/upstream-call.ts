import { RailError } from './provider-port.ts';
import type { UpstreamRequest, UpstreamTap } from './upstream-tap.ts';

export interface UpstreamResponse {
  status: number;
  text: string;
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * One HTTP call to an upstream with a real-time timeout. Transport failures become the
 * RailErrors the router fails over on: timeout, or connection (refused, reset, DNS).
 */
export async function callUpstream(provider: string, url: string, init: RequestInit, timeoutMs: number, tap?: UpstreamTap): Promise<UpstreamResponse> {
  const what = `${init.method ?? 'GET'} ${new URL(url).pathname}`;
  const request: UpstreamRequest | undefined = tap
    ? { provider, method: init.method ?? 'GET', url, headers: headerRecord(init.headers), body: typeof init.body === 'string' ? init.body : undefined }
    : undefined;
  if (request) tap?.beforeCall?.(request);
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const answer = { status: response.status, text: await response.text() };
    if (request) tap?.answered?.(request, { ...answer, contentType: response.headers.get('content-type') });
    return answer;
  } catch (err) {
    const name = (err as { name?: string } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new RailError('timeout', `${provider} did not answer ${what} within ${timeoutMs} ms`);
    }
    const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
    throw new RailError('connection', `${provider} could not be reached for ${what}: ${cause?.code ?? cause?.message ?? String(err)}`);
  }
}
