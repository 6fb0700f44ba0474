// Two connections to one SQLite file in one process (the served sandbox's request and job
// threads) take turns at writing: neither waits in SQLite's busy handler, which would block its
// thread, and neither gets SQLITE_BUSY.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { WriteTurn } from '../../src/store/write-turn.ts';

let dir: string;
let stores: SqliteStore[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-write-turn-'));
  stores = [];
});

afterEach(async () => {
  for (const store of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WriteTurn', () => {
  it('serves its takers in the order they asked, one at a time', async () => {
    const turn = new WriteTurn();
    const order: string[] = [];
    await turn.take();
    // Each holds its turn for a moment, then gives it on.
    const waiting = ['b', 'c', 'd'].map((name) =>
      turn.take().then(async () => {
        order.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 5));
        order.push(`${name} out`);
        turn.give();
      }),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    turn.give();
    await Promise.all(waiting);
    expect(order).toEqual(['b in', 'b out', 'c in', 'c out', 'd in', 'd out']);
  });

  it('is the same lock in another WriteTurn made over its buffer (as the job thread makes it)', async () => {
    const turn = new WriteTurn();
    const other = new WriteTurn(turn.buffer);
    await turn.take();
    let served = false;
    const waiting = other.take().then(() => (served = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(served).toBe(false);
    turn.give();
    await waiting;
    expect(served).toBe(true);
    other.give();
  });
});

describe('two SqliteStores on one file, taking turns', () => {
  it('interleave their transactions without a busy error, each all-or-nothing, and both see every commit', async () => {
    const path = join(dir, 'railyard.db');
    const turn = new WriteTurn();
    const requests = new SqliteStore(path, { writeTurn: turn });
    const jobs = new SqliteStore(path, { writeTurn: new WriteTurn(turn.buffer) });
    stores.push(requests, jobs);
    await requests.run('CREATE TABLE items (id INTEGER PRIMARY KEY, writer TEXT NOT NULL)');
    // Each transaction yields between its statements, so the other store's batch asks for the
    // file while this one holds it: without turns its BEGIN would meet SQLite's busy handler.
    const write = (store: SqliteStore, writer: string, id: number) =>
      store.transaction(async (tx) => {
        await tx.run('INSERT INTO items (id, writer) VALUES (?, ?)', [id, writer]);
        await new Promise((r) => setImmediate(r));
        if (id % 10 === 0) throw new Error('this one fails alone');
        await tx.run('UPDATE items SET writer = ? WHERE id = ?', [`${writer}!`, id]);
      });
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => write(i % 2 === 0 ? requests : jobs, i % 2 === 0 ? 'requests' : 'jobs', i + 1)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ id: i + 1, error: String(r.reason) }] : []));
    expect(failed.map((f) => f.id)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(failed.every((f) => f.error.includes('fails alone'))).toBe(true);
    for (const store of [requests, jobs]) {
      const rows = await store.all<{ id: number; writer: string }>('SELECT id, writer FROM items ORDER BY id');
      expect(rows).toHaveLength(90);
      expect(rows.every((r) => r.writer === (r.id % 2 === 1 ? 'requests!' : 'jobs!'))).toBe(true);
    }
  });
});
