import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { merchantHeaders } from '../kernel/api-client.ts';
import type { RouteSpec } from '../http/route.ts';
import { findRoute } from '../replay/replay-api.ts';

// What a pact cannot hold, added to each request the Pact verifier sends to railyard: the API key,
// a fresh Idempotency-Key (a stored one would replay) and a signature made now over both (a recorded one is
// stale).

/** The body the pact-js proxy forwards: it re-serialises what body-parser read. */
export function forwardedBody(req: IncomingMessage & { body?: unknown }): string {
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (req.body !== null && typeof req.body === 'object') return Object.keys(req.body).length || Array.isArray(req.body) ? JSON.stringify(req.body) : '';
  return '';
}

export interface MerchantCredentials {
  key: string;
  secret: string;
  routes: readonly RouteSpec[];
  now: number;
}

/** Authorization, X-Service-Timestamp/Signature on signed routes, and a fresh Idempotency-Key on idempotent ones. */
export function contractHeaders(auth: MerchantCredentials, method: string, pathAndQuery: string, rawBody: string): Record<string, string> {
  const route = findRoute(auth.routes, method, pathAndQuery);
  return merchantHeaders(
    { method, path: pathAndQuery, key: auth.key, signingSecret: auth.secret, sign: route?.signed, idempotencyKey: route?.idempotent ? `contract-${randomUUID()}` : undefined },
    rawBody,
    auth.now,
  );
}

/** The same headers, set on a request the Pact verifier is sending through its proxy. */
export function authorise(req: IncomingMessage & { body?: unknown; originalUrl?: string }, auth: MerchantCredentials): void {
  Object.assign(req.headers, contractHeaders(auth, req.method ?? 'GET', req.originalUrl ?? req.url ?? '/', forwardedBody(req)));
}
