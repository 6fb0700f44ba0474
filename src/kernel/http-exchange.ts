import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

// Kept-alive connections: a clock advance sends thousands of requests in a row, and under load
// a fresh connection (or fetch's per-request stream machinery) costs more than the exchange.
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export interface HttpExchangeRequest {
  method: string;
  headers?: Record<string, string>;
  body?: string | undefined;
  /** A deadline for the whole exchange, answer included, in real time. */
  timeoutMs: number;
  /** Abandons the exchange (a command stopped by Ctrl-C, say). */
  signal?: AbortSignal | undefined;
  /** Connections of the caller's own (a load generator's pool); the shared kept-alive ones otherwise. */
  agent?: HttpAgent | undefined;
}

export interface HttpExchangeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The exchange did not finish within its deadline. */
export class HttpTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** No answer: refused, reset, unresolvable; `code` is node's (ECONNREFUSED, ...). */
export class HttpConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * An exchange's deadline and its caller's abort signal, however it is carried: either fails it
 * (a timeout, or a stop) and hangs up. `release` when it settles otherwise.
 */
export function guardExchange(request: Pick<HttpExchangeRequest, 'timeoutMs' | 'signal'>, fail: (error: Error) => void, hangUp: () => void): { release(): void } {
  const deadline = setTimeout(() => {
    fail(new HttpTimeoutError(`timed out after ${request.timeoutMs} ms`));
    hangUp();
  }, request.timeoutMs);
  const abort = () => {
    fail(new HttpConnectionError('the request was stopped', 'ABORT_ERR'));
    hangUp();
  };
  // Already stopped: failed on the next turn, once the caller holds this guard.
  if (request.signal?.aborted) queueMicrotask(abort);
  else request.signal?.addEventListener('abort', abort, { once: true });
  return {
    release() {
      clearTimeout(deadline);
      request.signal?.removeEventListener('abort', abort);
    },
  };
}

/** One HTTP exchange over node:http with kept-alive connections: the answer read whole, as text. */
export function httpExchange(url: string | URL, request: HttpExchangeRequest): Promise<HttpExchangeResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const secure = target.protocol === 'https:';
  const headers = { ...request.headers };
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      guard.release();
      settle();
    };
    const req = (secure ? httpsRequest : httpRequest)(target, { method: request.method, headers, agent: request.agent ?? (secure ? agents.https : agents.http) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => finish(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') })));
      res.on('error', (err) => finish(() => reject(new HttpConnectionError(err.message, (err as NodeJS.ErrnoException).code))));
    });
    const guard = guardExchange(
      request,
      (error) => finish(() => reject(error)),
      () => req.destroy(),
    );
    req.on('error', (err) => finish(() => reject(new HttpConnectionError(err.message, (err as NodeJS.ErrnoException).code))));
    req.end(request.body);
  });
}
