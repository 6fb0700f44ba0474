import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../../src/kernel/clock.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

async function books(store = new SqliteStore(':memory:')) {
  if (!stores.includes(store)) stores.push(store);
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  return { store, clock, books: await MockTransactionBooks.load(store, clock) };
}

describe('a mock transaction book', () => {
  it("knows what it took by the upstream's reference, per provider and book", async () => {
    const { books: all } = await books();
    const collections = all.open<{ amount: number }>('acme', 'collection');
    await collections.set('ref-1', { amount: 100 });
    expect(collections.has('ref-1')).toBe(true);
    expect(all.open('acme', 'disbursement').has('ref-1')).toBe(false);
    expect(all.open('other', 'collection').has('ref-1')).toBe(false);
    expect(all.open('acme', 'collection').get('ref-1')).toEqual({ amount: 100 });
  });

  it('survives a restart: the next process refuses the same reference', async () => {
    const first = await books();
    await first.books.open('acme', 'collection').set('ref-1', { state: 'pending' });
    await first.books.open('acme', 'collection').set('ref-1', { state: 'settled' });
    const second = await books(first.store);
    const book = second.books.open<{ state: string }>('acme', 'collection');
    expect(book.has('ref-1')).toBe(true);
    expect(book.get('ref-1')).toEqual({ state: 'settled' });
    expect(await first.store.all('SELECT reference FROM mock_transactions')).toHaveLength(1);
  });

  it('keeps a transaction together with what shares its fate, in one database transaction', async () => {
    const { store, books: all } = await books();
    const book = all.open('acme', 'collection');
    const mark = "INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES ('acme', 'marks', 'm', '{}', 0, 0)";
    await book.keep('ref-1', { amount: 1 }, async (db) => {
      await db.run(mark);
    });
    expect(await store.all('SELECT book, reference FROM mock_transactions ORDER BY book')).toEqual([
      { book: 'collection', reference: 'ref-1' },
      { book: 'marks', reference: 'm' },
    ]);
  });

  it('forgets the transaction again when what shares its fate fails, and passes the error on', async () => {
    const { store, books: all } = await books();
    const book = all.open('acme', 'collection');
    await expect(book.keep('ref-1', { amount: 1 }, async () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(book.has('ref-1')).toBe(false);
    expect(await store.all('SELECT reference FROM mock_transactions')).toEqual([]);
  });
});
