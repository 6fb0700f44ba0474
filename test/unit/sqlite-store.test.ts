// Group commit in the SQLite adapter: what the port contract cannot see (it holds for any
// adapter), but the embedded store promises on top of it.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore, WAL_KEEP_BYTES } from '../../src/store/sqlite-store.ts';
import { CHECKPOINT_EVERY_COMMITS, WalCheckpointer } from '../../src/store/wal-checkpointer.ts';

let dir: string;
let store: SqliteStore;
let observer: DatabaseSync;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-store-'));
  store = new SqliteStore(join(dir, 'railyard.db'));
  await store.run('CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL)');
  // A second connection: it sees only what is committed.
  observer = new DatabaseSync(join(dir, 'railyard.db'), { readOnly: true });
});

afterEach(async () => {
  observer.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const committedIds = () => (observer.prepare('SELECT id FROM items ORDER BY id').all() as { id: number }[]).map((r) => r.id);

describe('SqliteStore group commit', () => {
  it('commits transactions that wait together once, each still all-or-nothing', async () => {
    const before = store.commitCount;
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.run('INSERT INTO items (id, label) VALUES (?, ?)', [i + 1, `item ${i + 1}`]);
          if (i === 10) throw new Error('this one fails alone');
          return i + 1;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(committedIds()).toEqual(Array.from({ length: 50 }, (_, i) => i + 1).filter((id) => id !== 11));
    expect(store.commitCount - before).toBe(1);
  });

  it('answers a transaction only once its writes are committed: another connection sees them', async () => {
    const seen: number[][] = [];
    await Promise.all([1, 2, 3].map((id) => store.transaction((tx) => tx.run('INSERT INTO items (id, label) VALUES (?, ?)', [id, 'x'])).then(() => seen.push(committedIds()))));
    for (const view of seen) expect(view).toEqual([1, 2, 3]);
  });

  it('answers a read issued among writes only after they commit, so nothing uncommitted leaks out', async () => {
    const write = store.transaction((tx) => tx.run('INSERT INTO items (id, label) VALUES (?, ?)', [1, 'x']));
    const read = store.get<{ n: number }>('SELECT COUNT(*) AS n FROM items').then((row) => ({ row, committed: committedIds() }));
    await write;
    expect(await read).toEqual({ row: { n: 1 }, committed: [1] });
  });

  it('commits nothing for a batch of reads', async () => {
    const before = store.commitCount;
    await Promise.all([store.get('SELECT 1 AS one'), store.all('SELECT id FROM items')]);
    expect(store.commitCount).toBe(before);
  });
});

describe('SqliteStore journal', () => {
  it('keeps a write-ahead log, synced at checkpoints, which the writer never checkpoints inside a commit', async () => {
    expect(await store.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' });
    expect(await store.get('PRAGMA synchronous')).toEqual({ synchronous: 1 }); // NORMAL
    expect(await store.get('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 0 });
    expect(await store.get('PRAGMA journal_size_limit')).toEqual({ journal_size_limit: WAL_KEEP_BYTES });
  });

  it('checkpoints the log on a thread of its own as commits accumulate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-wal-'));
    const path = join(dir, 'wal.sqlite');
    const own = new SqliteStore(path);
    try {
      await own.run('CREATE TABLE pages (id INTEGER PRIMARY KEY, filler TEXT NOT NULL)');
      const before = statSync(path).size;
      // Each commit a separate batch: 4 KiB rows, so the copied pages show in the database file.
      for (let i = 0; i < CHECKPOINT_EVERY_COMMITS * 3; i++) await own.run('INSERT INTO pages (filler) VALUES (?)', ['x'.repeat(4_000)]);
      const deadline = Date.now() + 10_000;
      while (statSync(path).size <= before && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
      // The database file grew: committed pages were copied out of the log, and not by this thread.
      expect(statSync(path).size).toBeGreaterThan(before);
      expect(await own.get('PRAGMA wal_autocheckpoint')).toEqual({ wal_autocheckpoint: 0 });
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarts the log under a steady stream of commits: the writer copies the few frames the thread left behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-wal-'));
    const path = join(dir, 'wal.sqlite');
    const MiB = 1024 * 1024;
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${MiB}`);
    db.exec('CREATE TABLE pages (id INTEGER PRIMARY KEY, filler TEXT NOT NULL)');
    const walBytes = () => statSync(`${path}-wal`).size;
    let writerCheckpoints = 0;
    /** The log file's size when the writer last caught up: the commit after a restart cuts it back. */
    let sizeAtCatchUp = 0;
    // The size fallback out of reach: only the thread's reports can make the writer checkpoint.
    const checkpointer = new WalCheckpointer(
      path,
      () => {
        writerCheckpoints++;
        db.exec('PRAGMA wal_checkpoint(PASSIVE)');
        sizeAtCatchUp = walBytes();
      },
      { restartBytes: MiB, catchUpBytes: MiB, limitBytes: 1024 * MiB },
    );
    try {
      const insert = db.prepare('INSERT INTO pages (filler) VALUES (?)');
      let restarted = false;
      // Commits of a 4 KiB row each, without a pause the thread could catch up in, until the log
      // file is cut back after one of the writer's checkpoints (at most 200 MiB of log).
      for (let i = 0; !restarted && i < 50_000; i++) {
        insert.run('x'.repeat(4_000));
        checkpointer.committed();
        if (walBytes() < sizeAtCatchUp) restarted = true;
        if (i % 16 === 15) await new Promise((done) => setImmediate(done)); // the thread's reports come in between commits
      }
      expect(writerCheckpoints).toBeGreaterThan(0);
      // The log restarted after the writer copied the rest, and the commit after it cut the file
      // back to journal_size_limit.
      expect(restarted).toBe(true);
      expect(walBytes()).toBeLessThan(4 * MiB);
    } finally {
      await checkpointer.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps a batch's savepoint journals in memory rather than spilling them to temporary files", async () => {
    expect(await store.get('PRAGMA temp_store')).toEqual({ temp_store: 2 }); // MEMORY
  });
});
