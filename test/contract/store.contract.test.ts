// The Store port contract (src/store/db.ts). Every adapter runs the same suite: add a PostgreSQL
// adapter to `adapters` and it must pass unchanged.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitWith, isDuplicateKey, type Db, type SqlValue, type Store } from '../../src/store/db.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { PostgresStore } from '../../src/store/postgres-store.ts';
import { DashboardSessionRepository } from '../../src/store/repositories/dashboard-session-repository.ts';
import { MarketRepository } from '../../src/store/repositories/market-repository.ts';
import { IdempotencyRepository } from '../../src/store/repositories/idempotency-repository.ts';
import { RequestLogRepository } from '../../src/store/repositories/request-log-repository.ts';
import { StoredRequestLog } from '../../src/inspector/stored-request-log.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { MockTransactionRepository } from '../../src/store/repositories/mock-transaction-repository.ts';
import { MockTransactionBooks } from '../../src/mocks/engine/mock-transaction-book.ts';
import { EventOutboxRepository } from '../../src/store/repositories/event-outbox-repository.ts';
import { WebhookDeliveryRepository } from '../../src/store/repositories/webhook-delivery-repository.ts';
import { WebhookEndpointRepository } from '../../src/store/repositories/webhook-endpoint-repository.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';

interface OpenedStore {
  store: Store;
  /** Closes nothing; opens the same database again (persistent adapters only). */
  reopen?: () => Promise<Store>;
  /** Removes whatever the adapter created on disk; the store is already closed. */
  cleanup(): void;
}

interface StoreAdapter {
  name: string;
  /** Data survives closing and reopening the store. */
  persistent: boolean;
  open(): Promise<OpenedStore>;
}

const adapters: StoreAdapter[] = [
  {
    name: 'SqliteStore on a temp file',
    persistent: true,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'railyard-'));
      const path = join(dir, 'railyard.db');
      return {
        store: new SqliteStore(path),
        reopen: async () => new SqliteStore(path),
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "SqliteStore on ':memory:'",
    persistent: false,
    async open() {
      return { store: new SqliteStore(':memory:'), cleanup: () => undefined };
    },
  },
  {
    // A throwaway cluster (or RAILYARD_TEST_PG_URL's server), a fresh database per test.
    name: 'PostgresStore on a fresh database',
    persistent: true,
    async open() {
      const url = await (await postgres()).createDatabase();
      return { store: await PostgresStore.open(url), reopen: () => PostgresStore.open(url), cleanup: () => undefined };
    },
  },
];

let cluster: Promise<PostgresCluster> | undefined;
/** Started on first use, stopped after the file's last test. */
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);

/** A promise with its resolver outside: lets a test hold a transaction open at a known point. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const SCRATCH_DDL = [
  'CREATE TABLE contract_items (id INTEGER PRIMARY KEY, label TEXT NOT NULL, qty BIGINT NOT NULL)',
  'CREATE TABLE contract_counter (id TEXT PRIMARY KEY, n BIGINT NOT NULL)',
  'CREATE TABLE contract_numbers (id INTEGER PRIMARY KEY, v BIGINT NOT NULL)',
];

describe.each(adapters)('Store contract: $name', (adapter) => {
  let opened: OpenedStore;
  let store: Store;
  const extraStores: Store[] = [];

  beforeEach(async () => {
    opened = await adapter.open();
    store = opened.store;
    for (const ddl of SCRATCH_DDL) await store.run(ddl);
  });

  afterEach(async () => {
    for (const s of extraStores.splice(0)) await s.close();
    await store.close();
    opened.cleanup();
  });

  const count = async (db: Db, table: string) => Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n);

  describe('migrations', () => {
    it('applies every migration exactly once when a store is opened', async () => {
      const rows = await store.all<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => [Number(r.version), r.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]));
    });

    it('leaves the migrated schema ready to use: the foundation tables exist and start empty', async () => {
      for (const table of ['merchants', 'api_keys', 'ledger_journals', 'ledger_postings', 'charges', 'transfers', 'transactions', 'jobs']) {
        expect(await count(store, table), table).toBe(0);
      }
    });

    it('indexes the ledger only as its reads need: journals by id, object and (merchant, time); postings by journal', async () => {
      const indexes = async (table: string) =>
        store.kind === 'postgres'
          ? (await store.all<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE tablename = ? AND indexname NOT LIKE '%_pkey' ORDER BY indexname", [table])).map((r) => r.name)
          : (await store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name", [table])).map((r) => r.name);
      // Each is written by every settlement: an index no read uses only costs.
      expect((await indexes('ledger_journals')).filter((n) => !/autoindex|_id_key$/.test(n))).toEqual(['ledger_journals_merchant_time', 'ledger_journals_ref']);
      expect(await indexes('ledger_postings')).toEqual(['ledger_postings_journal']);
    });

    if (adapter.persistent) {
      it('keeps its data across close and reopen, and does not run the migrations again', async () => {
        await store.run('INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)', ['mch_contract', 'Contract Merchant', 1]);
        await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'kept', 42]);
        await store.close();

        store = await opened.reopen!();
        const merchant = await store.get<{ id: string; name: string }>('SELECT id, name FROM merchants WHERE id = ?', ['mch_contract']);
        expect(merchant).toEqual({ id: 'mch_contract', name: 'Contract Merchant' });
        expect(await store.get('SELECT label, qty FROM contract_items WHERE id = 1')).toEqual({ label: 'kept', qty: 42 });
        const versions = await store.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        expect(versions.map((v) => Number(v.version))).toEqual(MIGRATIONS.map((m) => m.version));
      });

      it('files the mock transactions a database kept before migration 19 under their lookup keys, the first kept holding a shared one', async () => {
        const insert = 'INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0)';
        await store.run(insert, ['hubtel', 'send', 'cr1', JSON.stringify({ transactionId: 'a'.repeat(32), externalTransactionId: '0000000042' }), 1]);
        await store.run(insert, ['hubtel', 'send', 'cr2', JSON.stringify({ transactionId: 'b'.repeat(32), externalTransactionId: '0000000042' }), 2]);
        await store.run(insert, ['card-processor', 'charges', 'mr1', JSON.stringify({ id: 'ch_1' }), 3]);
        await store.run(insert, ['direct-debit', 'debits', 'dd1', JSON.stringify({ debitId: 'DD1' }), 4]);
        await store.run(insert, ['mtn-momo', 'collection', 'ref1', JSON.stringify({ id: 'not-a-lookup-key' }), 5]);
        // The database as migration 18 left it.
        await store.run('DROP TABLE mock_transaction_keys');
        await store.run('DELETE FROM schema_migrations WHERE version = 19');
        await store.close();

        store = await opened.reopen!();
        const keys = await store.all('SELECT provider, book, lookup_key, reference FROM mock_transaction_keys ORDER BY provider, book, lookup_key');
        expect(keys).toEqual([
          { provider: 'card-processor', book: 'charges', lookup_key: 'ch_1', reference: 'mr1' },
          { provider: 'direct-debit', book: 'debits', lookup_key: 'DD1', reference: 'dd1' },
          { provider: 'hubtel', book: 'send', lookup_key: '0000000042', reference: 'cr1' },
          { provider: 'hubtel', book: 'send', lookup_key: 'a'.repeat(32), reference: 'cr1' },
          { provider: 'hubtel', book: 'send', lookup_key: 'b'.repeat(32), reference: 'cr2' },
        ]);
      });

      it('queues for the fan-out the events a database kept undispatched before migration 30, and only those', async () => {
        const outbox = new EventOutboxRepository(store.kind === 'postgres');
        const owner = { environment: 'test', merchantId: 'mer_1' };
        for (const id of ['evt_sent', 'evt_waiting']) {
          await outbox.insert(store, { id, ...owner, type: 'charge.success', objectType: 'charge', objectId: 'chg_1', payload: '{}', createdAt: 1 });
        }
        // The database as migration 29 left it: events marked by dispatched_at, found by a partial index.
        await store.run('DROP TABLE outbox_pending');
        await store.run('ALTER TABLE outbox_events ADD COLUMN dispatched_at INTEGER');
        await store.run("UPDATE outbox_events SET dispatched_at = 5 WHERE id = 'evt_sent'");
        await store.run('CREATE INDEX outbox_events_undispatched ON outbox_events (seq) WHERE dispatched_at IS NULL');
        await store.run('DELETE FROM schema_migrations WHERE version = 30');
        await store.close();

        store = await opened.reopen!();
        const waiting = await store.get<{ seq: number }>("SELECT seq FROM outbox_events WHERE id = 'evt_waiting'");
        expect((await store.all<{ seq: number }>('SELECT seq FROM outbox_pending')).map((r) => Number(r.seq))).toEqual([Number(waiting!.seq)]);
        await expect(store.get('SELECT dispatched_at FROM outbox_events')).rejects.toThrow(/dispatched_at/);
      });
    }
  });

  describe('mock transaction books (their repository)', () => {
    const repo = new MockTransactionRepository();
    const at = { provider: 'acme', book: 'orders' };

    it('inserts a reference once: the second insert changes nothing and says so', async () => {
      expect(await repo.insert(store, { ...at, reference: 'r1', body: '{"n":1}', now: 1 })).toBe(true);
      expect(await repo.insert(store, { ...at, reference: 'r1', body: '{"n":2}', now: 2 })).toBe(false);
      expect(await repo.body(store, { ...at, reference: 'r1' })).toBe('{"n":1}');
      await repo.upsert(store, { ...at, reference: 'r1', body: '{"n":3}', now: 3 });
      expect(await repo.body(store, { ...at, reference: 'r1' })).toBe('{"n":3}');
    });

    it('finds a body by any of its lookup keys in one statement; a key two transactions share stays with the first', async () => {
      await repo.insert(store, { ...at, reference: 'r1', body: '{"n":1}', now: 1 });
      await repo.insert(store, { ...at, reference: 'r2', body: '{"n":2}', now: 2 });
      await repo.addLookupKeys(store, { ...at, reference: 'r1' }, ['id-1', 'shared']);
      await repo.addLookupKeys(store, { ...at, reference: 'r2' }, ['id-2', 'shared']);
      expect(await repo.bodyByLookupKey(store, { ...at, lookupKey: 'id-2' })).toBe('{"n":2}');
      expect(await repo.bodyByLookupKey(store, { ...at, lookupKey: 'shared' })).toBe('{"n":1}');
      expect(await repo.bodyByLookupKey(store, { ...at, lookupKey: 'r1' })).toBeUndefined();
      expect(await repo.bodyByLookupKey(store, { provider: 'acme', book: 'refunds', lookupKey: 'id-1' })).toBeUndefined();
    });

    // A book keeps a transaction with what shares its fate (its callback jobs): an append-only
    // transaction when it has no lookup keys, a READ COMMITTED one when it has.
    it.each([
      { kind: 'without lookup keys (appended)', lookupKeys: undefined },
      { kind: 'with lookup keys', lookupKeys: (t: { ref: string }) => [`id-${t.ref}`] },
    ])('keeps one of twins kept at once, $kind; the other keeps nothing, nor what goes alongside it', async ({ lookupKeys }) => {
      const book = new MockTransactionBooks(store, new VirtualClock(VIRTUAL_EPOCH)).open<{ ref: string; copy: number }>('acme', 'orders', lookupKeys ? { lookupKeys } : {});
      const refs = ['a', 'b', 'c', 'd', 'e', 'f'];
      const kept = await Promise.all(
        refs.flatMap((ref) =>
          [0, 1, 2].map((copy) =>
            book.keep(ref, { ref, copy }, async (db) => void (await db.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', [`${ref}-${copy}`, copy]))).then((took) => ({ ref, copy, took })),
          ),
        ),
      );
      for (const ref of refs) {
        const took = kept.filter((k) => k.ref === ref && k.took);
        expect(took).toHaveLength(1);
        expect(await book.get(ref)).toEqual({ ref, copy: took[0]!.copy });
        expect(await store.all('SELECT id FROM contract_counter WHERE id LIKE ?', [`${ref}-%`])).toEqual([{ id: `${ref}-${took[0]!.copy}` }]);
        if (lookupKeys) expect(await book.find(`id-${ref}`)).toEqual({ ref, copy: took[0]!.copy });
      }
    });
  });

  describe('the market (its repository)', () => {
    const repo = new MarketRepository();

    it('keeps the first origin and seed recorded, and moves the version on each change', async () => {
      expect(await repo.version(store)).toBeNull();
      await repo.ensureOrigin(store, 1_000, 7);
      await repo.ensureOrigin(store, 2_000, 8);
      expect(await repo.state(store)).toEqual({ frozen_at: null, version: 0, origin_at: 1_000, seed: 7 });
      await store.transaction(async (tx) => {
        await repo.setFrozenAt(tx, 1_500);
        await repo.bumpVersion(tx);
      });
      expect(await repo.version(store)).toBe(1);
      expect(await repo.state(store)).toMatchObject({ frozen_at: 1_500, origin_at: 1_000, seed: 7 });
    });

    it('records one anchor per asset, replaced by the next resume', async () => {
      await repo.anchorWalk(store, 'USDT', 10, '100000000');
      await repo.anchorWalk(store, 'USDC', 11, '99990000');
      await repo.anchorWalk(store, 'USDT', 12, '100010000');
      const walks = await repo.walks(store);
      expect(walks.sort((x, y) => x.asset.localeCompare(y.asset))).toEqual([
        { asset: 'USDC', step: 11, value: '99990000' },
        { asset: 'USDT', step: 12, value: '100010000' },
      ]);
    });
  });

  describe('dashboard sessions (their repository)', () => {
    const repo = new DashboardSessionRepository();
    const session = (tokenHash: string, signedIn: boolean, lastSeen: number) => ({ tokenHash, sealed: `sealed-${tokenHash}`, signedIn, lastSeen, expiresAt: lastSeen + 100 });

    it('finds a session by its hash, moves its expiry on a touch, and forgets it on remove', async () => {
      await repo.put(store, session('h1', false, 10));
      expect(await repo.find(store, 'h1')).toEqual(session('h1', false, 10));
      await repo.touch(store, 'h1', 50, 150);
      expect(await repo.find(store, 'h1')).toMatchObject({ lastSeen: 50, expiresAt: 150, sealed: 'sealed-h1' });
      await repo.remove(store, 'h1');
      expect(await repo.find(store, 'h1')).toBeUndefined();
    });

    it('prunes the expired, then the least recently seen beyond the cap, signed-out ones first', async () => {
      await repo.put(store, session('old', true, 0));
      await repo.put(store, session('user', true, 200));
      await repo.put(store, session('anon-1', false, 210));
      await repo.put(store, session('anon-2', false, 220));
      await repo.prune(store, 150, 2);
      expect(await repo.find(store, 'old')).toBeUndefined();
      expect(await repo.find(store, 'anon-1')).toBeUndefined();
      expect(await repo.find(store, 'user')).toBeDefined();
      expect(await repo.find(store, 'anon-2')).toBeDefined();
    });
  });

  describe("the requests inspector's ring (its repository)", () => {
    const entry = (n: number) => ({
      environment: 'test' as 'test' | 'live',
      max: 3,
      merchantId: n % 2 ? 'mer_a' : null,
      objectId: n === 2 ? 'chg_1' : null,
      kind: 'merchant',
      status: 200 + n,
      entry: `{"n":${n}}`,
    });

    it("numbers each environment's entries and keeps the newest `max` in place, the table never holding more", async () => {
      for (const postgres of [store.kind === 'postgres', false]) {
        /** The environment's next number is `next`: the sequence on PostgreSQL, the counter row otherwise. */
        const numberFrom = async (environment: 'test' | 'live', next: number) => {
          if (postgres) await store.get('SELECT setval(CAST(? AS regclass), ?, false)', [`request_log_${environment}_seq`, next]);
          else await store.run('INSERT INTO runtime_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [`request_log:${environment}`, next - 1]);
        };
        await store.run('DELETE FROM request_log');
        await numberFrom('test', 1);
        await numberFrom('live', 1);
        const repo = new RequestLogRepository(postgres);
        const seqs: number[] = [];
        for (let n = 1; n <= 7; n++) seqs.push(await repo.append(store, entry(n)));
        expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(await repo.append(store, { ...entry(1), environment: 'live' })).toBe(1);
        expect(await count(store, 'request_log')).toBe(4);
        const page = await repo.page(store, 'test', 'mer_a', { before: null, kind: null, objectId: null, status: null, limit: 10 });
        expect(page).toEqual([7, 6, 5].map((n) => ({ seq: n, entry: `{"n":${n}}` })));
        expect((await repo.page(store, 'test', 'mer_b', { before: 7, kind: 'merchant', objectId: null, status: 206, limit: 10 })).map((r) => r.seq)).toEqual([6]);
        // A slot keeps the later entry when an earlier one arrives late.
        await numberFrom('test', 4);
        await repo.append(store, entry(4));
        expect((await repo.page(store, 'test', 'mer_a', { before: null, kind: null, objectId: null, status: null, limit: 10 })).map((r) => r.seq)).toEqual([7, 6, 5]);
      }
    });

    it('keeps a batch of entries in one call as one by one: numbered in order, each in its slot of the ring', async () => {
      for (const postgres of [store.kind === 'postgres', false]) {
        await store.run('DELETE FROM request_log');
        await store.run("DELETE FROM runtime_state WHERE name LIKE 'request_log:%'");
        const repo = new RequestLogRepository(postgres);
        await repo.append(store, entry(1));
        expect(await repo.appendAll(store, { environment: 'test', max: 3, entries: [2, 3, 4].map(entry) })).toEqual([2, 3, 4]);
        expect(await repo.appendAll(store, { environment: 'test', max: 3, entries: [] })).toEqual([]);
        const all = await repo.page(store, 'test', 'mer_a', { before: null, kind: null, objectId: null, status: null, limit: 10 });
        expect(all).toEqual([4, 3, 2].map((n) => ({ seq: n, entry: `{"n":${n}}` })));
        expect(await count(store, 'request_log')).toBe(3);
        // More entries than the ring has slots would put two in one slot: refused.
        await expect(repo.appendAll(store, { environment: 'test', max: 3, entries: [5, 6, 7, 8].map(entry) })).rejects.toThrow(/exceeds the ring of 3/);
      }
    });

    it('records entries answered while a write is on its way in one next statement, and lists them all in order', async () => {
      let statements = 0;
      const counting: Store = {
        kind: store.kind,
        run: (sql, params) => (statements++, store.run(sql, params)),
        get: <T>(sql: string, params?: SqlValue[]) => (statements++, store.get<T>(sql, params)),
        all: <T>(sql: string, params?: SqlValue[]) => (statements++, store.all<T>(sql, params)),
        transaction: (work, options) => store.transaction(work, options),
        close: () => store.close(),
      };
      const log = new StoredRequestLog({ store: counting, clock: new VirtualClock(VIRTUAL_EPOCH), logger: silentLogger, maxPerEnvironment: 50 });
      const request = (n: number) => ({
        kind: 'merchant' as const,
        method: 'GET',
        path: `/api/v1/n${n}`,
        status: 200,
        latency_ms: 1,
        idempotency_key: null,
        object_id: null,
        provider: null,
        match: null,
        fault: null,
      });
      // The first goes at once; the four recorded while it is on its way wait, then go together.
      await Promise.all([1, 2, 3, 4, 5].map((n) => log.record('test', 'mer_batch', request(n))));
      const page = await log.list('test', 'mer_batch', { limit: 10 });
      expect(page.items.map((e) => e.path)).toEqual([5, 4, 3, 2, 1].map((n) => `/api/v1/n${n}`));
      // On PostgreSQL: the trim of a lowered cap, the first entry, the other four, the listing.
      if (store.kind === 'postgres') expect(statements).toBe(4);
    });

    it('finds the entries about an object, oldest first, and forgets slots beyond a lowered cap', async () => {
      const repo = new RequestLogRepository(store.kind === 'postgres');
      for (let n = 1; n <= 2; n++) await repo.append(store, { ...entry(n), max: 10, objectId: 'chg_1' });
      expect((await repo.forObject(store, 'test', 'mer_a', 'chg_1')).map((r) => r.seq)).toEqual([1, 2]);
      await repo.dropSlotsFrom(store, 2);
      expect((await repo.forObject(store, 'test', 'mer_a', 'chg_1')).map((r) => r.seq)).toEqual([1]);
    });
  });

  describe('Idempotency-Keys (their repository)', () => {
    const keys = new IdempotencyRepository();
    const id = { environment: 'test', merchantId: 'mer_a', key: 'k-1' };
    const claim = (requestHash: string, createdAt: number) => ({ requestHash, resourceId: `chg_${requestHash}`, boot: 1, createdAt, expiresAt: createdAt + 100 });

    it('claims a key in one statement: a new one, or one whose retention ended (afresh, over its old row), never a live one', async () => {
      expect(await keys.claimInFlight(store, id, claim('first', 1_000), 1_000)).toBe(true);
      await keys.complete(store, id, 201, '{"done":true}');
      // Still retained: refused, and the stored answer stands.
      expect(await keys.claimInFlight(store, id, claim('second', 1_099), 1_099)).toBe(false);
      expect(await keys.find(store, id)).toMatchObject({ request_hash: 'first', state: 'done', response_status: 201 });
      // Retention over: claimed afresh, nothing of the old answer left.
      expect(await keys.claimInFlight(store, id, claim('third', 1_100), 1_100)).toBe(true);
      expect(await keys.find(store, id)).toEqual({ request_hash: 'third', state: 'in_flight', boot: 1, resource_id: 'chg_third', response_status: null, response_body: null, expires_at: 1_200 });
      expect(await count(store, 'idempotency_keys')).toBe(1);
    });
  });

  describe('webhook deliveries (their repository)', () => {
    const deliveries = new WebhookDeliveryRepository();
    const endpoints = new WebhookEndpointRepository();
    const events = new EventOutboxRepository();

    it('reads what an automatic attempt needs in one statement: the delivery, its event and its endpoint', async () => {
      const owner = { environment: 'test', merchantId: 'mer_1' };
      await endpoints.insert(store, { id: 'we_1', ...owner, url: 'http://127.0.0.1:9/hooks', eventTypes: null, enabled: 1, secret: 'whsec_1', now: 10 });
      await events.insert(store, { id: 'evt_1', ...owner, type: 'charge.success', objectType: 'charge', objectId: 'chg_1', payload: '{"id":"evt_1"}', createdAt: 11 });
      await deliveries.insertPending(store, { id: 'wd_1', ...owner, eventId: 'evt_1', eventType: 'charge.success', endpointId: 'we_1', now: 12 });
      const statements: string[] = [];
      const counted: Db = {
        run: (sql, params) => (statements.push(sql), store.run(sql, params)),
        get: (sql, params) => (statements.push(sql), store.get(sql, params)),
        all: (sql, params) => (statements.push(sql), store.all(sql, params)),
      };
      const found = await deliveries.findForAttempt(counted, 'wd_1');
      expect(statements).toHaveLength(1);
      expect(found?.delivery).toEqual(await deliveries.find(store, 'wd_1'));
      expect(found?.delivery).toMatchObject({ id: 'wd_1', endpoint_id: 'we_1', event_id: 'evt_1', status: 'pending', attempts: 0, created_at: 12 });
      expect(found?.eventPayload).toBe('{"id":"evt_1"}');
      const { seq: _seq, ...endpoint } = (await endpoints.find(store, 'we_1')) as unknown as Record<string, unknown>;
      expect(found?.endpoint).toEqual(endpoint);
      // Gone, the endpoint and the event read as absent; a delivery that does not exist, as nothing.
      await store.run("DELETE FROM webhook_endpoints WHERE id = 'we_1'");
      await store.run("DELETE FROM outbox_events WHERE id = 'evt_1'");
      expect(await deliveries.findForAttempt(store, 'wd_1')).toMatchObject({ eventPayload: null, endpoint: undefined });
      expect(await deliveries.findForAttempt(store, 'wd_2')).toBeUndefined();
    });

    it('queues each event for the fan-out as it writes it, hands the queue out oldest first, and forgets only the events marked', async () => {
      const postgres = store.kind === 'postgres';
      const outbox = new EventOutboxRepository(postgres);
      const queue = new WebhookDeliveryRepository(postgres);
      const owner = { environment: 'test', merchantId: 'mer_1' };
      expect(await queue.anyUndispatched(store)).toBe(false);
      for (const n of [1, 2, 3]) {
        await outbox.insert(store, { id: `evt_${n}`, ...owner, type: 'charge.success', objectType: 'charge', objectId: `chg_${n}`, payload: `{"n":${n}}`, createdAt: n });
      }
      expect(await queue.anyUndispatched(store)).toBe(true);
      const head = await store.transaction((tx) => queue.undispatchedEvents(tx));
      expect(head.map((e) => [e.id, e.object_id, e.payload])).toEqual([
        ['evt_1', 'chg_1', '{"n":1}'],
        ['evt_2', 'chg_2', '{"n":2}'],
        ['evt_3', 'chg_3', '{"n":3}'],
      ]);
      // The first and the third fanned out: the second stays queued, though numbered between them.
      await store.transaction((tx) => queue.markDispatched(tx, [head[0]!.seq, head[2]!.seq]));
      expect((await store.transaction((tx) => queue.undispatchedEvents(tx))).map((e) => e.id)).toEqual(['evt_2']);
      await store.transaction((tx) => queue.markDispatched(tx, [head[1]!.seq]));
      expect(await queue.anyUndispatched(store)).toBe(false);
      // The events themselves stay in the outbox.
      expect(await count(store, 'outbox_events')).toBe(3);
    });
  });

  describe('run, get and all', () => {
    it('run reports how many rows a statement changed', async () => {
      expect(await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'a', 1])).toEqual({ changes: 1 });
      await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'b', 1]);
      expect(await store.run('UPDATE contract_items SET qty = qty + 1')).toEqual({ changes: 2 });
      expect(await store.run('DELETE FROM contract_items WHERE id = ?', [99])).toEqual({ changes: 0 });
    });

    it('get returns the first row as a plain object, or undefined when nothing matches', async () => {
      await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [7, 'seven', 70]);
      expect(await store.get('SELECT id, label, qty FROM contract_items WHERE id = ?', [7])).toEqual({ id: 7, label: 'seven', qty: 70 });
      expect(await store.get('SELECT id FROM contract_items WHERE id = ?', [8])).toBeUndefined();
    });

    it('all returns every row in the order the query asks for, and an empty array when none match', async () => {
      for (const [id, label] of [
        [3, 'c'],
        [1, 'a'],
        [2, 'b'],
      ] as const) {
        await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [id, label, id * 10]);
      }
      expect(await store.all('SELECT id, label FROM contract_items ORDER BY id DESC')).toEqual([
        { id: 3, label: 'c' },
        { id: 2, label: 'b' },
        { id: 1, label: 'a' },
      ]);
      expect(await store.all('SELECT id FROM contract_items WHERE qty > ?', [1000])).toEqual([]);
    });

    it('binds positional ? parameters as values, never as SQL', async () => {
      const hostile = "x'); DROP TABLE contract_items; --";
      await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, hostile, 1]);
      expect(await store.get('SELECT label FROM contract_items WHERE label = ?', [hostile])).toEqual({ label: hostile });
      expect(await count(store, 'contract_items')).toBe(1);
    });

    it('stores NULL and reads it back as null', async () => {
      await store.run('INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)', ['mch_n', 'N', 1]);
      await store.run(
        `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_hint, scopes, signing_secret, created_at, revoked_at)
         VALUES (?, ?, 'test', ?, ?, '[]', ?, ?, ?)`,
        ['key_n', 'mch_n', 'hash', 'hint', 'secret', 1, null],
      );
      expect(await store.get('SELECT revoked_at FROM api_keys WHERE id = ?', ['key_n'])).toEqual({ revoked_at: null });
    });
  });

  describe('integers', () => {
    it('round-trips every integer exactly, up to Number.MAX_SAFE_INTEGER in both directions, as a number', async () => {
      let id = 0;
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.maxSafeInteger(), fc.constantFrom(0, 1, -1, 2 ** 31, 2 ** 32 + 1, 2 ** 53 - 1, -(2 ** 53 - 1))), async (v) => {
          id++;
          await store.run('INSERT INTO contract_numbers (id, v) VALUES (?, ?)', [id, v]);
          const row = await store.get<{ v: unknown }>('SELECT v FROM contract_numbers WHERE id = ?', [id]);
          expect(typeof row!.v).toBe('number');
          expect(row!.v).toBe(v);
        }),
        { numRuns: 200 },
      );
    });

    it('accepts bigint parameters and reads them back as exact numbers', async () => {
      await store.run('INSERT INTO contract_numbers (id, v) VALUES (?, ?)', [1, BigInt(Number.MAX_SAFE_INTEGER)]);
      await store.run('INSERT INTO contract_numbers (id, v) VALUES (?, ?)', [2, -BigInt(Number.MAX_SAFE_INTEGER)]);
      expect(await store.all('SELECT v FROM contract_numbers ORDER BY id')).toEqual([{ v: Number.MAX_SAFE_INTEGER }, { v: -Number.MAX_SAFE_INTEGER }]);
    });

    it('sums integers exactly (SUM of amounts is how the ledger derives balances)', async () => {
      const values = [1_000_000_000_000, 999_999_999_999, -1, 4_503_599_627_370_496, 1];
      for (const [i, v] of values.entries()) await store.run('INSERT INTO contract_numbers (id, v) VALUES (?, ?)', [i + 1, v]);
      const row = await store.get<{ total: number }>('SELECT SUM(v) AS total FROM contract_numbers');
      expect(Number(row!.total)).toBe(values.reduce((a, b) => a + b, 0));
    });
  });

  describe('transactions', () => {
    it('returns the value its work returns', async () => {
      expect(await store.transaction(async (tx) => (await tx.get<{ two: number }>('SELECT 1 + 1 AS two'))!.two)).toBe(2);
    });

    it('commits all of its writes together: every one is visible afterwards', async () => {
      await store.transaction(async (tx) => {
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'one', 1]);
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'two', 2]);
        await tx.run('UPDATE contract_items SET qty = qty * 10 WHERE id = ?', [2]);
        await tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', ['c', 5]);
        // Inside the transaction, its own writes are visible.
        expect(await count(tx, 'contract_items')).toBe(2);
      });
      expect(await store.all('SELECT id, qty FROM contract_items ORDER BY id')).toEqual([
        { id: 1, qty: 1 },
        { id: 2, qty: 20 },
      ]);
      expect(await store.get('SELECT n FROM contract_counter WHERE id = ?', ['c'])).toEqual({ n: 5 });
    });

    it('rolls back every write when its work throws, and rejects with that same error', async () => {
      await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'before', 1]);
      const boom = new Error('boom');
      await expect(
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'doomed', 2]);
          await tx.run('UPDATE contract_items SET label = ? WHERE id = ?', ['changed', 1]);
          await tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', ['c', 1]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.all('SELECT id, label, qty FROM contract_items')).toEqual([{ id: 1, label: 'before', qty: 1 }]);
      expect(await count(store, 'contract_counter')).toBe(0);
    });

    it('rolls back every write when a statement inside it fails (a constraint violation)', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'first', 1]);
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'duplicate key', 1]);
        }),
      ).rejects.toThrow();
      expect(await count(store, 'contract_items')).toBe(0);
    });

    it('runs statements its work issues at once in the order issued, and commits all of them or, when one fails, none', async () => {
      const insert = (tx: Db, id: number, label: string) => tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [id, label, id]);
      await store.transaction(async (tx) => {
        const [a, b, c] = await Promise.all([insert(tx, 1, 'one'), insert(tx, 2, 'two'), tx.run('UPDATE contract_items SET qty = qty * 10 WHERE id = ?', [2])]);
        expect([a, b, c].map((r) => r.changes)).toEqual([1, 1, 1]); // the update ran after the insert before it
      });
      expect(await store.all('SELECT id, qty FROM contract_items ORDER BY id')).toEqual([
        { id: 1, qty: 1 },
        { id: 2, qty: 20 },
      ]);
      await expect(store.transaction((tx) => Promise.all([insert(tx, 3, 'three'), insert(tx, 1, 'duplicate key'), insert(tx, 4, 'four')]))).rejects.toThrow();
      expect(await count(store, 'contract_items')).toBe(2);
    });

    it('waits for the statements its work issued and did not await, and commits them with the rest', async () => {
      const value = await store.transaction(async (tx) => {
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'awaited', 1]);
        void tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'not awaited', 2]);
        void tx.run('UPDATE contract_items SET qty = qty * 10 WHERE id = ?', [2]);
        return 'answered';
      });
      expect(value).toBe('answered');
      expect(await store.all('SELECT id, qty FROM contract_items ORDER BY id')).toEqual([
        { id: 1, qty: 1 },
        { id: 2, qty: 20 },
      ]);
    });

    it('rejects with the error of a statement its work did not await, and nothing of it stands', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'first', 1]);
          void tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'duplicate key, not awaited', 1]);
          return 'answered';
        }),
      ).rejects.toThrow();
      expect(await count(store, 'contract_items')).toBe(0);
    });

    it('never commits part of a transaction whose failed statement the work caught: it rejects and nothing stands', async () => {
      await expect(
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'first', 1]);
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'duplicate key, caught', 1]).catch(() => undefined);
          return 'answered';
        }),
      ).rejects.toThrow();
      expect(await count(store, 'contract_items')).toBe(0);
    });

    it('refuses a statement issued on a transaction after its work resolved: it would land outside the transaction', async () => {
      let kept: Db | undefined;
      await store.transaction(async (tx) => {
        kept = tx;
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'in time', 1]);
      });
      await expect(kept!.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [9, 'late', 9])).rejects.toThrow(/already ended/);
      expect(await store.all('SELECT id FROM contract_items')).toEqual([{ id: 1 }]);
    });

    it('takes READ COMMITTED work as a transaction like any other: all of it commits, or none', async () => {
      const rc = { isolation: 'read committed' } as const;
      await store.transaction((tx) => tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'one', 1]), rc);
      await expect(
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'two', 2]);
          throw new Error('boom');
        }, rc),
      ).rejects.toThrow('boom');
      expect(await store.all('SELECT id FROM contract_items')).toEqual([{ id: 1 }]);
    });

    describe('append-only transactions', () => {
      const appendOnly = { appendOnly: true } as const;
      const item = (tx: Db, id: number, label: string) => tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [id, label, id]);

      it('commits all of its appends, those its work did not await too, and answers that each appended its row', async () => {
        const answers = await store.transaction(async (tx) => {
          const first = await item(tx, 1, 'one');
          commitWith(item(tx, 2, 'two'), tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', ['c', 7]));
          return [first];
        }, appendOnly);
        expect(answers).toEqual([{ changes: 1 }]);
        expect(await store.all('SELECT id, label FROM contract_items ORDER BY id')).toEqual([
          { id: 1, label: 'one' },
          { id: 2, label: 'two' },
        ]);
        expect(await store.get('SELECT n FROM contract_counter WHERE id = ?', ['c'])).toEqual({ n: 7 });
      });

      it('refuses a read, or a statement that is no append, even unawaited, and nothing of the transaction stands', async () => {
        await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [9, 'before', 9]);
        const refused = [
          (tx: Db) => tx.get('SELECT COUNT(*) AS n FROM contract_items'),
          (tx: Db) => tx.all('SELECT id FROM contract_items'),
          (tx: Db) => tx.run('UPDATE contract_items SET qty = 0 WHERE id = ?', [9]),
          (tx: Db) => tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', ['x', 1]),
          (tx: Db) => tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?) RETURNING n', ['x', 1]),
        ];
        for (const statement of refused) {
          await expect(
            store.transaction(async (tx) => {
              commitWith(item(tx, 1, 'one'), statement(tx));
            }, appendOnly),
          ).rejects.toThrow(/append-only transaction/);
        }
        expect(await store.all('SELECT id, qty FROM contract_items')).toEqual([{ id: 9, qty: 9 }]);
        expect(await count(store, 'contract_counter')).toBe(0);
      });

      it("says a duplicate key is one, of its table only (isDuplicateKey), raised by a plain statement or by an append-only transaction's commit", async () => {
        await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'one', 1]);
        const plain = await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'again', 1]).catch((e: unknown) => e);
        const appended = await store
          .transaction(async (tx) => {
            commitWith(item(tx, 2, 'two'), item(tx, 1, 'again'));
          }, appendOnly)
          .catch((e: unknown) => e);
        for (const error of [plain, appended]) {
          expect(isDuplicateKey(error, 'contract_items')).toBe(true);
          expect(isDuplicateKey(error, 'contract_counter')).toBe(false);
        }
        const notNull = await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [3, null, 3]).catch((e: unknown) => e);
        expect(isDuplicateKey(notNull, 'contract_items')).toBe(false);
        expect(await count(store, 'contract_items')).toBe(1);
      });

      it('commits many asked for at once each whole; one whose append breaks a constraint fails alone, leaving nothing', async () => {
        await store.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [5, 'taken', 5]);
        // Each transaction appends two items and a counter row; the sixth reuses item 5's key.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) =>
            store.transaction(async (tx) => {
              const id = i === 5 ? 5 : 100 + i;
              commitWith(item(tx, id, `first of ${i}`), item(tx, 200 + i, `second of ${i}`), tx.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', [`t${i}`, i]));
              return i;
            }, appendOnly),
          ),
        );
        expect(outcomes.map((o) => o.status)).toEqual(outcomes.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
        const others = [...Array(12).keys()].filter((i) => i !== 5);
        expect((await store.all<{ id: number }>('SELECT id FROM contract_items ORDER BY id')).map((r) => r.id)).toEqual([5, ...others.map((i) => 100 + i), ...others.map((i) => 200 + i)]);
        expect((await store.all<{ id: string }>('SELECT id FROM contract_counter ORDER BY n')).map((r) => r.id)).toEqual(others.map((i) => `t${i}`));
      });
    });

    it('stays usable after a rolled-back transaction', async () => {
      await expect(store.transaction(async () => Promise.reject(new Error('first fails')))).rejects.toThrow('first fails');
      await store.transaction((tx) => tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'after', 1]));
      expect(await count(store, 'contract_items')).toBe(1);
    });

    it('serialises concurrent transactions: two read-then-write loops of 50 increments each end at 100, without interleaving', async () => {
      await store.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', ['counter', 0]);
      const trail: string[] = [];
      const incrementFiftyTimes = (who: string) =>
        store.transaction(async (tx) => {
          for (let i = 0; i < 50; i++) {
            const row = await tx.get<{ n: number }>('SELECT n FROM contract_counter WHERE id = ?', ['counter']);
            trail.push(who);
            await tx.run('UPDATE contract_counter SET n = ? WHERE id = ?', [Number(row!.n) + 1, 'counter']);
          }
        });
      await Promise.all([incrementFiftyTimes('A'), incrementFiftyTimes('B')]);
      expect(await store.get('SELECT n FROM contract_counter WHERE id = ?', ['counter'])).toEqual({ n: 100 });
      const runs = trail.join('').replace(/(.)\1*/g, '$1');
      expect(['AB', 'BA']).toContain(runs);
    });

    it('serialises many concurrent transactions: every increment lands', async () => {
      await store.run('INSERT INTO contract_counter (id, n) VALUES (?, ?)', ['counter', 0]);
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transaction(async (tx) => {
            const row = await tx.get<{ n: number }>('SELECT n FROM contract_counter WHERE id = ?', ['counter']);
            await tx.run('UPDATE contract_counter SET n = ? WHERE id = ?', [Number(row!.n) + 1, 'counter']);
          }),
        ),
      );
      expect(await store.get('SELECT n FROM contract_counter WHERE id = ?', ['counter'])).toEqual({ n: 20 });
    });

    it('keeps concurrent transactions apart when one of them fails: the others commit, the failed one leaves nothing', async () => {
      const boom = new Error('the middle one fails');
      const results = await Promise.allSettled(
        [1, 2, 3, 4, 5].map((id) =>
          store.transaction(async (tx) => {
            await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [id, `item ${id}`, id]);
            if (id === 3) throw boom;
            return id;
          }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(results[2]).toEqual({ status: 'rejected', reason: boom });
      expect(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual([1, 2, 4, 5]);
      expect((await store.all<{ id: number }>('SELECT id FROM contract_items ORDER BY id')).map((r) => Number(r.id))).toEqual([1, 2, 4, 5]);
    });

    it('never lets a statement outside the transaction see its uncommitted writes (they roll back unseen)', async () => {
      const inserted = gate();
      const release = gate();
      const tx = store.transaction(async (t) => {
        await t.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'uncommitted', 1]);
        inserted.open();
        await release.promise;
        throw new Error('roll it back');
      });
      await inserted.promise;
      // Issued while the transaction holds an uncommitted row.
      const outsideGet = store.get('SELECT label FROM contract_items WHERE id = ?', [1]);
      const outsideAll = store.all('SELECT id FROM contract_items');
      const outsideCount = count(store, 'contract_items');
      release.open();
      await expect(tx).rejects.toThrow('roll it back');
      expect(await outsideGet).toBeUndefined();
      expect(await outsideAll).toEqual([]);
      expect(await outsideCount).toBe(0);
    });

    it('lets a statement issued during a transaction see all of it once committed, never a part of it', async () => {
      const halfway = gate();
      const release = gate();
      const tx = store.transaction(async (t) => {
        await t.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'one', 1]);
        halfway.open();
        await release.promise;
        await t.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'two', 2]);
      });
      await halfway.promise;
      const outside = count(store, 'contract_items');
      release.open();
      await tx;
      expect(await outside).toBe(2);
    });
  });

  describe('a call on the store itself from inside its own transaction', () => {
    // Such a call would wait for the transaction that waits for it: it is refused at once instead,
    // and the error names the fix. (Before, it hung forever on both stores.)
    const FIX = /inside one of its own transactions[\s\S]*use the transaction's Db/;

    it.each([
      ['run', (s: Store) => s.run('INSERT INTO contract_items (id, label, qty) VALUES (9, ?, 9)', ['inner'])],
      ['get', (s: Store) => s.get('SELECT 1 AS one')],
      ['all', (s: Store) => s.all('SELECT id FROM contract_items')],
      ['transaction', (s: Store) => s.transaction((tx) => tx.get('SELECT 1 AS one'))],
    ] as const)("refuses %s with an error naming the transaction's Db, and the transaction goes on to commit", async (method, call) => {
      const value = await store.transaction(async (tx) => {
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'outer', 1]);
        await expect(call(store)).rejects.toThrow(FIX);
        await expect(call(store)).rejects.toThrow(`store.${method}()`);
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [2, 'outer', 2]);
        return 'done';
      });
      expect(value).toBe('done');
      expect((await store.all<{ label: string }>('SELECT label FROM contract_items ORDER BY id')).map((r) => r.label)).toEqual(['outer', 'outer']);
    });

    it('refuses it however deep in the work it is asked for (behind awaits and callbacks)', async () => {
      const nested = async () => {
        await Promise.resolve();
        return new Promise((resolve, reject) => setImmediate(() => store.get('SELECT 1 AS one').then(resolve, reject)));
      };
      await store.transaction(async () => {
        await expect(nested()).rejects.toThrow(FIX);
      });
    });

    it('lets what the work started use the store once the work has ended (a callback settled after the commit)', async () => {
      const settled = gate();
      let later: Promise<unknown> | undefined;
      await store.transaction(async (tx) => {
        await tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'committed', 1]);
        // Started inside the work, run after it: outside the transaction, so on the store.
        later = settled.promise.then(() => store.get<{ label: string }>('SELECT label FROM contract_items WHERE id = ?', [1]));
      });
      settled.open();
      expect(await later).toEqual({ label: 'committed' });
    });

    it('lets the work call another store, and callers outside the transaction call this one meanwhile', async () => {
      const other = new SqliteStore(':memory:');
      extraStores.push(other);
      const inside = gate();
      const release = gate();
      const tx = store.transaction(async (t) => {
        await t.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'one', 1]);
        const fromOther = await other.get<{ one: number }>('SELECT 1 AS one');
        inside.open();
        await release.promise;
        return fromOther;
      });
      await inside.promise;
      const outside = count(store, 'contract_items');
      release.open();
      expect(await tx).toEqual({ one: 1 });
      // SQLite answers a read asked for after a transaction once that transaction committed;
      // PostgreSQL runs it at once, and it sees what was committed when it ran, before or after.
      expect(store.kind === 'postgres' ? [0, 1] : [1]).toContain(await outside);
    });
  });

  describe('close', () => {
    it('rejects every call after close()', async () => {
      await store.close();
      await expect(store.run('INSERT INTO contract_items (id, label, qty) VALUES (1, ?, 1)', ['x'])).rejects.toThrow();
      await expect(store.get('SELECT 1 AS one')).rejects.toThrow();
      await expect(store.all('SELECT 1 AS one')).rejects.toThrow();
      await expect(store.transaction(async (tx) => tx.get('SELECT 1 AS one'))).rejects.toThrow();
    });

    it('can be called twice', async () => {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });

    it('lets work already asked for finish before it closes: the transaction commits and the read answers', async () => {
      const committed = store.transaction((tx) => tx.run('INSERT INTO contract_items (id, label, qty) VALUES (?, ?, ?)', [1, 'queued', 1]));
      // Asked for while the transaction may still run: it answers, before or after the commit.
      const read = store.get<{ n: number }>('SELECT COUNT(*) AS n FROM contract_items');
      await store.close();
      await expect(committed).resolves.toEqual({ changes: 1 });
      expect([0, 1]).toContain(Number((await read)!.n));
      await expect(store.get('SELECT 1')).rejects.toThrow('closed');
      if (adapter.persistent) {
        const again = await opened.reopen!();
        extraStores.push(again);
        expect(await count(again, 'contract_items')).toBe(1);
      }
    });
  });
});
