import { httpExchange } from '../../kernel/http-exchange.ts';
import { jobHeader } from '../../kernel/job-scope.ts';
import type { Logger } from '../../kernel/logger.ts';
import { wireCallbackLog } from './wire-response-log.ts';

/**
 * How long every mock waits for the receiver of a callback, unless configured
 * (rails.callback_timeout_ms). Real time: a receiver that never answers must not hold a place in
 * the scheduler's round (and the jobs behind it in its partition) for long.
 */
export const CALLBACK_TIMEOUT_MS = 10_000;

/** One callback as a wire module builds it: everything but the signature. */
export interface CallbackMessage {
  url: string;
  method: 'POST' | 'PUT';
  /** The exact body text; a duplicate sends these bytes again. */
  body: string;
  /** Defaults to content-type: application/json. */
  headers?: Record<string, string>;
}

/**
 * A wire's signing hook: the headers that authenticate one sending of a callback (made at send
 * time, so a duplicate sent later carries a fresh timestamp over the same bytes).
 */
export type CallbackSigner = (message: CallbackMessage, url: URL) => Record<string, string>;

/** Where railyard's own callback receiver listens, below the service's base URL. */
export const CALLBACK_RECEIVER_PATH = '/internal/callbacks/';

/** A callback handed to railyard's own receiver in process: what the receiver would have read off the socket. */
export interface LocalCallback {
  method: 'POST' | 'PUT';
  /** From /internal/callbacks/ on, without the query. */
  path: string;
  /** Names in lower case, as node hands them to a server; the signature among them. */
  headers: Record<string, string>;
  body: string;
}

/**
 * railyard's own callback receiver, as the composition root wires it for its mocks (mocks do not
 * import rails): it settles the callback in the caller's job and answers with the HTTP status the
 * route would have sent.
 */
export type LocalCallbackReceiver = (callback: LocalCallback) => Promise<{ status: number }>;

/** railyard's own receiver and the base URL it is served at: callbacks there need no socket. */
export interface LocalReceiver {
  serviceBaseUrl: () => string;
  receive: LocalCallbackReceiver;
}

/** JSON callbacks, the format every mock so far speaks. */
export function jsonCallback(url: string, method: 'POST' | 'PUT', body: unknown): CallbackMessage {
  return { url, method, body: JSON.stringify(body) };
}

/**
 * The one way a mock calls back: once, never retried (none of the upstreams retries), signed by
 * the wire's hook when it has one, within one configured timeout. Failures are logged, not thrown:
 * a receiver that is down is the receiver's problem, as it is with the real upstreams.
 *
 * A callback to railyard's own receiver (`local`) is handed over in process: the same method,
 * path, headers and bytes, settled in the sending job, without a round trip through a socket to
 * itself. It is not timed out: the receiver is this process, and always answers.
 */
export class CallbackSender {
  /** RAILYARD_WIRE_RESPONSE_LOG: each callback written down, to check against the provider's description. */
  private readonly log: ReturnType<typeof wireCallbackLog>;

  constructor(private readonly deps: { provider: string; logger: Logger; timeoutMs?: number; sign?: CallbackSigner; local?: LocalReceiver | undefined }) {
    this.log = wireCallbackLog(deps.provider);
  }

  async send(message: CallbackMessage, reference: string): Promise<void> {
    this.log?.(message);
    const url = new URL(message.url);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...message.headers,
      ...(this.deps.sign ? this.deps.sign(message, url) : {}),
    };
    try {
      const { status } = await this.deliver(message, url, headers);
      if (status < 200 || status >= 300) this.deps.logger.warn(`${this.deps.provider} mock: callback was not accepted`, { reference, status });
    } catch (err) {
      // The URL may carry the receiver's token, so it is not logged.
      this.deps.logger.warn(`${this.deps.provider} mock: callback delivery failed`, { reference, error: String(err) });
    }
  }

  private deliver(message: CallbackMessage, url: URL, headers: Record<string, string>): Promise<{ status: number }> {
    const local = this.deps.local;
    const path = local && localPath(url, local.serviceBaseUrl());
    if (local && path !== undefined) return local.receive({ method: message.method, path, headers: serverSideHeaders(headers, url, message.body), body: message.body });
    // Over HTTP the sending job is named in a header: a receiver in this process joins that job.
    return httpExchange(url, { method: message.method, headers: { ...headers, ...jobHeader() }, body: message.body, timeoutMs: this.deps.timeoutMs ?? CALLBACK_TIMEOUT_MS });
  }
}

/** The receiver's path when `url` is railyard's own callback receiver (same origin, under /internal/callbacks/{provider}), else undefined. */
function localPath(url: URL, serviceBaseUrl: string): string | undefined {
  const base = new URL(serviceBaseUrl);
  const mount = base.pathname.replace(/\/+$/, '');
  if (url.origin !== base.origin || !url.pathname.startsWith(`${mount}${CALLBACK_RECEIVER_PATH}`)) return undefined;
  const path = url.pathname.slice(mount.length);
  // Only a path that names a provider reaches the receiver's route; anything else is left to HTTP.
  return /^\/internal\/callbacks\/[^/]+/.test(path) ? path : undefined;
}

/** The headers as a server reads them off the socket: names in lower case, with host and content-length. */
function serverSideHeaders(headers: Record<string, string>, url: URL, body: string): Record<string, string> {
  const read: Record<string, string> = { host: url.host };
  for (const [name, value] of Object.entries(headers)) read[name.toLowerCase()] = value;
  read['content-length'] = String(Buffer.byteLength(body));
  return read;
}
