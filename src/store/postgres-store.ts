import type { Socket } from 'node:net';
import pg from 'pg';
import { ValidationError } from '../kernel/errors.ts';
import { inJobTurn } from '../kernel/job-scope.ts';
import { commitWith, type Db, type Isolation, type Row, type SqlValue, type Store, type TransactionOptions } from './db.ts';
import { MIGRATIONS } from './migrations.ts';
import { parseInteger, postgresMigrationSql, toPositional } from './postgres-sql.ts';
import { type AppendStatement, AppendOnlyWork } from './append-only-db.ts';
import { GroupCommit } from './group-commit.ts';
import { inTransactionWork, IssuedStatements, reentrantCall } from './transaction-scope.ts';

const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;

/** Types as SQLite shows them: integers are numbers, a boolean expression is 1 or 0. */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return parseInteger;
    if (oid === BOOL) return (text: string) => (text === 't' ? 1 : 0);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** serialization_failure and deadlock_detected: the transaction was rolled back and may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 10;
/** How many batches of append-only transactions may be committing at once (GroupCommit). */
const APPEND_BATCHES = 2;
/** The advisory lock migrations hold: instances starting together migrate one after the other. */
const MIGRATION_LOCK = 0x7261696c; // 'rail'
/** The first key of the session advisory lock (PRESENCE, boot) each live process holds. */
const PRESENCE = 0x72626f74; // 'rbot'
/** How soon a presence session lost while the process lives (a restarted server) is opened again. */
const PRESENCE_RECONNECT_MS = 200;

function retryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && RETRYABLE.has((error as { code?: string }).code ?? '');
}

function pause(attempt: number): Promise<void> {
  // Jittered, growing backoff so two instances that collided do not collide again in step. (Timing
  // only: no business value depends on it, so the seeded random of a virtual sandbox is not needed.)
  const ms = Math.min(200, 2 ** attempt) * (0.5 + Math.random());
  return new Promise((done) => setTimeout(done, ms));
}

/**
 * What a connection is asked to send before the event loop next checks for I/O leaves in one
 * system call, not one per statement: the socket is corked at the first write and uncorked in the
 * loop's check phase (setImmediate). A transaction's BEGIN and first statements, its last writes
 * and COMMIT, and the plain reads a burst of requests asks for on the shared read connection, so
 * cost one write each; on a busy machine every write is a dear system call, for the database too.
 */
function coalesceWrites(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: Socket } }).connection?.stream;
  if (!stream || typeof stream.cork !== 'function') return;
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true;
      stream.cork();
      setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

function values(params: SqlValue[]): (string | number | null)[] {
  return params.map((p) => (typeof p === 'bigint' ? p.toString() : p));
}

export interface PostgresStoreOptions {
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
}

/**
 * The shared store: PostgreSQL through a `pg` pool. Several railyard processes may use one database.
 *
 * What each method promises:
 * - Within one process, serializable transactions run one at a time, in the order asked for: under
 *   SERIALIZABLE, transactions of one process that overlapped would abort each other (a hot balance
 *   row, index pages they share) far more often than instances do, and a conflict costs a whole
 *   retry. READ COMMITTED transactions, and plain run/get/all statements, do not wait for them: each
 *   runs at once on the pool, as a transaction from another instance would (a statement
 *   autocommitted, seeing what was committed when it ran).
 * - A transaction is SERIALIZABLE unless asked for as READ COMMITTED (TransactionOptions), so a
 *   read-check-write (a balance check, a limit check) holds as if the fleet ran transactions one at a
 *   time. When PostgreSQL aborts one for a serialization failure or a deadlock, the whole `work` closure runs
 *   again on a fresh transaction (up to 10 attempts): `work` must therefore only touch `tx`, which it
 *   must anyway.
 * - A failed statement inside a transaction aborts that transaction (PostgreSQL has no per-statement
 *   rollback): the rejection reaches `work`, and the transaction rejects even if `work` caught it
 *   (with a conflict, it runs again), never committing a part of it silently.
 * - COMMIT goes out as soon as `work` resolves, behind the statements it issued without awaiting
 *   them: a transaction whose last writes are not awaited takes one round trip fewer.
 * - A call on the store itself from inside a transaction's work is refused (ReentrantStoreCallError):
 *   it would wait for that transaction to end. Work the transaction started that runs after it
 *   ended is outside it, and may.
 * - run() answers `changes` = rowCount; BIGINT, NUMERIC and COUNT come back as numbers, a boolean as 1 or 0.
 * - A parameter with a NUL character: a read finds nothing, a write is a ValidationError (below).
 * - close() lets what is already asked for finish, then ends the pool; later calls reject.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Settles when the latest transaction asked for has finished: the next one starts after it. */
  private lastTransaction: Promise<void> = Promise.resolve();
  /** Everything asked for and not yet settled: close() lets it finish. */
  private readonly running = new Set<Promise<unknown>>();
  /** The connection plain reads share, pipelined (reader()); a pool of one, so a lost one is replaced. */
  private readonly readPool: pg.Pool;
  private reading: Promise<pg.PoolClient> | undefined;
  /** The plain reads asked for in this turn of the event loop, by statement and values (plainRead). */
  private readonly readsThisTurn = new Map<string, Promise<pg.QueryResult>>();
  /** Commits append-only transactions several at a time (TransactionOptions.appendOnly). */
  private readonly appends = new GroupCommit((statements) => this.commitAppends(statements), APPEND_BATCHES);
  /** The session that holds this process's presence lock, and the boot it holds it for. */
  private presence: pg.Client | undefined;
  private presenceBoot: number | undefined;

  private constructor(
    readonly url: string,
    options: PostgresStoreOptions,
  ) {
    // application_name shows railyard's connections in pg_stat_activity. synchronous_commit=off: a
    // commit answers without waiting for its WAL flush, so a request does not wait on the disk; a
    // PostgreSQL crash may lose the last moments of commits, whole, never part of one. (A URL's own
    // `options` and application_name win over these.) pipeline: a query is written as soon as it
    // is asked for, not once the one before it is answered, so a transaction's BEGIN travels with
    // its first statement (runTransaction).
    this.pool = new pg.Pool({ application_name: 'railyard', options: '-c synchronous_commit=off', connectionString: url, max: options.poolSize ?? 10, types, pipeline: true });
    // An idle client that loses its connection (a restarted server) is dropped, not fatal.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', coalesceWrites);
    this.readPool = new pg.Pool({ application_name: 'railyard', options: '-c synchronous_commit=off', connectionString: url, max: 1, types, pipeline: true });
    this.readPool.on('error', () => undefined);
    this.readPool.on('connect', coalesceWrites);
  }

  /** Connects and brings the schema up to date (every migration not yet applied, in order). */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const store = new PostgresStore(url, options);
    try {
      await store.migrate();
    } catch (error) {
      await store.pool.end();
      throw error;
    }
    return store;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)');
        const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
        for (const m of MIGRATIONS) {
          if (applied.has(m.version)) continue;
          await client.query('BEGIN');
          try {
            await client.query(postgresMigrationSql(m));
            await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  private async query(on: pg.Pool | pg.PoolClient, sql: string, params: SqlValue[], reads: boolean): Promise<pg.QueryResult> {
    if (params.some((p) => typeof p === 'string' && p.includes('\u0000'))) {
      // PostgreSQL text cannot hold U+0000 (SQLite's can): no stored value equals one that has it,
      // so a lookup by it finds nothing, as it would on SQLite; a write of it is refused as bad input.
      if (reads) return { rows: [], rowCount: 0 } as unknown as pg.QueryResult;
      throw new ValidationError('Text cannot contain a NUL character (U+0000)');
    }
    const { text, name } = toPositional(sql);
    // Named: each pooled connection parses and plans a statement once, then only binds and runs it
    // (unnamed, planned at each run, if marked plannedEachRun).
    return on.query({ name, text, values: values(params) });
  }

  /**
   * The connection plain reads take turns on: they are pipelined on it, so the reads a burst of
   * requests asks for leave in one write and come back in one, instead of each taking a pooled
   * connection (and a system call each way) of its own, or waiting for one while transactions hold
   * them all. A read never waits for a lock under MVCC, so none holds up those behind it. A lost
   * connection is dropped and the next read opens another.
   */
  private reader(): Promise<pg.PoolClient> {
    if (this.reading) return this.reading;
    const reading = this.readPool.connect().then((client) => {
      const drop = () => {
        if (this.reading !== reading) return;
        this.reading = undefined;
        client.release(true);
      };
      client.on('error', drop);
      client.on('end', drop);
      return client;
    });
    reading.catch(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    this.reading = reading;
    return reading;
  }

  /**
   * A plain read on the reader's connection. The same statement with the same values asked for
   * again in this turn of the event loop, before the first left (they leave in the loop's check
   * phase, when the connection is uncorked), shares the first's answer, each caller its own copy
   * of the rows: both would have been answered back to back. Several quotes of one merchant at once
   * then cost one read of its standing, not one each.
   */
  private plainRead(sql: string, params: SqlValue[]): Promise<pg.QueryResult> {
    const key = `${sql}\u0000${JSON.stringify(params, (_name, value: unknown) => (typeof value === 'bigint' ? { bigint: String(value) } : value))}`;
    const asked = this.readsThisTurn.get(key);
    if (asked) return asked.then((result) => ({ ...result, rows: result.rows.map((row: Row) => ({ ...row })) }));
    // Forgotten in this turn's check phase, before any I/O: no answer that arrives after the read
    // left (a commit's, say) can lead to a read that joins it.
    if (this.readsThisTurn.size === 0) setImmediate(() => this.readsThisTurn.clear());
    const result = this.reader().then((on) => this.query(on, sql, params, true));
    this.readsThisTurn.set(key, result);
    return result;
  }

  /** Tracks `work` until it settles, so close() can let it finish. */
  private track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return work;
  }

  /** A plain statement, autocommitted; retried if it deadlocked (it rolled back). */
  private statement<T>(read: (result: pg.QueryResult) => T, sql: string, params: SqlValue[], reads: boolean, method: string): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    // Asked for from inside a transaction's work, it would run outside that transaction: refused, as on SQLite.
    const reentrant = reentrantCall(this, method);
    if (reentrant) return Promise.reject(reentrant);
    return this.track(
      (async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            if (reads && toPositional(sql).lockFree) return read(await this.plainRead(sql, params));
            return read(await this.query(this.pool, sql, params, reads));
          } catch (error) {
            if (!retryable(error) || attempt >= MAX_ATTEMPTS) throw error;
            await pause(attempt);
          }
        }
      })(),
    );
  }

  run(sql: string, params: SqlValue[] = []) {
    return this.statement((r) => ({ changes: r.rowCount ?? 0 }), sql, params, false, 'run');
  }
  get<T = Row>(sql: string, params: SqlValue[] = []) {
    return this.statement((r) => r.rows[0] as T | undefined, sql, params, true, 'get');
  }
  all<T = Row>(sql: string, params: SqlValue[] = []) {
    return this.statement((r) => r.rows as T[], sql, params, true, 'all');
  }

  transaction<T>(work: (tx: Db) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const reentrant = reentrantCall(this, 'transaction');
    if (reentrant) return Promise.reject(reentrant);
    // A job's transaction is asked for once the jobs before it in its round are finished (JobScope).
    if (options.appendOnly) return inJobTurn(() => this.startAppends(work));
    return inJobTurn(() => this.startTransaction(work, options.isolation ?? 'serializable'));
  }

  /**
   * An append-only transaction: its work runs at once and its appends are kept, then committed
   * with those of the others asked for meanwhile (GroupCommit). Each answers that it inserted its
   * row; if the commit fails the transaction rejects, and nothing of it stands.
   */
  private startAppends<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return this.track(
      (async () => {
        const statements: AppendStatement[] = [];
        const appends = new AppendOnlyWork(async (statement) => {
          statements.push(statement);
          return { changes: 1 };
        });
        const value = await inTransactionWork(this, () => work(appends.tx));
        appends.end();
        if (statements.length > 0) await this.appends.add(statements);
        return value;
      })(),
    );
  }

  /** One READ COMMITTED transaction of `statements`: none is waited for, so they leave with its BEGIN and COMMIT in one write. */
  private commitAppends(statements: AppendStatement[]): Promise<void> {
    return this.runTransaction(async (tx) => {
      commitWith(...statements.map((s) => tx.run(s.sql, s.params)));
    }, 'read committed');
  }

  private startTransaction<T>(work: (tx: Db) => Promise<T>, isolation: Isolation): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    // READ COMMITTED work holds no check another writer could break: it runs at once, beside the rest.
    if (isolation === 'read committed') return this.track(this.runTransaction(work, isolation));
    const done = this.lastTransaction.then(() => this.runTransaction(work, isolation));
    this.lastTransaction = done.then(
      () => undefined,
      () => undefined,
    );
    return this.track(done);
  }

  private async runTransaction<T>(work: (tx: Db) => Promise<T>, isolation: Isolation): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      for (let attempt = 1; ; attempt++) {
        // Not waited for: the work's first statement goes out right behind it (the connection
        // pipelines), so opening the transaction costs no round trip of its own. Both are answered
        // in order; BEGIN's answer is checked before any statement's result is used.
        const begun = client.query(isolation === 'serializable' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN ISOLATION LEVEL READ COMMITTED');
        begun.catch(() => undefined); // checked below; not an unhandled rejection meanwhile
        const query = async (sql: string, params: SqlValue[], reads: boolean) => {
          const result = this.query(client, sql, params, reads);
          result.catch(() => undefined); // awaited just below, once BEGIN's answer is in
          await begun;
          return await result;
        };
        // Every statement is kept: PostgreSQL aborts the transaction at the first that fails, even
        // if `work` caught it, and those `work` did not await are waited for before the commit.
        const issued = new IssuedStatements({
          run: async (sql, params = []) => ({ changes: (await query(sql, params, false)).rowCount ?? 0 }),
          get: async <R = Row>(sql: string, params: SqlValue[] = []) => (await query(sql, params, true)).rows[0] as R | undefined,
          all: async <R = Row>(sql: string, params: SqlValue[] = []) => (await query(sql, params, true)).rows as R[],
        });
        try {
          const value = await inTransactionWork(this, () => work(issued.tx));
          // Sent at once, behind the statements `work` issued and did not wait for: they travel
          // together. If one of them failed, PostgreSQL answers this COMMIT with a ROLLBACK.
          const failure = issued.end();
          const committed = client.query('COMMIT');
          committed.catch(() => undefined); // awaited below, once the statements' answers are in
          const failed = await failure;
          // COMMIT rolled all of it back: say so, even if `work` caught the failure (or run again, if it was a conflict).
          if (failed) {
            await committed.catch(() => undefined);
            throw retryable(failed.error) ? failed.error : new Error('a statement failed inside the transaction and PostgreSQL rolled the whole transaction back', { cause: failed.error });
          }
          await begun;
          if ((await committed).command !== 'COMMIT') throw new Error('PostgreSQL rolled the transaction back at its commit');
          return value;
        } catch (error) {
          void issued.end();
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection itself failed: do not hand it back to the pool
            throw error;
          }
          if (!retryable(error) || attempt >= MAX_ATTEMPTS) throw error;
          await pause(attempt);
        }
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * Holds the session advisory lock (PRESENCE, boot) on a connection of its own, outside the pool,
   * for as long as this store is open: the lock goes with the connection, so when the process
   * dies PostgreSQL releases it at once. A session lost while the process lives is opened again.
   */
  async holdPresence(boot: number): Promise<void> {
    this.presenceBoot = boot;
    await this.openPresence();
  }

  private async openPresence(): Promise<void> {
    if (this.closed || this.presenceBoot === undefined) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'railyard presence' });
    client.on('error', () => undefined);
    client.on('end', () => {
      if (this.presence !== client || this.closed) return;
      this.presence = undefined;
      setTimeout(() => void this.openPresence().catch(() => undefined), PRESENCE_RECONNECT_MS).unref();
    });
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1, $2)', [PRESENCE, this.presenceBoot]);
    this.presence = client;
  }

  /** The boots whose presence lock is held: the processes alive now. */
  async presentBoots(): Promise<number[]> {
    const rows = await this.all<{ boot: number }>(
      "SELECT objid AS boot FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = ? AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      [PRESENCE],
    );
    return rows.map((r) => Number(r.boot));
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing ??= Promise.all([this.lastTransaction, ...this.running]).then(async () => {
      const presence = this.presence;
      this.presence = undefined;
      await presence?.end().catch(() => undefined);
      const reading = this.reading;
      this.reading = undefined;
      if (reading) (await reading.catch(() => undefined))?.release();
      await this.readPool.end();
      await this.pool.end();
    });
    return this.closing;
  }
}
