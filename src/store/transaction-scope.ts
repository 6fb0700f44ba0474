import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from './db.ts';

/**
 * A call on a store from inside the work of one of its own transactions. Both stores run a
 * transaction's work before anything asked for after it, so such a call waits for the very
 * transaction that waits for it: it would hang forever. It is refused at once instead.
 */
export class ReentrantStoreCallError extends Error {
  constructor(method: string) {
    super(
      `store.${method}() was called on the store from inside one of its own transactions, which would wait for that ` +
        `transaction to end and so hang forever: use the transaction's Db (the tx its work was given) instead`,
    );
    this.name = 'ReentrantStoreCallError';
  }
}

/** The transaction whose work is running, and whether it still is. */
interface OpenTransaction {
  readonly store: object;
  open: boolean;
}

const working = new AsyncLocalStorage<OpenTransaction>();

/**
 * Runs a transaction's `work` marked as such for `store` (reentrantCall sees the mark). The mark
 * is lifted when the work settles: whatever the work started that runs on afterwards (a timer, a
 * callback settled later in this process) is outside the transaction, and may use the store.
 */
export async function inTransactionWork<T>(store: object, work: () => Promise<T>): Promise<T> {
  const mark: OpenTransaction = { store, open: true };
  try {
    return await working.run(mark, work);
  } finally {
    mark.open = false;
  }
}

/** The error for a call of `method` on `store` from inside the work of its own open transaction, if this is one. */
export function reentrantCall(store: object, method: string): ReentrantStoreCallError | undefined {
  const mark = working.getStore();
  return mark?.open && mark.store === store ? new ReentrantStoreCallError(method) : undefined;
}

/**
 * A transaction's Db that keeps every statement issued on it, so that the store can wait for
 * those `work` did not await before it commits (Store.transaction), and learn which failed.
 */
export class IssuedStatements {
  private readonly issued: Promise<unknown>[] = [];
  private ended = false;
  readonly tx: Db;

  constructor(db: Db) {
    const keep = <T>(issue: () => Promise<T>): Promise<T> => {
      // After the work resolved, the store is committing: a statement now would land outside the transaction.
      if (this.ended) return Promise.reject(new Error('a statement was issued on a transaction whose work had already ended: await it, or issue it before the work resolves'));
      const statement = issue();
      statement.catch(() => undefined); // reported by end(), or to the work that awaits it
      this.issued.push(statement);
      return statement;
    };
    this.tx = {
      run: (sql, params) => keep(() => db.run(sql, params)),
      get: (sql, params) => keep(() => db.get(sql, params)),
      all: (sql, params) => keep(() => db.all(sql, params)),
    };
  }

  /**
   * Ends the transaction to statements (its work has resolved or failed): none may join it any
   * more. Then, once every statement issued has settled, the first one's error (in the order
   * issued), if any failed.
   */
  async end(): Promise<{ error: unknown } | undefined> {
    this.ended = true;
    const outcomes = await Promise.allSettled(this.issued);
    const failed = outcomes.find((o) => o.status === 'rejected');
    return failed ? { error: (failed as PromiseRejectedResult).reason } : undefined;
  }
}
