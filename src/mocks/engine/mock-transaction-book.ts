import type { Clock } from '../../kernel/clock.ts';
import { isDuplicateKey, type Db, type Store } from '../../store/db.ts';
import { MockTransactionRepository } from '../../store/repositories/mock-transaction-repository.ts';

const repo = new MockTransactionRepository();

export interface MockTransactionBookOptions<T> {
  /**
   * The transaction's other ids a caller may look it up by (`find`), fixed when it is kept:
   * Hubtel's transaction ids, the card processor's charge id. They are indexed, never searched.
   */
  lookupKeys?: (transaction: T) => readonly string[];
}

/**
 * A mock's transactions, keyed by the upstream's own reference (MTN's X-Reference-Id, Hubtel's
 * ClientReference, the bank rail's sessionId). They live in the store alone: every read is one
 * indexed statement, so a lookup costs the same however many transactions the book holds, a
 * restart forgets nothing, and instances sharing a database see each other's at once.
 */
export class MockTransactionBook<T> {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly provider: string,
    private readonly name: string,
    private readonly options: MockTransactionBookOptions<T> = {},
  ) {}

  /** The transaction kept under `reference`. */
  async get(reference: string): Promise<T | undefined> {
    const body = await repo.body(this.store, { provider: this.provider, book: this.name, reference });
    return body === undefined ? undefined : (JSON.parse(body) as T);
  }

  async has(reference: string): Promise<boolean> {
    return (await this.get(reference)) !== undefined;
  }

  /** The transaction filed under one of its lookup keys (see MockTransactionBookOptions). */
  async find(lookupKey: string): Promise<T | undefined> {
    const body = await repo.bodyByLookupKey(this.store, { provider: this.provider, book: this.name, lookupKey });
    return body === undefined ? undefined : (JSON.parse(body) as T);
  }

  /**
   * A page of the book, newest first by an order key each transaction is filed under (a lookup
   * key starting with `prefix`, such as `at:<created at>:<reference>`), and how many there are.
   */
  async page(prefix: string, at: { limit: number; offset: number }): Promise<{ items: T[]; total: number }> {
    const where = { provider: this.provider, book: this.name, prefix };
    const bodies = await repo.bodiesByLookupPrefix(this.store, { ...where, ...at });
    return { items: bodies.map((b) => JSON.parse(b) as T), total: await repo.countByLookupPrefix(this.store, where) };
  }

  /**
   * Keeps a new transaction together with whatever else must share its fate (its planned
   * callbacks): a restart keeps both or neither. Resolves to false, keeping nothing, when the
   * reference is already kept (a twin request that got there first, here or on another
   * instance); a failure keeps nothing and goes on to the caller.
   */
  async keep(reference: string, transaction: T, alongside: (db: Db) => Promise<void>): Promise<boolean> {
    const row = { provider: this.provider, book: this.name, reference, body: JSON.stringify(transaction), now: this.clock.now() };
    const lookupKeys = [...new Set(this.options.lookupKeys?.(transaction) ?? [])];
    if (lookupKeys.length === 0) {
      // Fresh rows only: the reference is taken by a plain insert, so the transaction is an append,
      // committed with others' (appendOnly). A twin that took the reference first, here or on
      // another instance, fails it with a duplicate key, and nothing of it stands.
      return this.store
        .transaction(
          async (db) => {
            await Promise.all([repo.append(db, row), alongside(db)]);
            return true;
          },
          { appendOnly: true },
        )
        .catch((error: unknown) => (isDuplicateKey(error, 'mock_transactions') ? false : Promise.reject(error)));
    }
    // READ COMMITTED: the reference is taken by one insert that a concurrent twin's waits for and
    // then finds taken; the lookup keys' first holder keeps them (ON CONFLICT), and the rest are
    // fresh rows. So it runs beside other transactions.
    return this.store.transaction(
      async (db) => {
        if (!(await repo.insert(db, row))) return false;
        await Promise.all([repo.addLookupKeys(db, row, lookupKeys), alongside(db)]);
        return true;
      },
      { isolation: 'read committed' },
    );
  }

  /**
   * Keeps (or updates) a transaction, on the store (`keep` writes inside a transaction). Its
   * lookup keys are those it was kept with: an update does not file it again.
   */
  async set(reference: string, transaction: T): Promise<void> {
    await repo.upsert(this.store, { provider: this.provider, book: this.name, reference, body: JSON.stringify(transaction), now: this.clock.now() });
  }
}

/** Every mock's books on one store. Holds nothing itself: each book reads the store by key. */
export class MockTransactionBooks {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  open<T>(provider: string, name: string, options: MockTransactionBookOptions<T> = {}): MockTransactionBook<T> {
    return new MockTransactionBook<T>(this.store, this.clock, provider, name, options);
  }

  /**
   * Records of a sandbox session (an upstream's provisioned API users, the tokens it issued): where
   * instances share the database (PostgreSQL) they are kept in it, so what one instance issued is
   * good at all; one process alone keeps them in its memory until it stops, as the upstream's own
   * sandbox forgets them; there, `expired` records make room at each write. The wire module does
   * not need to know which. Records that never change once set (`immutable`) are read once per
   * instance, then remembered (a bounded number).
   */
  session<T>(provider: string, name: string, options: { expired?: (record: T, now: number) => boolean; immutable?: boolean } = {}): SessionRecords<T> {
    if (this.store.kind === 'postgres') {
      const book = this.open<T>(provider, name);
      return options.immutable ? recentlySeen(book) : book;
    }
    const records = new Map<string, T>();
    return {
      get: async (key) => records.get(key),
      set: async (key, value) => {
        const now = this.clock.now();
        if (options.expired) for (const [k, record] of records) if (options.expired(record, now)) records.delete(k);
        records.set(key, value);
      },
    };
  }
}

/** How many records of an immutable session an instance remembers (the tokens of the last hour or so). */
const REMEMBERED = 256;

/**
 * Records of a session none of which changes once set (`immutable`: the tokens an upstream issued),
 * read through a memory of the last REMEMBERED found or set: a record is read once per instance,
 * not once per call, and one another instance set is still found in the store.
 */
function recentlySeen<T>(records: SessionRecords<T>): SessionRecords<T> {
  const seen = new Map<string, T>();
  const remember = (key: string, value: T) => {
    seen.set(key, value);
    if (seen.size > REMEMBERED) seen.delete(seen.keys().next().value!);
  };
  return {
    get: async (key) => {
      const known = seen.get(key);
      if (known !== undefined) return known;
      const record = await records.get(key);
      if (record !== undefined) remember(key, record);
      return record;
    },
    set: async (key, value) => {
      await records.set(key, value);
      remember(key, value);
    },
  };
}

/** A session's records by key (see MockTransactionBooks.session). */
export interface SessionRecords<T> {
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T): Promise<void>;
}
