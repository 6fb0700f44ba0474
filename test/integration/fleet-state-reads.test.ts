// The fleet's state each request starts from on PostgreSQL (FleetStateReads): the requests of one
// turn of the event loop share one statement, each still reads what was committed before it asked,
// and each finds its own API key in the shared answer.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/kernel/secrets.ts';
import type { Db } from '../../src/store/db.ts';
import { PostgresStore } from '../../src/store/postgres-store.ts';
import { ApiKeyRepository } from '../../src/store/repositories/api-key-repository.ts';
import { FleetStateReads } from '../../src/store/runtime-state.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);

const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function freshStore(): Promise<PostgresStore> {
  const store = await PostgresStore.open(await (await postgres()).createDatabase());
  opened.push(store);
  return store;
}

/** The store, with the statements sent through it counted. */
function counted(store: PostgresStore): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const db = Object.create(store) as Db;
  db.all = (sql, params) => {
    statements.push(sql);
    return store.all(sql, params);
  };
  return { db, statements };
}

const keys = new ApiKeyRepository();
async function issueKey(store: PostgresStore, id: string, key: string): Promise<string> {
  await store.run("INSERT INTO merchants (id, name, created_at) VALUES ('mch_1', 'Kofi Ltd', 1) ON CONFLICT (id) DO NOTHING");
  const keyHash = sha256Hex(key);
  await keys.upsert(store, { id, merchantId: 'mch_1', environment: 'test', keyHash, keyHint: key.slice(-4), scopes: '[]', signingSecret: 's', createdAt: 1, role: 'admin', ipAllowlist: '[]' });
  return keyHash;
}

describe('the fleet state a request starts from', () => {
  it('is read once for the requests of one turn, each finding its own API key and none a revoked one', async () => {
    const store = await freshStore();
    const a = await issueKey(store, 'key_a', 'sk_test_aaaa');
    const b = await issueKey(store, 'key_b', 'sk_test_bbbb');
    const revoked = await issueKey(store, 'key_c', 'sk_test_cccc');
    await keys.revoke(store, 'key_c', 2);
    const { db, statements } = counted(store);
    const reads = new FleetStateReads(db);

    const [forA, forB, forRevoked, keyless] = await Promise.all([reads.read(a), reads.read(b), reads.read(revoked), reads.read()]);

    expect(statements).toHaveLength(1);
    expect(forA.apiKeys.get(a)?.id).toBe('key_a');
    expect(forB.apiKeys.get(b)?.id).toBe('key_b');
    expect(forRevoked.apiKeys.has(revoked)).toBe(false);
    expect(keyless.apiKeys.get(a)?.id).toBe('key_a');
  });

  it('is read again for a request that asks once the last read was answered, and sees what was committed before it asked', async () => {
    const store = await freshStore();
    const { db, statements } = counted(store);
    const reads = new FleetStateReads(db);

    expect((await reads.read()).virtualClock).toBeNull();
    await store.run("INSERT INTO runtime_state (name, value) VALUES ('virtual_clock', 1234)");
    expect((await reads.read()).virtualClock).toBe(1234);
    expect(statements).toHaveLength(2);
  });

  it('fails every request that shares a read that fails, and the next turn reads afresh', async () => {
    const store = await freshStore();
    let fail = true;
    const db = Object.create(store) as Db;
    db.all = (sql, params) => (fail ? Promise.reject(new Error('connection lost')) : store.all(sql, params));
    const reads = new FleetStateReads(db);

    const shared = [reads.read(), reads.read()];
    await expect(Promise.all(shared)).rejects.toThrow('connection lost');
    await expect(shared[1]).rejects.toThrow('connection lost');
    fail = false;
    expect((await reads.read()).virtualClock).toBeNull();
  });
});
