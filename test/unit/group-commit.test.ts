// Group commit of append-only transactions (src/store/group-commit.ts): how their appends are
// merged, and how a batch is committed, or failed one transaction at a time.
import { describe, expect, it } from 'vitest';
import { type AppendStatement, appendShape } from '../../src/store/append-only-db.ts';
import { GroupCommit, mergeAppends } from '../../src/store/group-commit.ts';

const ITEM = 'INSERT INTO items (id, label) VALUES (?, ?)';
const EVENT = "WITH event AS (INSERT INTO events (id, kind) VALUES (?, 'made') RETURNING seq) INSERT INTO queue (seq) SELECT seq FROM event";
const QUEUED = 'INSERT INTO queue (seq) SELECT seq FROM events WHERE id = ?';

describe('appendShape', () => {
  it('locates the one VALUES row of an insert, and of an insert inside a WITH', () => {
    expect(appendShape(ITEM)).toEqual({ values: { head: 'INSERT INTO items (id, label) VALUES ', tuple: '(?, ?)', tail: '' }, params: 2 });
    expect(appendShape(EVENT).values).toEqual({
      head: 'WITH event AS (INSERT INTO events (id, kind) VALUES ',
      tuple: "(?, 'made')",
      tail: ' RETURNING seq) INSERT INTO queue (seq) SELECT seq FROM event',
    });
  });

  it('takes an INSERT … SELECT as an append with no row to merge', () => {
    expect(appendShape(QUEUED)).toEqual({ params: 1 });
  });

  it('refuses what is no append: a read, an update, an upsert, a RETURNING to the caller', () => {
    for (const sql of ['SELECT 1', 'UPDATE items SET label = ?', 'INSERT INTO items (id) VALUES (?) ON CONFLICT (id) DO NOTHING', 'INSERT INTO items (id) VALUES (?) RETURNING id']) {
      expect(() => appendShape(sql)).toThrow(/no append/);
    }
  });

  it('merges no row whose tuple holds a parenthesis, or does not hold every placeholder', () => {
    expect(appendShape('INSERT INTO items (id, at) VALUES (?, now())').values).toBeUndefined();
    expect(appendShape('WITH x AS (INSERT INTO items (id) VALUES (?) RETURNING id) INSERT INTO log (id, note) SELECT id, ? FROM x').values).toBeUndefined();
  });
});

describe('mergeAppends', () => {
  it('makes the appends of one text one insert of all their rows, in the order issued, texts in the order first seen', () => {
    const statements: AppendStatement[] = [
      { sql: ITEM, params: [1, 'a'] },
      { sql: EVENT, params: ['e1'] },
      { sql: ITEM, params: [2, 'b'] },
      { sql: EVENT, params: ['e2'] },
      { sql: ITEM, params: [3, 'c'] },
    ];
    expect(mergeAppends(statements)).toEqual([
      { sql: 'INSERT INTO items (id, label) VALUES (?, ?), (?, ?), (?, ?)', params: [1, 'a', 2, 'b', 3, 'c'] },
      { sql: "WITH event AS (INSERT INTO events (id, kind) VALUES (?, 'made'), (?, 'made') RETURNING seq) INSERT INTO queue (seq) SELECT seq FROM event", params: ['e1', 'e2'] },
    ]);
  });

  it('leaves a single append as it is, and keeps appends with no row to merge apart, in order', () => {
    const statements: AppendStatement[] = [
      { sql: ITEM, params: [1, 'a'] },
      { sql: QUEUED, params: ['e1'] },
      { sql: QUEUED, params: ['e2'] },
    ];
    expect(mergeAppends(statements)).toEqual(statements);
  });

  it('splits an insert whose rows would pass PostgreSQL’s limit on parameters into several', () => {
    const rows = Array.from({ length: 40_000 }, (_, i): AppendStatement => ({ sql: ITEM, params: [i, `label ${i}`] }));
    const merged = mergeAppends(rows);
    expect(merged.length).toBeGreaterThan(1);
    for (const statement of merged) expect(statement.params.length).toBeLessThan(65_535);
    expect(merged.flatMap((s) => s.params)).toEqual(rows.flatMap((r) => r.params));
  });
});

describe('GroupCommit', () => {
  /** A commit that records what it was given, and fails any batch holding a row labelled 'bad'. */
  function recorder() {
    const commits: AppendStatement[][] = [];
    const commit = async (statements: AppendStatement[]) => {
      commits.push(statements);
      await new Promise((done) => setTimeout(done, 5));
      if (statements.some((s) => s.params.includes('bad'))) throw new Error('constraint');
    };
    return { commits, commit };
  }

  it('commits the transactions asked for in one turn of the event loop as one batch of merged inserts', async () => {
    const { commits, commit } = recorder();
    const group = new GroupCommit(commit, 2);
    await Promise.all([1, 2, 3].map((i) => group.add([{ sql: ITEM, params: [i, `item ${i}`] }])));
    expect(commits).toEqual([[{ sql: 'INSERT INTO items (id, label) VALUES (?, ?), (?, ?), (?, ?)', params: [1, 'item 1', 2, 'item 2', 3, 'item 3'] }]]);
  });

  it('gathers those asked for while batches are committing into the next batch', async () => {
    const { commits, commit } = recorder();
    const group = new GroupCommit(commit, 1);
    const first = group.add([{ sql: ITEM, params: [1, 'first'] }]);
    await new Promise((done) => setImmediate(done)); // the first batch is committing
    const later = [2, 3, 4].map((i) => group.add([{ sql: ITEM, params: [i, `later ${i}`] }]));
    await Promise.all([first, ...later]);
    expect(commits.map((c) => c.flatMap((s) => s.params))).toEqual([
      [1, 'first'],
      [2, 'later 2', 3, 'later 3', 4, 'later 4'],
    ]);
  });

  it('commits each transaction of a failed batch alone: only the one at fault fails', async () => {
    const { commits, commit } = recorder();
    const group = new GroupCommit(commit, 2);
    const outcomes = await Promise.allSettled(['good', 'bad', 'fine'].map((label, i) => group.add([{ sql: ITEM, params: [i, label] }])));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(commits.length).toBe(4); // the batch, then each alone
  });
});
