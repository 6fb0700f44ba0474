import { httpExchange } from '../../kernel/http-exchange.ts';
import { jobHeader } from '../../kernel/job-scope.ts';
import type { Logger } from '../../kernel/logger.ts';

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

/** JSON callbacks, the format every mock so far speaks. */
export function jsonCallback(url: string, method: 'POST' | 'PUT', body: unknown): CallbackMessage {
  return { url, method, body: JSON.stringify(body) };
}

/**
 * The one way a mock calls back: once, never retried (none of the upstreams retries), signed by
 * the wire's hook when it has one, within one configured timeout. Failures are logged, not thrown:
 * a receiver that is down is the receiver's problem, as it is with the real upstreams.
 */
export class CallbackSender {
  constructor(
    private readonly deps: { provider: string; logger: Logger; timeoutMs?: number; sign?: CallbackSigner },
  ) {}

  async send(message: CallbackMessage, reference: string): Promise<void> {
    const url = new URL(message.url);
    const headers = {
      'content-type': 'application/json',
      ...message.headers,
      ...(this.deps.sign ? this.deps.sign(message, url) : {}),
      // The job sending it: an in-process receiver handles the callback as part of that job.
      ...jobHeader(),
    };
    try {
      const { status } = await httpExchange(url, { method: message.method, headers, body: message.body, timeoutMs: this.deps.timeoutMs ?? CALLBACK_TIMEOUT_MS });
      if (status < 200 || status >= 300) this.deps.logger.warn(`${this.deps.provider} mock: callback was not accepted`, { reference, status });
    } catch (err) {
      // The URL may carry the receiver's token, so it is not logged.
      this.deps.logger.warn(`${this.deps.provider} mock: callback delivery failed`, { reference, error: String(err) });
    }
  }
}
