// Counts the statements each HTTP request makes the store run, and the rows they read or wrote:
// a Store decorator (AppOptions.wrapStore) plus a request listener that gives every request its
// own scope (AsyncLocalStorage), so background work (heartbeats, jobs) and other requests (the
// mocks an adapter calls over HTTP) are not counted against it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Db, SqlValue, Store, TransactionOptions } from '../../src/store/db.ts';

export interface Statement {
  sql: string;
  /** Rows a read returned, or rows a write changed. */
  rows: number;
  /** get or all, rather than run. */
  read: boolean;
  params: SqlValue[];
}

/** What one request made the store do. */
export interface RequestStatements {
  method: string;
  path: string;
  statements: Statement[];
  transactions: number;
}

/**
 * Names the requests a statement writes for when one statement writes for several (the requests
 * inspector's batch of entries): each as method and path, in the order written; undefined for
 * any other statement.
 */
export type SharedWrite = (sql: string, params: SqlValue[]) => { method: string; path: string }[] | undefined;

interface Scope extends RequestStatements {
  inflight: number;
  closed: boolean;
  /** A shared write has carried this request's part. */
  shared: boolean;
  /** Called whenever inflight or closed changes. */
  changed?: () => void;
}

/** A scope with nothing counted yet. */
function newScope(method: string, path: string): Scope {
  return { method, path, statements: [], transactions: 0, inflight: 0, closed: false, shared: false };
}

/** One line per statement, whitespace collapsed: readable in a failing diff. */
export function oneLine(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim();
}

export class StatementCounter {
  private readonly scope = new AsyncLocalStorage<Scope>();
  /** Every request served, in arrival order. */
  readonly requests: RequestStatements[] = [];
  /** Statements and transactions in flight, counted in any scope or none. */
  private busy = 0;
  /** Waiters for `busy` to reach zero. */
  private readonly wakers = new Set<() => void>();

  /**
   * `sharedWrite` names the statements that write for several requests at once: each request it
   * names is counted one such statement (one row) as if it had written alone, whichever request's
   * turn sent it. Without it, a batch counts against the request that sent it.
   */
  constructor(private readonly sharedWrite?: SharedWrite) {}

  /** The decorator for AppOptions.wrapStore. */
  readonly wrapStore = (store: Store): Store => {
    const counted = (db: Db, fixed?: Scope): Db => ({
      run: (sql: string, params?: SqlValue[]) =>
        this.note(
          fixed,
          sql,
          params,
          false,
          () => db.run(sql, params),
          (r) => r.changes,
        ),
      get: <T>(sql: string, params?: SqlValue[]) =>
        this.note(
          fixed,
          sql,
          params,
          true,
          () => db.get<T>(sql, params),
          (r) => (r === undefined ? 0 : 1),
        ),
      all: <T>(sql: string, params?: SqlValue[]) =>
        this.note(
          fixed,
          sql,
          params,
          true,
          () => db.all<T>(sql, params),
          (r) => r.length,
        ),
    });
    const outer = counted(store);
    return {
      kind: store.kind,
      run: outer.run,
      get: outer.get,
      all: outer.all,
      close: () => store.close(),
      transaction: <T>(work: (tx: Db) => Promise<T>, options?: TransactionOptions): Promise<T> => {
        // A group commit may run `work` from another request's turn: its statements stay with the caller.
        const caller = this.scope.getStore();
        if (caller) caller.transactions++;
        return this.track(caller, () => store.transaction((tx) => work(counted(tx, caller)), options));
      },
    };
  };

  /** Serves `app` with each request in its own counting scope. */
  listener(app: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      const scope = newScope(req.method ?? '', (req.url ?? '').split('?')[0]!);
      this.requests.push(scope);
      res.on('close', () => {
        scope.closed = true;
        scope.changed?.();
      });
      this.scope.run(scope, () => app(req, res));
    };
  }

  /** Runs `work` in a scope of its own: the statements it issued until it resolved. */
  async within<T>(label: string, work: () => Promise<T>): Promise<{ result: T; statements: RequestStatements }> {
    const scope = newScope('RUN', label);
    const result = await this.scope.run(scope, work);
    return { result, statements: { method: scope.method, path: label, statements: [...scope.statements], transactions: scope.transactions } };
  }

  /**
   * The statements of the last request to `method path`, once it is over: answered, and done with
   * whatever it still ran after answering (the requests inspector notes a mock call on close).
   */
  async last(method: string, path: string | RegExp): Promise<RequestStatements> {
    const matches = (r: RequestStatements) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path));
    const found = [...this.requests].reverse().find(matches) as Scope | undefined;
    if (!found) throw new Error(`no request ${method} ${path} was served`);
    return this.finished(found);
  }

  /** Every request served so far (the mocks the adapters called, callbacks sent over HTTP), each once it is over. */
  async served(): Promise<RequestStatements[]> {
    const all: RequestStatements[] = [];
    for (const scope of [...this.requests] as Scope[]) all.push(await this.finished(scope));
    return all;
  }

  /**
   * Waits for `found` to be answered and for the store to fall idle. A request's work after its
   * answer may wait behind another scope's statement without one of its own in flight (the
   * requests inspector's entry queues behind the batch on its way), so its own count reaching
   * zero does not say it is done; the store idle does.
   */
  private async finished(found: Scope): Promise<RequestStatements> {
    const method = found.method;
    const deadline = Date.now() + 30_000;
    const done = () => found.closed && found.inflight === 0 && this.busy === 0;
    for (;;) {
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`${method} ${found.path} never finished its statements`);
        await new Promise<void>((wake) => {
          found.changed = wake;
          this.wakers.add(wake);
          setTimeout(wake, 100);
        });
      }
      // One more turn: a statement issued by a continuation of the last one.
      await new Promise((turn) => setImmediate(turn));
      if (done()) break;
    }
    return { method: found.method, path: found.path, statements: found.statements, transactions: found.transactions };
  }

  private note<R>(fixed: Scope | undefined, sql: string, params: SqlValue[] = [], read: boolean, run: () => Promise<R>, rows: (result: R) => number): Promise<R> {
    const scope = fixed ?? this.scope.getStore();
    const statement: Statement = { sql: oneLine(sql), rows: 0, read, params: [...params] };
    const carried = this.sharedWrite?.(statement.sql, statement.params);
    if (carried) {
      // The earliest answered request of each method and path not yet counted one.
      for (const { method, path } of carried) {
        const owner = (this.requests as Scope[]).find((r) => r.closed && !r.shared && r.method === method && r.path === path);
        if (owner) {
          owner.shared = true;
          owner.statements.push({ ...statement, rows: 1 });
        }
      }
    } else scope?.statements.push(statement);
    return this.track(scope, async () => {
      const result = await run();
      statement.rows = rows(result);
      return result;
    });
  }

  private async track<R>(scope: Scope | undefined, work: () => Promise<R>): Promise<R> {
    this.busy++;
    if (scope) scope.inflight++;
    try {
      return await work();
    } finally {
      this.busy--;
      if (scope) {
        scope.inflight--;
        scope.changed?.();
      }
      if (this.busy === 0) {
        for (const wake of this.wakers) wake();
        this.wakers.clear();
      }
    }
  }
}
