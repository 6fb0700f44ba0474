import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { boundToCaller, inJobTurn } from '../kernel/job-scope.ts';
import type { Db, Row, SqlValue, Store, TransactionOptions } from './db.ts';
import { appendOnly } from './append-only-db.ts';
import { MIGRATIONS } from './migrations.ts';
import { inTransactionWork, IssuedStatements, reentrantCall } from './transaction-scope.ts';
import { WalCheckpointer } from './wal-checkpointer.ts';
import type { WriteTurn } from './write-turn.ts';

type Statement = { kind: 'run' | 'get' | 'all'; sql: string; params: SqlValue[] };
type Op = (Statement | { kind: 'transaction'; work: (tx: Db) => Promise<unknown> }) & {
  resolve(value: unknown): void;
  reject(reason: unknown): void;
};
type Outcome = { op: Op; ok: true; value: unknown } | { op: Op; ok: false; error: unknown };

/** At most this many operations share one commit, so the first of them never waits long. */
const MAX_BATCH = 256;

/** What the WAL file is cut back to when it restarts after a checkpoint (it would otherwise keep its largest size). */
export const WAL_KEEP_BYTES = 16 * 1024 * 1024;

/**
 * The embedded store: node:sqlite in WAL mode, one connection, operations run one at a time in
 * the order they were asked for.
 *
 * Group commit: the operations waiting when the store gets its turn run as one batch. The first
 * write opens a SQLite transaction; each transaction of the batch runs in its own savepoint (a
 * failed one rolls back alone); the batch commits once. No operation of a batch is answered
 * before that commit, not even a read: whatever a caller learns is already on disk. A COMMIT
 * writes every page a batch touched once, so fifty quotes cost about one quote's commit.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private readonly db: DatabaseSync;
  private readonly waiting: Op[] = [];
  private pumping: Promise<void> | undefined;
  private closed = false;
  private commits = 0;
  private readonly checkpointer: WalCheckpointer | undefined;
  // Repositories send a small, fixed set of SQL strings: each is prepared once.
  private readonly statements = new Map<string, StatementSync>();
  /** The batch's own statements, run for every transaction: prepared once rather than parsed by exec each time. */
  private readonly control: { begin: StatementSync; commit: StatementSync; savepoint: StatementSync; release: StatementSync };

  /**
   * @param options.writeTurn the turns this connection takes at writing, when other threads of
   * this process write the same file through connections of their own (the job thread): each batch
   * that writes waits for its turn before BEGIN and gives it back after COMMIT.
   */
  constructor(
    readonly path: string,
    private readonly options: { writeTurn?: WriteTurn } = {},
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
    // The WAL is checkpointed on a thread of its own (WalCheckpointer), not inside the commit that
    // crosses SQLite's limit, which copies pages and syncs the database file on the writer's
    // thread. Commits are as durable either way: a commit is in the WAL, which a restart replays.
    if (path !== ':memory:') {
      this.db.exec(`PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
      this.checkpointer = new WalCheckpointer(path, () => this.db.exec('PRAGMA wal_checkpoint(PASSIVE)'));
    }
    // Each transaction of a batch runs in a savepoint, which copies every page it changes that the
    // batch already changed (the hot index ends) to a sub-journal. Past 64 KiB SQLite spills that
    // journal to a temporary file, created and written for nearly every job of an advance; in memory
    // it is a copy. It holds only what one savepoint may have to undo (temporary tables and sort
    // b-trees, bounded by the queries' LIMITs, live in memory too).
    this.db.exec('PRAGMA temp_store = MEMORY');
    this.migrate();
    this.control = {
      begin: this.db.prepare('BEGIN IMMEDIATE'),
      commit: this.db.prepare('COMMIT'),
      savepoint: this.db.prepare('SAVEPOINT tx'),
      release: this.db.prepare('RELEASE tx'),
    };
  }

  /** How many commits this store has made: batches that wrote, not transactions. */
  get commitCount(): number {
    return this.commits;
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)');
    const applied = new Set((this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
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

  private execute({ kind, sql, params }: Statement): unknown {
    const statement = this.prepared(sql);
    if (kind === 'run') return { changes: Number(statement.run(...(params as SQLInputValue[])).changes) };
    if (kind === 'get') return statement.get(...(params as SQLInputValue[]));
    return statement.all(...(params as SQLInputValue[]));
  }

  private readonly direct: Db = {
    run: async (sql, params = []) => this.execute({ kind: 'run', sql, params }) as { changes: number },
    get: async <T = Row>(sql: string, params: SqlValue[] = []) => this.execute({ kind: 'get', sql, params }) as T | undefined,
    all: async <T = Row>(sql: string, params: SqlValue[] = []) => this.execute({ kind: 'all', sql, params }) as T[],
  };

  run(sql: string, params: SqlValue[] = []) {
    return this.enqueue<{ changes: number }>({ kind: 'run', sql, params });
  }
  get<T = Row>(sql: string, params: SqlValue[] = []) {
    return this.enqueue<T | undefined>({ kind: 'get', sql, params });
  }
  all<T = Row>(sql: string, params: SqlValue[] = []) {
    return this.enqueue<T[]>({ kind: 'all', sql, params });
  }
  transaction<T>(work: (tx: Db) => Promise<T>, options?: TransactionOptions): Promise<T> {
    // An append-only one runs like any other, held to the same rules as on PostgreSQL.
    if (options?.appendOnly) return this.transaction((tx) => appendOnly(tx, work));
    // One at a time whatever the isolation asked for: the one writer is this process.
    // Asked for from inside a transaction's work, it would queue behind that transaction for ever.
    const reentrant = reentrantCall(this, 'transaction');
    if (reentrant) return Promise.reject(reentrant);
    // A job's transaction joins the queue once the jobs before it in its round are finished
    // (JobScope): its rows and sequences land where a serial run would put them.
    // The batch runs `work` later, in the store's own context: it runs as the caller's (its job's) work.
    const bound = boundToCaller(work);
    return inJobTurn(() => this.enqueue<T>({ kind: 'transaction', work: bound }));
  }

  private enqueue<T>(op: Statement | { kind: 'transaction'; work: (tx: Db) => Promise<unknown> }): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    // A statement asked for from inside a transaction's work would wait for that transaction to commit, for ever.
    const reentrant = op.kind === 'transaction' ? undefined : reentrantCall(this, op.kind);
    if (reentrant) return Promise.reject(reentrant);
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ ...op, resolve: resolve as (value: unknown) => void, reject });
      this.pumping ??= Promise.resolve().then(() => this.pump());
    });
  }

  private async pump(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.runBatch();
    } finally {
      this.pumping = undefined;
    }
  }

  /** Runs what is waiting (and what arrives meanwhile) as one batch, commits once, then answers. */
  private async runBatch(): Promise<void> {
    const outcomes: Outcome[] = [];
    let writing = false;
    let yielded = false;
    let lost: unknown; // set when the batch's writes did not reach the disk
    /** This batch holds the write turn (another thread's connection writes the file too). */
    let turn = false;
    for (;;) {
      const op = this.waiting.shift();
      if (!op) {
        // Give requests that are ready to run (and about to write) one turn to join this commit.
        if (writing && !yielded && outcomes.length < MAX_BATCH) {
          yielded = true;
          await new Promise<void>((done) => setImmediate(done));
          continue;
        }
        break;
      }
      if (op.kind !== 'get' && op.kind !== 'all' && !writing) {
        if (this.options.writeTurn && !turn) {
          await this.options.writeTurn.take();
          turn = true;
        }
        try {
          this.control.begin.run();
        } catch (error) {
          // Another connection holds the write lock past busy_timeout: this write fails alone.
          outcomes.push({ op, ok: false, error });
          continue;
        }
        writing = true;
      }
      if (op.kind === 'transaction') {
        outcomes.push(await this.inSavepoint(op));
      } else {
        try {
          outcomes.push({ op, ok: true, value: this.execute(op) });
        } catch (error) {
          outcomes.push({ op, ok: false, error });
        }
      }
      if (writing && !this.db.isTransaction) {
        // An I/O or disk-full error rolls back the whole transaction: nothing of the batch stands.
        lost = new Error('the store lost a transaction to an I/O error; nothing of it was written');
        writing = false;
        break;
      }
      if (outcomes.length >= MAX_BATCH) break;
    }
    if (writing) {
      try {
        this.control.commit.run();
        this.commits++;
        this.checkpointer?.committed();
      } catch (error) {
        lost = error;
        if (this.db.isTransaction) this.db.exec('ROLLBACK');
      }
    }
    if (turn) this.options.writeTurn!.give();
    for (const outcome of outcomes) {
      if (lost !== undefined) outcome.op.reject(outcome.ok ? lost : outcome.error);
      else if (outcome.ok) outcome.op.resolve(outcome.value);
      else outcome.op.reject(outcome.error);
    }
  }

  private async inSavepoint(op: Op & { kind: 'transaction' }): Promise<Outcome> {
    this.control.savepoint.run();
    try {
      const issued = new IssuedStatements(this.direct);
      const value = await inTransactionWork(this, () => op.work(issued.tx));
      // A statement the work issued and did not await ran already (each runs when issued): if it
      // failed, nothing of the transaction stands, as on PostgreSQL.
      const failed = await issued.end();
      if (failed) throw failed.error;
      this.control.release.run();
      return { op, ok: true, value };
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK TO tx; RELEASE tx');
      return { op, ok: false, error };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.pumping) await this.pumping;
    await this.checkpointer?.close();
    if (!this.db.isOpen) return;
    this.db.close();
  }
}
