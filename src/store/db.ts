// The Store port: a small SQL executor with transactions. Repositories write portable SQL
// (SQLite and PostgreSQL both take ON CONFLICT and RETURNING); parameters are positional `?`.

export type SqlValue = string | number | bigint | null;
export type Row = Record<string, SqlValue>;

/**
 * Marks a statement whose best plan depends on what its tables hold at the time, such as a range
 * over a queue that fills and empties. A store that keeps a plan per statement (PostgreSQL, which
 * after five runs may settle on one generic plan for every later run) plans it at each run
 * instead. Other stores read the mark as the comment it is.
 */
export const PLANNED_EACH_RUN = '/* planned each run */ ';

export function plannedEachRun(sql: string): string {
  return `${PLANNED_EACH_RUN}${sql}`;
}

export interface Db {
  run(sql: string, params?: SqlValue[]): Promise<{ changes: number }>;
  get<T = Row>(sql: string, params?: SqlValue[]): Promise<T | undefined>;
  all<T = Row>(sql: string, params?: SqlValue[]): Promise<T[]>;
}

/**
 * How a transaction is kept apart from concurrent ones, where the store can tell them apart.
 * - `serializable` (the default): as if the transactions ran one at a time. What a read-check-write
 *   needs (a balance or limit check before a posting).
 * - `read committed`: each statement sees what was committed when it ran. Enough for work that
 *   holds no check against concurrent writers: it inserts fresh rows, claims a key by an upsert, or
 *   moves a row by a conditional update, and reads nothing whose change by another writer could
 *   make its writes wrong. A store that can runs such a transaction beside the others.
 */
export type Isolation = 'serializable' | 'read committed';

export interface TransactionOptions {
  isolation?: Isolation;
  /**
   * The work only appends rows: each statement inserts one fresh row (a plain INSERT … VALUES,
   * appendShape), none is awaited for an answer, and nothing is read. Its run() answers that it
   * inserted its row; get() and all() are refused, as is any other statement, and the refusal
   * fails the transaction. Such a transaction holds nothing against concurrent writers (it is
   * READ COMMITTED), so a store may commit it together with others: PostgreSQL merges the appends
   * of the transactions asked for meanwhile into one insert per table (GroupCommit).
   */
  appendOnly?: boolean;
}

export interface Store extends Db {
  readonly kind: string;
  /**
   * Runs `work` in one transaction: all of it commits, or none of it. `work` must only await
   * calls on `tx`; never network I/O, which would hold the store for everyone else. A call on
   * the store itself from inside `work` (run, get, all, transaction) would wait for this very
   * transaction: it rejects at once with a ReentrantStoreCallError (transaction-scope.ts).
   * Statements none of which reads what another writes may be issued at once (Promise.all): they
   * run in the order issued, and a store whose connection pipelines sends them together.
   * A statement `work` issues and does not await still belongs to the transaction: the store waits
   * for it before committing, and if it failed the transaction rejects with its error and nothing
   * of it stands. Issuing the last writes so lets a pipelining store send COMMIT along with them.
   * SQLite runs every transaction one at a time, whatever its isolation.
   */
  transaction<T>(work: (tx: Db) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
  /**
   * A store several processes share can tell which of them are alive at this moment, by a
   * session each holds open: `holdPresence(boot)` keeps this process's, until close();
   * `presentBoots()` lists the boots whose session is open. A process that dies (even SIGKILL)
   * drops its session with its connection, so it is known dead at once. Absent on a store one
   * process owns.
   */
  holdPresence?(boot: number): Promise<void>;
  presentBoots?(): Promise<number[]>;
}

/**
 * The last writes of a transaction's work, issued without awaiting them: the store waits for them
 * and sends COMMIT along with them (on PostgreSQL, one round trip fewer). If one fails, the
 * transaction rejects with its error and nothing of it stands; their own promises are quieted
 * here, so that the failure is reported once, by the transaction.
 */
export function commitWith(...writes: (Promise<unknown> | undefined)[]): void {
  for (const write of writes) write?.catch(() => undefined);
}

/**
 * Whether `error`, or an error it was caused by, is a store's refusal of a row whose key a row of
 * `table` already holds: PostgreSQL's unique_violation (23505) on that table, or SQLite's UNIQUE or
 * PRIMARY KEY constraint naming it.
 */
export function isDuplicateKey(error: unknown, table: string): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, table: failedOn, errcode, message } = e as { code?: unknown; table?: unknown; errcode?: unknown; message?: unknown };
    if (code === '23505' && failedOn === table) return true;
    if ((errcode === 2067 || errcode === 1555) && typeof message === 'string' && message.includes(` ${table}.`)) return true;
  }
  return false;
}
