import { iso, type Clock } from '../kernel/clock.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Store } from '../store/db.ts';
import { RequestLogRepository, type RequestLogRow } from '../store/repositories/request-log-repository.ts';
import type { RequestHistory, RequestLogEntry, RequestLogPage, RequestLogQuery } from './request-log.ts';

/** An entry as kept (all but its id) and its number: the entry, its id made from the number. */
function entryOf(row: RequestLogRow): RequestLogEntry {
  return { id: `req_${String(row.seq).padStart(12, '0')}`, ...(JSON.parse(row.entry) as Omit<RequestLogEntry, 'id'>) };
}

/**
 * The requests inspector's log in the database, for a fleet: every instance records into one ring
 * per environment (inspector.max_requests slots, the oldest replaced in place) and lists from it,
 * so the inspector shows the requests every instance served. An entry is written in the background
 * once its answer is sent (one statement on PostgreSQL: the environment's next number and the slot): the instance
 * that served it lists it at once (its listing waits for its own writes), the others moments later. Entries are bounded in size (paths cut at 512 characters), so the count
 * bounds the bytes: inspector.max_bytes applies to the in-memory log only.
 */
export class StoredRequestLog implements RequestHistory {
  private readonly repo: RequestLogRepository;
  private trimmed: Promise<void> | undefined;
  /** Entries this instance is still writing: its own listing waits for them (it reads its writes). */
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly deps: { store: Store; clock: Clock; logger: Logger; maxPerEnvironment: number }) {
    this.repo = new RequestLogRepository(deps.store.kind === 'postgres');
  }

  record(environment: Environment, merchantId: string | null, entry: Omit<RequestLogEntry, 'id' | 'at'> & { at?: number }): Promise<void> {
    const { at, ...rest } = entry;
    const when = at ?? this.deps.clock.now();
    const written = this.write(environment, merchantId, when, rest).catch((err: unknown) => this.deps.logger.warn('requests inspector: request not recorded', { error: String(err) }));
    this.writing.add(written);
    void written.then(() => this.writing.delete(written));
    return written;
  }

  private async settled(): Promise<void> {
    if (this.writing.size) await Promise.all([...this.writing]);
  }

  private async write(environment: Environment, merchantId: string | null, at: number, rest: Omit<RequestLogEntry, 'id' | 'at'>): Promise<void> {
    const { store, maxPerEnvironment: max } = this.deps;
    // Once per process: slots beyond a lowered cap are forgotten, so the ring holds `max` at most.
    this.trimmed ??= this.repo.dropSlotsFrom(store, max);
    await this.trimmed;
    const kept: Omit<RequestLogEntry, 'id'> = { at: iso(at), ...rest };
    await this.repo.append(store, { environment, max, merchantId, objectId: kept.object_id, kind: kept.kind, status: kept.status, entry: JSON.stringify(kept) });
  }

  async list(environment: Environment, merchantId: string, query: RequestLogQuery): Promise<RequestLogPage> {
    await this.settled();
    const rows = await this.repo.page(this.deps.store, environment, merchantId, {
      before: query.before ?? null,
      kind: query.kind ?? null,
      objectId: query.objectId ?? null,
      status: query.status ?? null,
      limit: query.limit + 1,
    });
    const more = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    return { items: page.map(entryOf), last: page.length ? Number(page.at(-1)!.seq) : null, more };
  }

  async forObject(environment: Environment, merchantId: string, objectId: string): Promise<RequestLogEntry[]> {
    await this.settled();
    const rows = await this.repo.forObject(this.deps.store, environment, merchantId, objectId);
    return rows.map(entryOf);
  }
}
