import type { Clock } from '../kernel/clock.ts';
import { IdempotencyConflictError, IdempotencyKeyReusedError, ValidationError } from '../kernel/errors.ts';
import { sha256Hex } from '../kernel/secrets.ts';
import type { Environment } from '../ledger/ledger.ts';
import type { Db } from '../store/db.ts';

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyScope {
  environment: Environment;
  merchantId: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** A claimed key: the service completes it inside the transaction that makes the effect. */
export interface IdempotencyClaim {
  scope: IdempotencyScope;
  key: string;
  requestHash: string;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return sha256Hex(JSON.stringify([method.toUpperCase(), path, canonical(body)]));
}

export function parseIdempotencyKey(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new ValidationError('The Idempotency-Key header is required on this endpoint', [
      { field: 'Idempotency-Key', message: 'required' },
    ]);
  }
  if (!KEY_FORMAT.test(header)) {
    throw new ValidationError('Idempotency-Key must be 1 to 255 visible ASCII characters', [
      { field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  }
  return header;
}

/**
 * Formance-style idempotency: the key, a hash of the request and the response are stored in the
 * transaction that makes the effect. Same key and request: the stored response again. Same key,
 * other request: idempotency_key_reused. Same key while the first is in flight:
 * idempotency_conflict. Keys live 24 hours per merchant and environment.
 */
export class IdempotencyService {
  constructor(private readonly deps: { clock: Clock }) {}

  /** Replays a finished request, refuses a clash, or returns null for a fresh key. */
  async lookup(db: Db, claim: IdempotencyClaim): Promise<StoredResponse | null> {
    const row = await db.get<{ request_hash: string; state: string; response_status: number | null; response_body: string | null; expires_at: number }>(
      'SELECT request_hash, state, response_status, response_body, expires_at FROM idempotency_keys WHERE environment = ? AND merchant_id = ? AND idempotency_key = ?',
      [claim.scope.environment, claim.scope.merchantId, claim.key],
    );
    if (!row || row.expires_at <= this.deps.clock.now()) return null;
    if (row.request_hash !== claim.requestHash) throw new IdempotencyKeyReusedError(claim.key);
    if (row.state === 'in_flight') throw new IdempotencyConflictError(claim.key);
    return { status: row.response_status!, body: JSON.parse(row.response_body!) };
  }

  /** Marks the key in flight, inside the transaction that creates the resource. */
  async claim(tx: Db, claim: IdempotencyClaim, resourceId: string): Promise<void> {
    const now = this.deps.clock.now();
    await tx.run('DELETE FROM idempotency_keys WHERE environment = ? AND merchant_id = ? AND idempotency_key = ? AND expires_at <= ?', [
      claim.scope.environment,
      claim.scope.merchantId,
      claim.key,
      now,
    ]);
    const inserted = await tx.run(
      `INSERT INTO idempotency_keys (environment, merchant_id, idempotency_key, request_hash, state, resource_id, created_at, expires_at)
       VALUES (?, ?, ?, ?, 'in_flight', ?, ?, ?) ON CONFLICT DO NOTHING`,
      [claim.scope.environment, claim.scope.merchantId, claim.key, claim.requestHash, resourceId, now, now + IDEMPOTENCY_RETENTION_MS],
    );
    if (inserted.changes === 0) {
      // Lost a race with a concurrent request that used the same key: lookup names the clash
      // (a different request); otherwise the other one is, or just was, in flight.
      await this.lookup(tx, claim);
      throw new IdempotencyConflictError(claim.key);
    }
  }

  /** Stores the response in the transaction that finishes the effect. */
  async complete(tx: Db, claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await tx.run(
      `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ?
       WHERE environment = ? AND merchant_id = ? AND idempotency_key = ?`,
      [response.status, JSON.stringify(response.body), claim.scope.environment, claim.scope.merchantId, claim.key],
    );
  }

  /** Completes whichever key is still in flight for a resource (crash recovery). */
  async completeForResource(tx: Db, resourceId: string, response: StoredResponse): Promise<void> {
    await tx.run(
      `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE resource_id = ? AND state = 'in_flight'`,
      [response.status, JSON.stringify(response.body), resourceId],
    );
  }
}
