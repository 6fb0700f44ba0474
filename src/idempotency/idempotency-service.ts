import type { Clock } from '../kernel/clock.ts';
import { IdempotencyConflictError, IdempotencyKeyReusedError, ValidationError } from '../kernel/errors.ts';
import { sha256Hex } from '../kernel/secrets.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db } from '../store/db.ts';
import { type IdempotencyCompletion, IdempotencyRepository, type IdempotencyKeyRow } from '../store/repositories/idempotency-repository.ts';

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
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return sha256Hex(JSON.stringify([method.toUpperCase(), path, canonical(body)]));
}

function keyId(claim: IdempotencyClaim) {
  return { environment: claim.scope.environment, merchantId: claim.scope.merchantId, key: claim.key };
}

export function parseIdempotencyKey(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new ValidationError('The Idempotency-Key header is required on this endpoint', [{ field: 'Idempotency-Key', message: 'required' }]);
  }
  if (!KEY_FORMAT.test(header)) {
    throw new ValidationError('Idempotency-Key must be 1 to 255 visible ASCII characters', [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }]);
  }
  return header;
}

/** Finishes an Idempotency-Key a stopped process left in flight, given the resource it claimed for. */
export type Recovery = (resourceId: string) => Promise<void>;

type KeyRow = IdempotencyKeyRow;

/**
 * Formance-style idempotency: the key, a hash of the request and the response are stored in the
 * transaction that makes the effect. Same key and request: the stored response again. Same key,
 * other request: idempotency_key_reused. Same key while the first is in flight in this process:
 * idempotency_conflict. Keys live 24 hours per merchant and environment.
 *
 * Each claim records the boot that made it. A key still in flight from a boot that is not alive
 * was orphaned by a stop: it is recovered (at start-up, by the status poll, or by the retry that
 * meets it, whichever comes first, and only once), so a retry after a restart gets the real answer.
 * A key in flight in another live process (several instances on one PostgreSQL database) is that
 * process's own: a retry meets idempotency_conflict there, as it would in this process.
 */
export class IdempotencyService {
  private readonly recoveries = new Map<string, Recovery>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly repo = new IdempotencyRepository();
  /** Claims whose lookup found no row at all holding the key (not even an expired one): see claimsByAppend. */
  private readonly vacant = new WeakSet<IdempotencyClaim>();

  constructor(
    private readonly deps: {
      clock: Clock;
      boot: number;
      /** The other boots alive on this database (none when one process owns it). */
      liveBoots?: () => Promise<number[]>;
      /** Where a recovery takes over an orphaned key, so one process in a fleet recovers it. */
      store?: Db;
    },
  ) {}

  /** Whether a key claimed by `boot` belongs to a stopped process. */
  private async orphanedBy(boot: number | null): Promise<boolean> {
    if (boot === this.deps.boot) return false;
    if (boot === null || !this.deps.liveBoots) return true;
    return !(await this.deps.liveBoots()).includes(boot);
  }

  /** How orphaned keys of one kind of resource are finished, by the resource id's prefix (`chg`). */
  registerRecovery(prefix: string, recovery: Recovery): void {
    this.recoveries.set(prefix, recovery);
  }

  /** Replays a finished request, refuses a clash, or returns null for a fresh key. */
  async lookup(db: Db, claim: IdempotencyClaim): Promise<StoredResponse | null> {
    const found = await this.repo.find(db, keyId(claim));
    if (!found) this.vacant.add(claim);
    let row = this.live(found);
    if (!row) return null;
    if (row.request_hash !== claim.requestHash) throw new IdempotencyKeyReusedError(claim.key);
    // Orphaned, or being recovered here already (adopted: it carries this boot): wait for the answer.
    if (row.state === 'in_flight' && row.resource_id && (this.running.has(row.resource_id) || (await this.orphanedBy(row.boot)))) {
      await this.recover(row.resource_id);
      row = (await this.read(db, claim)) ?? row;
    }
    if (row.state === 'in_flight') throw new IdempotencyConflictError(claim.key);
    return { status: row.response_status!, body: JSON.parse(row.response_body!) };
  }

  /**
   * Whether the key already holds this very request (answered, in flight or orphaned): the test
   * a signed request with an old timestamp must pass to be answered as a retry.
   */
  async holds(db: Db, claim: IdempotencyClaim): Promise<boolean> {
    const row = await this.read(db, claim);
    return row !== undefined && row.request_hash === claim.requestHash;
  }

  private async read(db: Db, claim: IdempotencyClaim): Promise<KeyRow | undefined> {
    return this.live(await this.repo.find(db, keyId(claim)));
  }

  /** The key's row while its retention lasts; an expired one holds the key no more. */
  private live(row: KeyRow | undefined): KeyRow | undefined {
    return row && row.expires_at > this.deps.clock.now() ? row : undefined;
  }

  /**
   * Whether the key may be claimed by an append (appendClaim): its lookup found no row at all
   * holding it. (A key whose row expired is claimed over that row, by claim()'s upsert.)
   */
  claimsByAppend(claim: IdempotencyClaim): boolean {
    return this.vacant.has(claim);
  }

  /**
   * Marks a key no row held at its lookup (claimsByAppend) in flight for this boot, by a plain
   * insert: an append, so the transaction that creates the resource may be append-only. A twin
   * that claimed the key meanwhile makes that transaction fail with a duplicate key
   * (isDuplicateKey): its caller then answers lostClaim().
   */
  async appendClaim(tx: Db, claim: IdempotencyClaim, resourceId: string): Promise<void> {
    const now = this.deps.clock.now();
    await this.repo.appendInFlight(tx, keyId(claim), { requestHash: claim.requestHash, resourceId, boot: this.deps.boot, createdAt: now, expiresAt: now + IDEMPOTENCY_RETENTION_MS });
  }

  /** Marks the key in flight for this boot, inside the transaction that creates the resource. */
  async claim(tx: Db, claim: IdempotencyClaim, resourceId: string): Promise<void> {
    const now = this.deps.clock.now();
    // A key whose retention ended is claimed afresh, over its old row.
    const inserted = await this.repo.claimInFlight(
      tx,
      keyId(claim),
      { requestHash: claim.requestHash, resourceId, boot: this.deps.boot, createdAt: now, expiresAt: now + IDEMPOTENCY_RETENTION_MS },
      now,
    );
    if (!inserted) await this.lostClaim(tx, claim);
  }

  /**
   * Lost a race with a concurrent request that used the same key: a different request is
   * idempotency_key_reused; otherwise the other one is, or just was, in flight. Always throws.
   */
  async lostClaim(db: Db, claim: IdempotencyClaim): Promise<never> {
    const row = await this.read(db, claim);
    if (row && row.request_hash !== claim.requestHash) throw new IdempotencyKeyReusedError(claim.key);
    throw new IdempotencyConflictError(claim.key);
  }

  /** Stores the response in the transaction that finishes the effect. */
  async complete(tx: Db, claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    const { id, status, body } = this.completion(claim, response);
    await this.repo.complete(tx, id, status, body);
  }

  /** The key's completion with its answer, for a statement that writes it with more (complete writes it alone). */
  completion(claim: IdempotencyClaim, response: StoredResponse): IdempotencyCompletion {
    return { id: keyId(claim), status: response.status, body: JSON.stringify(response.body) };
  }

  /** Completes whichever key is still in flight for a resource (crash recovery). */
  async completeForResource(tx: Db, resourceId: string, response: StoredResponse): Promise<void> {
    await this.repo.completeForResource(tx, resourceId, response.status, JSON.stringify(response.body));
  }

  /** Where the key that created a resource stands: in flight in a live process (this or another), orphaned by a stop, or neither. */
  async claimState(db: Db, resourceId: string): Promise<'in_flight_live' | 'orphaned' | 'settled'> {
    const row = await this.repo.inFlightForResource(db, resourceId);
    if (!row) return 'settled';
    return (await this.orphanedBy(row.boot)) ? 'orphaned' : 'in_flight_live';
  }

  /** Recovers one orphaned key; every caller that asks while it runs waits for the same run. */
  recover(resourceId: string): Promise<void> {
    const running = this.running.get(resourceId);
    if (running) return running;
    const recovery = this.recoveries.get(resourceId.slice(0, resourceId.indexOf('_')));
    if (!recovery) return Promise.resolve();
    const run = (async () => {
      const adopted = await this.adopt(resourceId);
      if (adopted === false) return;
      try {
        await recovery(resourceId);
      } catch (err) {
        // Hand the key back, so the next poll, retry or sweep recovers it again.
        if (adopted !== true && this.deps.store) await this.repo.adopt(this.deps.store, resourceId, this.deps.boot, adopted.from);
        throw err;
      }
    })().finally(() => this.running.delete(resourceId));
    this.running.set(resourceId, run);
    return run;
  }

  /**
   * Makes this boot the owner of an orphaned key before recovering it. Several processes on one
   * database may meet the same orphan at once (a start, the sweep, a retry, a status poll): the
   * one whose UPDATE moves the key from the dead boot recovers it; the others leave it to that
   * one, and a retry meets idempotency_conflict until it answers. If the adopter dies too, its
   * boot is dead in turn and the key is adopted again.
   */
  private async adopt(resourceId: string): Promise<boolean | { from: number | null }> {
    const store = this.deps.store;
    if (!store) return true; // one process: the in-process single flight above is enough
    const row = await this.repo.inFlightForResource(store, resourceId);
    if (!row) return true; // settled meanwhile: the recovery finds it so and only completes the key
    // This process holds it: the request that claimed it, or a recovery already running (joined above).
    if (row.boot === this.deps.boot) return false;
    if (!(await this.orphanedBy(row.boot))) return false;
    return (await this.repo.adopt(store, resourceId, row.boot, this.deps.boot)) ? { from: row.boot } : false;
  }

  /** Recovers every key stopped boots left in flight (never a live process's), a few at a time; returns how many. */
  async recoverOrphans(db: Db, concurrency = 8): Promise<number> {
    const keep = [this.deps.boot, ...((await this.deps.liveBoots?.()) ?? [])];
    const queue = await this.repo.orphanedResources(db, keep);
    const total = queue.length;
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) await this.recover(id);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    return total;
  }
}
