import type { Db, SqlValue } from '../db.ts';

/** Which transaction: a mock's book, and the upstream's own reference in it. */
export interface MockTransactionKey {
  provider: string;
  book: string;
  reference: string;
}

/** A transaction to keep: where it goes, its body as JSON, and when. */
export interface MockTransactionWrite extends MockTransactionKey {
  body: string;
  now: number;
}

/** A new transaction's row: every write of one starts so (then says what a reference already kept does). */
const INSERT_TRANSACTION = 'INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)';

function transactionValues(row: MockTransactionWrite): SqlValue[] {
  return [row.provider, row.book, row.reference, row.body, row.now, row.now];
}

/**
 * The mocks' transaction books: the SQL of the mock state aggregate. Every read is by key or
 * index (the primary key, or a lookup key in mock_transaction_keys): nothing reads a whole book.
 */
export class MockTransactionRepository {
  /** Keeps a new transaction; false when its reference is already kept (nothing is changed). */
  async insert(db: Db, row: MockTransactionWrite): Promise<boolean> {
    const { changes } = await db.run(`${INSERT_TRANSACTION} ON CONFLICT (provider, book, reference) DO NOTHING`, transactionValues(row));
    return changes === 1;
  }

  /**
   * Keeps a new transaction by a plain insert: one whose reference is already kept fails it with a
   * duplicate key (isDuplicateKey on mock_transactions). An append (appendShape), so it may be
   * committed with other transactions' (TransactionOptions.appendOnly).
   */
  async append(db: Db, row: MockTransactionWrite): Promise<void> {
    await db.run(INSERT_TRANSACTION, transactionValues(row));
  }

  /** Keeps (or updates) a transaction of a mock's book. */
  async upsert(db: Db, row: MockTransactionWrite): Promise<void> {
    await db.run(`${INSERT_TRANSACTION} ON CONFLICT (provider, book, reference) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`, transactionValues(row));
  }

  /** A transaction's body, by its reference. */
  async body(db: Db, key: MockTransactionKey): Promise<string | undefined> {
    const row = await db.get<{ body: string }>('SELECT body FROM mock_transactions WHERE provider = ? AND book = ? AND reference = ?', [key.provider, key.book, key.reference]);
    return row?.body;
  }

  /**
   * Files a transaction under its other ids (the upstream's own transaction id, say), in one
   * statement. A lookup key another transaction of the book already holds stays with it: the
   * first kept wins.
   */
  async addLookupKeys(db: Db, key: MockTransactionKey, lookupKeys: readonly string[]): Promise<void> {
    if (lookupKeys.length === 0) return;
    const values = lookupKeys.map(() => '(?, ?, ?, ?)').join(', ');
    await db.run(
      `INSERT INTO mock_transaction_keys (provider, book, lookup_key, reference) VALUES ${values}
       ON CONFLICT (provider, book, lookup_key) DO NOTHING`,
      lookupKeys.flatMap((lookupKey) => [key.provider, key.book, lookupKey, key.reference]),
    );
  }

  /** A transaction's body, by one of its lookup keys. */
  async bodyByLookupKey(db: Db, at: { provider: string; book: string; lookupKey: string }): Promise<string | undefined> {
    const row = await db.get<{ body: string }>(
      `SELECT t.body FROM mock_transaction_keys k
       JOIN mock_transactions t ON t.provider = k.provider AND t.book = k.book AND t.reference = k.reference
       WHERE k.provider = ? AND k.book = ? AND k.lookup_key = ?`,
      [at.provider, at.book, at.lookupKey],
    );
    return row?.body;
  }

  /**
   * A page of a book's transactions in descending order of the lookup keys that start with
   * `prefix` (an order key a wire files each transaction under, e.g. its creation time): the
   * lookup keys' primary key read backwards, stopping at the page's end. The prefix is compared
   * as text (substr), not as a range, so that no collation can reorder it.
   */
  async bodiesByLookupPrefix(db: Db, at: { provider: string; book: string; prefix: string; limit: number; offset: number }): Promise<string[]> {
    const rows = await db.all<{ body: string }>(
      `SELECT t.body FROM mock_transaction_keys k
       JOIN mock_transactions t ON t.provider = k.provider AND t.book = k.book AND t.reference = k.reference
       WHERE k.provider = ? AND k.book = ? AND k.lookup_key >= ? AND substr(k.lookup_key, 1, length(?)) = ?
       ORDER BY k.lookup_key DESC LIMIT ? OFFSET ?`,
      [at.provider, at.book, at.prefix, at.prefix, at.prefix, at.limit, at.offset],
    );
    return rows.map((r) => r.body);
  }

  /** How many lookup keys of a book start with `prefix` (the book's keys in the index, counted). */
  async countByLookupPrefix(db: Db, at: { provider: string; book: string; prefix: string }): Promise<number> {
    const row = await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM mock_transaction_keys WHERE provider = ? AND book = ? AND lookup_key >= ? AND substr(lookup_key, 1, length(?)) = ?', [
      at.provider,
      at.book,
      at.prefix,
      at.prefix,
      at.prefix,
    ]);
    return Number(row?.n ?? 0);
  }
}
