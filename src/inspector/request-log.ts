import { iso, type Clock } from '../kernel/clock.ts';
import type { Environment } from '../kernel/environment.ts';
import type { AppliedFault } from '../kernel/api-fault.ts';
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
  /** Merchant requests: the sandbox fault rule that fired on it. */
  fault: AppliedFault | null;
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

/** A page of entries, newest first; `last` is the seq of the last one, the next page's `before`. */
export interface RequestLogPage {
  items: RequestLogEntry[];
  last: number | null;
  more: boolean;
}

/**
 * The requests inspector's log as the recorder, the listing and the object timelines use it: in
 * this process's memory (RequestLog, one process on SQLite) or in the database (StoredRequestLog,
 * a fleet on PostgreSQL, where every instance shows every instance's requests).
 */
export interface RequestHistory {
  /** Keeps an entry (a stored log writes it in the background, failures logged). */
  record(environment: Environment, merchantId: string | null, entry: Omit<RequestLogEntry, 'id' | 'at'> & { at?: number }): unknown;
  list(environment: Environment, merchantId: string, query: RequestLogQuery): RequestLogPage | Promise<RequestLogPage>;
  forObject(environment: Environment, merchantId: string, objectId: string): RequestLogEntry[] | Promise<RequestLogEntry[]>;
}

/**
 * What one kept entry costs, roughly: V8 stores these strings one byte a character (two for
 * non-Latin-1), plus the objects around them. An estimate that only has to grow with the entry.
 */
const ENTRY_OVERHEAD_BYTES = 400;
function bytesOf(kept: Kept): number {
  const { entry } = kept;
  let chars =
    entry.path.length +
    (entry.idempotency_key?.length ?? 0) +
    (entry.object_id?.length ?? 0) +
    (kept.merchantId?.length ?? 0) +
    (entry.fault ? entry.fault.rule.length + (entry.fault.file?.length ?? 0) : 0);
  if (entry.match)
    chars += entry.match.matched
      ? (entry.match.file?.length ?? 0) + entry.match.rule_name.length
      : entry.match.failed.length + (entry.match.nearest ? (entry.match.nearest.file?.length ?? 0) + entry.match.nearest.rule_name.length : 0);
  return ENTRY_OVERHEAD_BYTES + 2 * chars;
}

/**
 * A ring bounded by count and by bytes: the oldest entries make room for the newest, so memory
 * stays bounded whatever the requests look like (a path can be as long as the HTTP parser lets it).
 */
class Ring {
  private readonly slots: ({ kept: Kept; bytes: number } | undefined)[];
  /** The oldest entry's slot. */
  private head = 0;
  size = 0;
  bytes = 0;
  constructor(
    readonly capacity: number,
    readonly maxBytes: number,
  ) {
    this.slots = new Array<{ kept: Kept; bytes: number } | undefined>(capacity);
  }
  push(kept: Kept): void {
    const bytes = bytesOf(kept);
    while (this.size > 0 && (this.size === this.capacity || this.bytes + bytes > this.maxBytes)) this.dropOldest();
    this.slots[(this.head + this.size) % this.capacity] = { kept, bytes };
    this.size++;
    this.bytes += bytes;
  }
  private dropOldest(): void {
    this.bytes -= this.slots[this.head]!.bytes;
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.size--;
  }
  /** Newest first. */
  *newest(): Generator<Kept> {
    for (let i = this.size - 1; i >= 0; i--) yield this.slots[(this.head + i) % this.capacity]!.kept;
  }
}

/**
 * The requests inspector's memory: every merchant request and every call that reached a provider
 * mock, in one capped ring per environment (inspector.max_requests entries and inspector.max_bytes
 * each). In memory only: it is
 * a debugging view, gone on restart, and it never holds a secret.
 */
export class RequestLog implements RequestHistory {
  private readonly rings = new Map<Environment, Ring>();
  private seq = 0;

  constructor(private readonly deps: { clock: Clock; maxPerEnvironment: number; maxBytesPerEnvironment: number }) {}

  record(environment: Environment, merchantId: string | null, entry: Omit<RequestLogEntry, 'id' | 'at' | 'fault'> & { at?: number; fault?: AppliedFault | null }): RequestLogEntry {
    const seq = ++this.seq;
    const { at, fault, ...rest } = entry;
    const kept: RequestLogEntry = { id: `req_${String(seq).padStart(12, '0')}`, at: iso(at ?? this.deps.clock.now()), ...rest, fault: fault ?? null };
    let ring = this.rings.get(environment);
    if (!ring) {
      ring = new Ring(this.deps.maxPerEnvironment, this.deps.maxBytesPerEnvironment);
      this.rings.set(environment, ring);
    }
    ring.push({ seq, merchantId, entry: kept });
    return kept;
  }

  /** How many entries an environment holds now. */
  count(environment: Environment): number {
    return this.rings.get(environment)?.size ?? 0;
  }

  /** The estimated bytes an environment's entries hold now (bounded by maxBytesPerEnvironment). */
  bytes(environment: Environment): number {
    return this.rings.get(environment)?.bytes ?? 0;
  }

  /** A merchant's entries (and the environment's unattributed mock calls), newest first. */
  list(environment: Environment, merchantId: string, query: RequestLogQuery): RequestLogPage {
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
