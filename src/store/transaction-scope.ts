import { AsyncLocalStorage } from 'node:async_hooks';

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
