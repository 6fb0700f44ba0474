import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../../src/kernel/clock.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';
import type { Db, SqlValue, Store } from '../../../src/store/db.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';

const stores: SqliteStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function books(store = new SqliteStore(':memory:')) {
  if (!stores.includes(store)) stores.push(store);
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  return { store, clock, books: new MockTransactionBooks(store, clock) };
}

/** The statements `store` is asked to run, as they go by. */
function noting(store: Store): { store: Store; statements: string[] } {
  const statements: string[] = [];
  const note = (db: Db): Db =>
    ({
      run: (sql: string, params?: SqlValue[]) => (statements.push(sql), db.run(sql, params)),
      get: (sql: string, params?: SqlValue[]) => (statements.push(sql), db.get(sql, params)),
      all: (sql: string, params?: SqlValue[]) => (statements.push(sql), db.all(sql, params)),
    }) as Db;
  return {
    statements,
    store: { ...note(store), kind: store.kind, transaction: (work) => store.transaction((tx) => work(note(tx))), close: () => store.close() } as Store,
  };
}

describe('a mock transaction book', () => {
  it("knows what it took by the upstream's reference, per provider and book", async () => {
    const { books: all } = books();
    const collections = all.open<{ amount: number }>('acme', 'collection');
    await collections.set('ref-1', { amount: 100 });
    expect(await collections.has('ref-1')).toBe(true);
    expect(await all.open('acme', 'disbursement').has('ref-1')).toBe(false);
    expect(await all.open('other', 'collection').has('ref-1')).toBe(false);
    expect(await all.open('acme', 'collection').get('ref-1')).toEqual({ amount: 100 });
  });

  it('survives a restart: the next process refuses the same reference', async () => {
    const first = books();
    await first.books.open('acme', 'collection').set('ref-1', { state: 'pending' });
    await first.books.open('acme', 'collection').set('ref-1', { state: 'settled' });
    const second = books(first.store);
    const book = second.books.open<{ state: string }>('acme', 'collection');
    expect(await book.has('ref-1')).toBe(true);
    expect(await book.get('ref-1')).toEqual({ state: 'settled' });
    expect(await first.store.all('SELECT reference FROM mock_transactions')).toHaveLength(1);
  });

  it('sees at once what another instance on the same database kept: there is no copy to refresh', async () => {
    const { store, books: here } = books();
    const elsewhere = new MockTransactionBooks(store, new VirtualClock(VIRTUAL_EPOCH));
    const book = here.open('acme', 'collection');
    expect(await book.has('ref-1')).toBe(false);
    await elsewhere.open('acme', 'collection').keep('ref-1', { amount: 1 }, async () => undefined);
    expect(await book.get('ref-1')).toEqual({ amount: 1 });
  });

  it('keeps a transaction together with what shares its fate, in one database transaction', async () => {
    const { store, books: all } = books();
    const book = all.open('acme', 'collection');
    const mark = "INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES ('acme', 'marks', 'm', '{}', 0, 0)";
    expect(
      await book.keep('ref-1', { amount: 1 }, async (db) => {
        await db.run(mark);
      }),
    ).toBe(true);
    expect(await store.all('SELECT book, reference FROM mock_transactions ORDER BY book')).toEqual([
      { book: 'collection', reference: 'ref-1' },
      { book: 'marks', reference: 'm' },
    ]);
  });

  it('keeps nothing when what shares its fate fails, and passes the error on', async () => {
    const { store, books: all } = books();
    const book = all.open('acme', 'collection');
    await expect(book.keep('ref-1', { amount: 1 }, async () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(await book.has('ref-1')).toBe(false);
    expect(await store.all('SELECT reference FROM mock_transactions')).toEqual([]);
  });

  it.each([
    { kind: 'without lookup keys', options: {} },
    { kind: 'with lookup keys', options: { lookupKeys: (t: { amount: number }) => [`n-${t.amount}`] } },
  ])('refuses to keep a reference already kept, $kind: the first stays, and what would share its fate is not written', async ({ options }) => {
    const { books: all, store } = books();
    const book = all.open<{ amount: number }>('acme', 'collection', options);
    const alongside = (name: string) => async (db: Db) => void (await db.run('INSERT INTO runtime_state (name, value) VALUES (?, ?)', [name, 1]));
    expect(await book.keep('ref-1', { amount: 1 }, alongside('first'))).toBe(true);
    expect(await book.keep('ref-1', { amount: 2 }, alongside('second'))).toBe(false);
    expect(await book.get('ref-1')).toEqual({ amount: 1 });
    expect(await store.all("SELECT name FROM runtime_state WHERE name IN ('first', 'second')")).toEqual([{ name: 'first' }]);
  });

  it('finds a transaction by a lookup key it was kept with; the first kept holds a key two share', async () => {
    const { books: all } = books();
    const book = all.open<{ id: string; alias: string }>('acme', 'charges', { lookupKeys: (c) => [c.id, c.alias] });
    await book.keep('ref-1', { id: 'ch_1', alias: 'shared' }, async () => undefined);
    await book.keep('ref-2', { id: 'ch_2', alias: 'shared' }, async () => undefined);
    expect(await book.find('ch_2')).toEqual({ id: 'ch_2', alias: 'shared' });
    expect(await book.find('shared')).toEqual({ id: 'ch_1', alias: 'shared' });
    expect(await book.find('ref-1')).toBeUndefined();
    expect(await all.open('acme', 'refunds').find('ch_1')).toBeUndefined();
    // An update keeps the keys it was kept with.
    await book.set('ref-1', { id: 'ch_1', alias: 'shared' });
    expect(await book.find('ch_1')).toEqual({ id: 'ch_1', alias: 'shared' });
  });

  it('reads one row by key per lookup, and nothing at all to open, however much the store holds', async () => {
    const { store: inner } = books();
    const { store, statements } = noting(inner);
    await inner.transaction(async (tx) => {
      for (let i = 0; i < 500; i++) {
        await tx.run('INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', ['acme', 'collection', `old-${i}`, '{}', i, i]);
      }
    });
    const all = new MockTransactionBooks(store, new VirtualClock(VIRTUAL_EPOCH));
    const book = all.open<{ id: string }>('acme', 'collection', { lookupKeys: (t) => [t.id] });
    expect(statements).toEqual([]);
    await book.get('old-7');
    await book.find('id-7');
    expect(statements).toHaveLength(2);
    expect(statements.every((sql) => /WHERE .*provider = \? AND .*book = \? AND .*(reference|lookup_key) = \?/s.test(sql))).toBe(true);
  });

  it('files the transactions a database kept before the lookup keys existed (migration 19)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-books-'));
    dirs.push(dir);
    const path = join(dir, 'railyard.db');
    const before = new SqliteStore(path);
    const insert = 'INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0)';
    await before.run(insert, ['hubtel', 'receive', 'cr-1', JSON.stringify({ transactionId: 'a'.repeat(32), externalTransactionId: '0000000042' }), 1]);
    await before.run(insert, ['card-processor', 'charges', 'mr-1', JSON.stringify({ id: 'ch_abc' }), 2]);
    await before.run(insert, ['direct-debit', 'debits', 'dd-1', JSON.stringify({ debitId: 'DD0001' }), 3]);
    // As the database stood at migration 18.
    await before.run('DROP TABLE mock_transaction_keys');
    await before.run('DELETE FROM schema_migrations WHERE version = 19');
    await before.close();

    const { books: all } = books(new SqliteStore(path));
    const receives = all.open('hubtel', 'receive');
    expect(await receives.find('a'.repeat(32))).toMatchObject({ externalTransactionId: '0000000042' });
    expect(await receives.find('0000000042')).toMatchObject({ transactionId: 'a'.repeat(32) });
    expect(await all.open('card-processor', 'charges').find('ch_abc')).toEqual({ id: 'ch_abc' });
    expect(await all.open('direct-debit', 'debits').find('DD0001')).toEqual({ debitId: 'DD0001' });
  });
});

describe("a session's records (an upstream's provisioned users and issued tokens)", () => {
  it('are kept in this process alone where one process has the database: another instance over it does not see them', async () => {
    const { store, books: first } = books();
    const users = first.session<{ key: string }>('acme', 'users');
    await users.set('u1', { key: 'k1' });
    expect(await users.get('u1')).toEqual({ key: 'k1' });
    expect(await new MockTransactionBooks(store, new VirtualClock(VIRTUAL_EPOCH)).session('acme', 'users').get('u1')).toBeUndefined();
  });

  it('are shared through the database where instances share it (PostgreSQL), so what one issued is good at all', async () => {
    const { store } = books();
    const shared = new Proxy(store, { get: (target, name) => (name === 'kind' ? 'postgres' : Reflect.get(target, name, target)) }) as Store;
    const clock = new VirtualClock(VIRTUAL_EPOCH);
    await new MockTransactionBooks(shared, clock).session<{ key: string }>('acme', 'users').set('u1', { key: 'k1' });
    expect(await new MockTransactionBooks(shared, clock).session('acme', 'users').get('u1')).toEqual({ key: 'k1' });
  });

  it('make room for new ones by dropping the expired, in memory', async () => {
    const { books: b, clock } = books();
    const tokens = b.session<{ expiresAt: number }>('acme', 'tokens', { expired: (t, now) => t.expiresAt <= now });
    await tokens.set('old', { expiresAt: clock.now() + 1_000 });
    clock.set(clock.now() + 1_000);
    await tokens.set('new', { expiresAt: clock.now() + 1_000 });
    expect(await tokens.get('old')).toBeUndefined();
    expect(await tokens.get('new')).toBeDefined();
  });
});
