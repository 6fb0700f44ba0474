import type { RequestSpec } from 'autocannon';
import { randomBytes } from 'node:crypto';

/**
 * A setupRequest hook that gives every request its own Idempotency-Key, so each one creates a
 * new object instead of replaying the first answer.
 */
export function uniqueIdempotencyKeys(prefix: string): (request: RequestSpec) => RequestSpec {
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return (request) => ({ ...request, headers: { ...(request.headers ?? {}), 'idempotency-key': `${prefix}-${run}-${++n}` } });
}
