import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from '../../kernel/logger.ts';

// Kept-alive connections: a clock advance can send thousands of callbacks in a row.
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/**
 * How long every mock waits for the receiver of a callback, unless configured
 * (rails.mock_callback_timeout_ms). Real time: a receiver that never answers must not stall the
 * scheduler's one-at-a-time queue for long.
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

export interface CallbackDelivery {
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
  timeoutMs?: number;
}

/** JSON callbacks, the format every mock so far speaks. */
export function jsonCallback(url: string, method: 'POST' | 'PUT', body: unknown): CallbackMessage {
  return { url, method, body: JSON.stringify(body) };
}

/**
 * Sends one provider callback over real HTTP and resolves with the receiver's status. Rejects on
 * a connection failure or a timeout; the caller decides whether to log it (providers do not retry).
 */
export function sendCallbackRequest(url: URL, delivery: CallbackDelivery): Promise<number> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
  const timeoutMs = delivery.timeoutMs ?? CALLBACK_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: delivery.method,
        agent,
        headers: { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) },
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error(`callback timed out after ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end(delivery.body);
  });
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
    };
    try {
      const status = await sendCallbackRequest(url, { method: message.method, headers, body: message.body, timeoutMs: this.deps.timeoutMs });
      if (status < 200 || status >= 300) this.deps.logger.warn(`${this.deps.provider} mock: callback was not accepted`, { reference, status });
    } catch (err) {
      // The URL may carry the receiver's token, so it is not logged.
      this.deps.logger.warn(`${this.deps.provider} mock: callback delivery failed`, { reference, error: String(err) });
    }
  }
}
