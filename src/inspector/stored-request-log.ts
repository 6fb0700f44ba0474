import { AsyncLocalStorage } from 'node:async_hooks';
import { iso, type Clock } from '../kernel/clock.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Store } from '../store/db.ts';
import { RequestLogRepository, type RequestLogRow, type RequestLogWrite } from '../store/repositories/request-log-repository.ts';
import type { RequestHistory, RequestLogEntry, RequestLogPage, RequestLogQuery } from './request-log.ts';

/** An entry as kept (all but its id) and its number: the entry, its id made from the number. */
function entryOf(row: RequestLogRow): RequestLogEntry {
  return { id: `req_${String(row.seq).padStart(12, '0')}`, ...(JSON.parse(row.entry) as Omit<RequestLogEntry, 'id'>) };
}

/** Most entries one statement writes: the ring's size bounds it too (no two may share a slot). */
const MAX_BATCH = 100;

/** An entry waiting for its statement, and who waits for it. */
interface WaitingEntry {
  write: RequestLogWrite;
  written: () => void;
  /** Runs work in the async context the entry was recorded in (the request it is about). */
  within: <R>(work: () => R) => R;
}

/**
 * The requests inspector's log in the database, for a fleet: every instance records into one ring
 * per environment (inspector.max_requests slots, the oldest replaced in place) and lists from it,
 * so the inspector shows the requests every instance served. An entry is written in the background
 * once its answer is sent (one statement on PostgreSQL: the environment's next numbers and the
 * slots). Entries answered while an environment's statement is on its way wait and go together in
 * the next one, so under load a request costs a fraction of a round trip, and alone it waits for
 * nothing. The instance that served it lists it at once (its listing waits for its own writes), the
 * others moments later. Entries are bounded in size (paths cut at 512 characters), so the count
 * bounds the bytes: inspector.max_bytes applies to the in-memory log only.
 */
export class StoredRequestLog implements RequestHistory {
  private readonly repo: RequestLogRepository;
  private trimmed: Promise<void> | undefined;
  /** Entries this instance is still writing: its own listing waits for them (it reads its writes). */
  private readonly writing = new Set<Promise<void>>();
  /** Per environment, the entries waiting for the next statement. */
  private readonly waiting = new Map<Environment, WaitingEntry[]>();
  /** Environments whose statement is on its way: what arrives meanwhile waits for the next. */
  private readonly flushing = new Set<Environment>();

  constructor(private readonly deps: { store: Store; clock: Clock; logger: Logger; maxPerEnvironment: number }) {
    this.repo = new RequestLogRepository(deps.store.kind === 'postgres');
  }

  record(environment: Environment, merchantId: string | null, entry: Omit<RequestLogEntry, 'id' | 'at'> & { at?: number }): Promise<void> {
    const { at, ...rest } = entry;
    const kept: Omit<RequestLogEntry, 'id'> = { at: iso(at ?? this.deps.clock.now()), ...rest };
    const write: RequestLogWrite = { merchantId, objectId: kept.object_id, kind: kept.kind, status: kept.status, entry: JSON.stringify(kept) };
    const written = new Promise<void>((done) => {
      const queue = this.waiting.get(environment) ?? [];
      this.waiting.set(environment, queue);
      queue.push({ write, written: done, within: AsyncLocalStorage.snapshot() });
    });
    this.writing.add(written);
    void written.then(() => this.writing.delete(written));
    if (!this.flushing.has(environment)) void this.flush(environment);
    return written;
  }

  private async settled(): Promise<void> {
    if (this.writing.size) await Promise.all([...this.writing]);
  }

  /** Writes the environment's waiting entries, those that gathered meanwhile in the next statement, until none wait. */
  private async flush(environment: Environment): Promise<void> {
    const { store, logger, maxPerEnvironment: max } = this.deps;
    this.flushing.add(environment);
    try {
      for (;;) {
        const batch = this.waiting.get(environment)?.splice(0, Math.min(max, MAX_BATCH)) ?? [];
        if (batch.length === 0) return;
        try {
          // Once per process: slots beyond a lowered cap are forgotten, so the ring holds `max` at most.
          this.trimmed ??= this.repo.dropSlotsFrom(store, max);
          await this.trimmed;
          // On behalf of the request whose entry leads the batch, whichever request's flush sends it.
          await batch[0]!.within(() => this.repo.appendAll(store, { environment, max, entries: batch.map((w) => w.write) }));
        } catch (err) {
          logger.warn('requests inspector: request not recorded', { error: String(err), requests: batch.length });
        } finally {
          for (const w of batch) w.written();
        }
      }
    } finally {
      this.flushing.delete(environment);
    }
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
