import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db, Row, SqlValue, Store } from './db.ts';
import { MIGRATIONS } from './migrations.ts';

/** The embedded store: node:sqlite in WAL mode, one connection, transactions queued in turn. */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private readonly db: DatabaseSync;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  // Repositories send a small, fixed set of SQL strings: each is prepared once.
  private readonly statements = new Map<string, StatementSync>();

  constructor(readonly path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
    this.migrate();
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)');
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
    );
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.exec(m.sql);
        this.db.prepare('INSERT INTO schema_migrations (version, name) VALUES (?, ?)').run(m.version, m.name);
        this.db.exec('COMMIT');
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      }
    }
  }

  private prepared(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= 1_000) this.statements.clear(); // bounded, should SQL ever be built per call
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private readonly direct: Db = {
    run: async (sql, params = []) => {
      const r = this.prepared(sql).run(...(params as SQLInputValue[]));
      return { changes: Number(r.changes) };
    },
    get: async <T = Row>(sql: string, params: SqlValue[] = []) =>
      this.prepared(sql).get(...(params as SQLInputValue[])) as T | undefined,
    all: async <T = Row>(sql: string, params: SqlValue[] = []) =>
      this.prepared(sql).all(...(params as SQLInputValue[])) as T[],
  };

  // Statements outside a transaction wait their turn too, so they never see (or join) the
  // uncommitted writes of a transaction that is between two of its awaits.
  run(sql: string, params?: SqlValue[]) {
    return this.enqueue(() => this.direct.run(sql, params));
  }
  get<T = Row>(sql: string, params?: SqlValue[]) {
    return this.enqueue(() => this.direct.get<T>(sql, params));
  }
  all<T = Row>(sql: string, params?: SqlValue[]) {
    return this.enqueue(() => this.direct.all<T>(sql, params));
  }

  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const value = await work(this.direct);
        this.db.exec('COMMIT');
        return value;
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const result = this.queue.then(() => {
      if (this.closed) throw new Error('store is closed');
      return op();
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    await this.queue;
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}
