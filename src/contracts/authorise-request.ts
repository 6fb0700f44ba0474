import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { signRequest, unusedTimestamp } from '../auth/request-signature.ts';
import type { RouteSpec } from '../http/route.ts';
import { findRoute } from '../replay/replay-runner.ts';

// What a pact cannot hold, added to each request the Pact verifier sends to railyard: the API key,
// a fresh Idempotency-Key (a stored one would replay) and a signature made now (a recorded one is
// stale, and a replayed one is refused).

/** The body the pact-js proxy forwards: it re-serialises what body-parser read. */
export function forwardedBody(req: IncomingMessage & { body?: unknown }): string {
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (req.body !== null && typeof req.body === 'object') return Object.keys(req.body).length || Array.isArray(req.body) ? JSON.stringify(req.body) : '';
  return '';
}

/** Sets Authorization, X-Service-Timestamp/Signature on signed routes, and a fresh Idempotency-Key on idempotent ones. */
export function authorise(
  req: IncomingMessage & { body?: unknown; originalUrl?: string },
  auth: { key: string; secret: string; routes: readonly RouteSpec[]; used: Set<string>; now: number },
): void {
  const method = req.method ?? 'GET';
  const pathAndQuery = req.originalUrl ?? req.url ?? '/';
  const route = findRoute(auth.routes, method, pathAndQuery);
  req.headers.authorization = `Bearer ${auth.key}`;
  if (route?.idempotent) req.headers['idempotency-key'] = `contract-${randomUUID()}`;
  if (route?.signed) {
    const raw = forwardedBody(req);
    const sign = (ts: string) => signRequest(auth.secret, ts, method, pathAndQuery, raw);
    const ts = unusedTimestamp(auth.used, Math.floor(auth.now / 1000), sign);
    req.headers['x-service-timestamp'] = ts;
    req.headers['x-service-signature'] = sign(ts);
  }
}

