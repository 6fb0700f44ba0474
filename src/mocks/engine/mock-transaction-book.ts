import type { Clock } from '../../kernel/clock.ts';
import type { Db, Store } from '../../store/db.ts';
import { MockTransactionRepository } from '../../store/repositories/mock-transaction-repository.ts';

const repo = new MockTransactionRepository();

/**
 * A mock's transactions, keyed by the upstream's own reference (MTN's X-Reference-Id, Hubtel's
 * ClientReference, the bank rail's sessionId). Reads come from memory; every write also goes to
 * the store, so that after a restart the mock still knows what it took and refuses the same
 * reference again, as the real upstreams do.
 */
export class MockTransactionBook<T> {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly provider: string,
    private readonly name: string,
    private readonly entries: Map<string, T>,
  ) {}

  get(reference: string): T | undefined {
    return this.entries.get(reference);
  }

  has(reference: string): boolean {
    return this.entries.has(reference);
  }

  values(): IterableIterator<T> {
    return this.entries.values();
  }

  /** Forgets a transaction whose keeping was rolled back. */
  discard(reference: string): void {
    this.entries.delete(reference);
  }

  /**
   * Keeps a new transaction together with whatever else must share its fate (its planned
   * callbacks): a restart keeps both or neither. When that fails, the transaction is forgotten
   * again and the error goes on to the caller.
   */
  async keep(reference: string, transaction: T, alongside: (db: Db) => Promise<void>): Promise<void> {
    try {
      await this.store.transaction(async (db) => {
        await this.set(reference, transaction, db);
        await alongside(db);
      });
    } catch (err) {
      this.discard(reference);
      throw err;
    }
  }

  /** Keeps (or updates) a transaction; pass `db` to write inside the caller's transaction. */
  async set(reference: string, transaction: T, db: Db = this.store): Promise<void> {
    this.entries.set(reference, transaction);
    const now = this.clock.now();
    await repo.upsert(db, { provider: this.provider, book: this.name, reference, body: JSON.stringify(transaction), now });
  }
}

/** Every mock's books, read once at start-up. */
export class MockTransactionBooks {
  private constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly loaded: Map<string, Map<string, unknown>>,
  ) {}

  static async load(store: Store, clock: Clock): Promise<MockTransactionBooks> {
    const books = new MockTransactionBooks(store, clock, new Map());
    await books.refresh();
    return books;
  }

  /**
   * Reads every book again from the store, in place (the open books see it). Where several
   * instances share the database this runs before each mock request, so a transaction another
   * instance's mock took is known here too.
   */
  async refresh(): Promise<void> {
    const rows = await repo.all(this.store);
    const seen = new Map<string, Map<string, unknown>>();
    for (const row of rows) {
      const key = `${row.provider}/${row.book}`;
      if (!seen.has(key)) seen.set(key, new Map());
      seen.get(key)!.set(row.reference, JSON.parse(row.body));
    }
    for (const [key, entries] of seen) {
      const book = this.loaded.get(key);
      if (!book) {
        this.loaded.set(key, entries);
        continue;
      }
      // Entries are only added or updated (a discarded one was never stored).
      for (const [reference, body] of entries) book.set(reference, body);
    }
  }

  open<T>(provider: string, name: string): MockTransactionBook<T> {
    const key = `${provider}/${name}`;
    if (!this.loaded.has(key)) this.loaded.set(key, new Map());
    return new MockTransactionBook<T>(this.store, this.clock, provider, name, this.loaded.get(key) as Map<string, T>);
  }
}
