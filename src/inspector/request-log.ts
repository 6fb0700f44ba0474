import { iso, type Clock } from '../kernel/clock.ts';
import type { Environment } from '../ledger/ledger.ts';
import type { RuleMatchReport } from '../scenarios/rule-explanation.ts';

/** One request as the inspector shows it. Never a header but the Idempotency-Key, never a body. */
export interface RequestLogEntry {
  id: string;
  at: string;
  kind: 'merchant' | 'mock';
  method: string;
  /** The path without its query string. */
  path: string;
  /** null: no answer was sent (a mock held the request open past the caller's timeout, or reset it). */
  status: number | null;
  latency_ms: number;
  idempotency_key: string | null;
  object_id: string | null;
  provider: string | null;
  match: RuleMatchReport | null;
}

interface Kept {
  seq: number;
  /** Whose it is; null for a mock call no object could be tied to (every test merchant sees those). */
  merchantId: string | null;
  entry: RequestLogEntry;
}

export interface RequestLogQuery {
  /** The seq of the last entry of the previous page: entries before it. */
  before?: number;
  limit: number;
  kind?: 'merchant' | 'mock';
  objectId?: string;
  status?: number;
}

/** A fixed-size ring: the oldest entry makes room for the newest, so memory stays bounded. */
class Ring {
  private readonly slots: (Kept | undefined)[];
  private next = 0;
  size = 0;
  constructor(readonly capacity: number) {
    this.slots = new Array<Kept | undefined>(capacity);
  }
  push(kept: Kept): void {
    this.slots[this.next] = kept;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }
  /** Newest first. */
  *newest(): Generator<Kept> {
    for (let i = 1; i <= this.size; i++) yield this.slots[(this.next - i + this.capacity) % this.capacity]!;
  }
}

/**
 * The requests inspector's memory: every merchant request and every call that reached a provider
 * mock, in one capped ring per environment (inspector.max_requests each). In memory only: it is
 * a debugging view, gone on restart, and it never holds a secret.
 */
export class RequestLog {
  private readonly rings = new Map<Environment, Ring>();
  private seq = 0;

  constructor(private readonly deps: { clock: Clock; maxPerEnvironment: number }) {}

  record(environment: Environment, merchantId: string | null, entry: Omit<RequestLogEntry, 'id' | 'at'> & { at?: number }): RequestLogEntry {
    const seq = ++this.seq;
    const { at, ...rest } = entry;
    const kept: RequestLogEntry = { id: `req_${String(seq).padStart(12, '0')}`, at: iso(at ?? this.deps.clock.now()), ...rest };
    let ring = this.rings.get(environment);
    if (!ring) this.rings.set(environment, (ring = new Ring(this.deps.maxPerEnvironment)));
    ring.push({ seq, merchantId, entry: kept });
    return kept;
  }

  /** How many entries an environment holds now. */
  count(environment: Environment): number {
    return this.rings.get(environment)?.size ?? 0;
  }

  /** A merchant's entries (and the environment's unattributed mock calls), newest first. */
  list(environment: Environment, merchantId: string, query: RequestLogQuery): { items: RequestLogEntry[]; last: number | null; more: boolean } {
    const items: RequestLogEntry[] = [];
    let last: number | null = null;
    for (const kept of this.rings.get(environment)?.newest() ?? []) {
      if (query.before !== undefined && kept.seq >= query.before) continue;
      if (kept.merchantId !== null && kept.merchantId !== merchantId) continue;
      const { entry } = kept;
      if (query.kind !== undefined && entry.kind !== query.kind) continue;
      if (query.objectId !== undefined && entry.object_id !== query.objectId) continue;
      if (query.status !== undefined && entry.status !== query.status) continue;
      if (items.length === query.limit) return { items, last, more: true };
      items.push(entry);
      last = kept.seq;
    }
    return { items, last, more: false };
  }

  /** A merchant's entries about one object, oldest first (the object's timeline shows them). */
  forObject(environment: Environment, merchantId: string, objectId: string): RequestLogEntry[] {
    const out: RequestLogEntry[] = [];
    for (const kept of this.rings.get(environment)?.newest() ?? []) {
      if (kept.entry.object_id === objectId && (kept.merchantId === null || kept.merchantId === merchantId)) out.push(kept.entry);
    }
    return out.reverse();
  }
}
