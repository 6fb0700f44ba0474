import { RailError } from './provider-port.ts';

export interface UpstreamResponse {
  status: number;
  text: string;
}

/**
 * One HTTP call to an upstream with a real-time timeout. Transport failures become the
 * RailErrors the router fails over on: timeout, or connection (refused, reset, DNS).
 */
export async function callUpstream(provider: string, url: string, init: RequestInit, timeoutMs: number): Promise<UpstreamResponse> {
  const what = `${init.method ?? 'GET'} ${new URL(url).pathname}`;
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, text: await response.text() };
  } catch (err) {
    const name = (err as { name?: string } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new RailError('timeout', `${provider} did not answer ${what} within ${timeoutMs} ms`);
    }
    const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
    throw new RailError('connection', `${provider} could not be reached for ${what}: ${cause?.code ?? cause?.message ?? String(err)}`);
  }
}
