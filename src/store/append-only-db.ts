import type { Db, SqlValue } from './db.ts';

/** A statement an append-only transaction may issue: one row inserted, nothing read back. */
export interface AppendStatement {
  sql: string;
  params: SqlValue[];
}

/** Where an append's one row of values sits in its SQL: the text around the `VALUES (…)` tuple. */
export interface AppendShape {
  /** The SQL up to the tuple (its `VALUES `), the tuple itself (parentheses included), and the rest. */
  values?: { head: string; tuple: string; tail: string };
  /** The statement's `?` placeholders (all of them in the tuple, when it has `values`). */
  params: number;
}

const shapes = new Map<string, AppendShape>();

/**
 * The shape of an append: an INSERT, or an INSERT inside a `WITH` whose outer statement only
 * passes its RETURNING on to another insert (the outbox queues each event it writes so). Nothing
 * of it is read back: no ON CONFLICT, whose answer (a row or none) the caller could need, and no
 * RETURNING to the caller. One of a single `VALUES (…)` row, with no parenthesis inside it, has its
 * tuple located (`values`), so that appends of the same text can be merged into one insert of all
 * their rows (an `INSERT … SELECT` of the transaction's own rows cannot). Anything else is refused,
 * being no append: a programming error.
 */
export function appendShape(sql: string): AppendShape {
  const known = shapes.get(sql);
  if (known) return known;
  const refuse = (why: string) => new Error(`an append-only transaction issued a statement that is no append (${why}): ${sql}`);
  if (!/^\s*(INSERT\s+INTO|WITH\s+\w+\s+AS\s*\(\s*INSERT\s+INTO)\s/i.test(sql)) throw refuse('not an INSERT');
  if (/\bON\s+CONFLICT\b/i.test(sql)) throw refuse('ON CONFLICT');
  if (/\bRETURNING\b/i.test(sql) && !/^\s*WITH\b/i.test(sql)) throw refuse('RETURNING');
  const placeholders = (text: string) => (text.match(/\?/g) ?? []).length;
  const params = placeholders(sql);
  const found = [...sql.matchAll(/\bVALUES\s*\(/gi)];
  let values: AppendShape['values'];
  if (found.length === 1) {
    const open = found[0]!.index + found[0]![0].length - 1;
    const close = sql.indexOf(')', open);
    const tuple = close < 0 ? '' : sql.slice(open, close + 1);
    // Merged, the tuple repeats: it must hold every placeholder, and be one row.
    if (tuple !== '' && !tuple.slice(1).includes('(') && placeholders(tuple) === params) values = { head: sql.slice(0, open), tuple, tail: sql.slice(close + 1) };
  }
  const shape = { ...(values ? { values } : {}), params };
  if (shapes.size >= 1_000) shapes.clear(); // bounded, should SQL ever be built per call
  shapes.set(sql, shape);
  return shape;
}

/**
 * The Db an append-only transaction's work is given (TransactionOptions.appendOnly), and what it
 * issued. run() takes appends only (appendShape) and hands each to `append`; get() and all() are
 * refused, as is any statement once the work has ended. A refusal fails the transaction even if
 * the work did not await it (end()), as a failed statement would.
 */
export class AppendOnlyWork {
  private refusal: Error | undefined;
  private ended = false;
  readonly tx: Db;

  constructor(append: (statement: AppendStatement) => Promise<{ changes: number }>) {
    const refuse = (error: Error) => {
      this.refusal ??= error;
      return Promise.reject(error);
    };
    const read = (method: string) => refuse(new Error(`an append-only transaction reads nothing: ${method}() is refused`));
    this.tx = {
      run: (sql, params = []) => {
        if (this.ended) return Promise.reject(new Error('a statement was issued on a transaction whose work had already ended: await it, or issue it before the work resolves'));
        try {
          appendShape(sql);
        } catch (error) {
          return refuse(error as Error);
        }
        return append({ sql, params });
      },
      get: () => read('get'),
      all: () => read('all'),
    };
  }

  /** Ends the work: no statement may join it any more. Throws the first refusal, if there was one. */
  end(): void {
    this.ended = true;
    if (this.refusal) throw this.refusal;
  }
}

/** Runs an append-only transaction's `work` on an ordinary transaction's `tx`, held to the rules of AppendOnlyWork. */
export async function appendOnly<T>(tx: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  const appends = new AppendOnlyWork((statement) => tx.run(statement.sql, statement.params));
  const value = await work(appends.tx);
  appends.end();
  return value;
}
