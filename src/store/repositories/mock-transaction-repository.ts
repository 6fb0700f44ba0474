import type { Db } from '../db.ts';

/** A mock's transaction as kept: its upstream reference and its body as JSON. */
export interface MockTransactionRow {
  provider: string;
  book: string;
  reference: string;
  body: string;
}

/** The mocks' transaction books: the SQL of the mock state aggregate. */
export class MockTransactionRepository {
  /** Keeps (or updates) a transaction of a mock's book. */
  async upsert(db: Db, row: { provider: string; book: string; reference: string; body: string; now: number }): Promise<void> {
    await db.run(
      `INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (provider, book, reference) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
      [row.provider, row.book, row.reference, row.body, row.now, row.now],
    );
  }

  /** Every book's transactions, oldest first. */
  all(db: Db): Promise<MockTransactionRow[]> {
    return db.all<MockTransactionRow>('SELECT provider, book, reference, body FROM mock_transactions ORDER BY created_at');
  }
}
