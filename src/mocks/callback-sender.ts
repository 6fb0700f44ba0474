import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

// Kept-alive connections: a clock advance can send thousands of callbacks in a row.
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/** How long every mock waits for the receiver of a callback: one figure for all of them. */
export const CALLBACK_TIMEOUT_MS = 10_000;

export interface CallbackDelivery {
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
  timeoutMs?: number;
}

/**
 * Sends one provider callback over real HTTP and resolves with the receiver's status. Rejects on
 * a connection failure or a timeout; the caller decides whether to log it (providers do not retry).
 */
export function sendCallbackRequest(url: URL, delivery: CallbackDelivery): Promise<number> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: delivery.method,
        agent,
        headers: { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) },
        timeout: delivery.timeoutMs ?? CALLBACK_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error(`callback timed out after ${delivery.timeoutMs ?? CALLBACK_TIMEOUT_MS} ms`)));
    req.once('error', reject);
    req.end(delivery.body);
  });
}
