import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** Commits between asks for a background checkpoint: a few megabytes of WAL at most. */
export const CHECKPOINT_EVERY_COMMITS = 64;

/**
 * Past this size the WAL is checkpointed on the writer's own thread, as SQLite's autocheckpoint
 * would: under a steady stream of writes the background checkpoint can keep falling just behind
 * the last commit, and the log is restarted only when it catches up.
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The body of the thread, sent as source (it imports nothing of ours). Its own connection to the
 * database copies committed WAL frames into the database file and syncs it (a PASSIVE checkpoint:
 * it never blocks the writer or a reader). Asks that arrive while it works fold into the next one.
 */
function threadMain(): void {
  const req = require as (id: string) => unknown;
  const { parentPort, workerData } = req('node:worker_threads') as typeof import('node:worker_threads');
  const { DatabaseSync } = req('node:sqlite') as typeof import('node:sqlite');
  const db = new DatabaseSync((workerData as { path: string }).path);
  db.exec('PRAGMA busy_timeout = 5000');
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let asked = false;
  let working = false;
  const work = () => {
    working = true;
    while (asked) {
      asked = false;
      try {
        checkpoint.get();
      } catch {
        // Busy or interrupted: the next ask tries again, and the writer's own limit bounds the log.
      }
    }
    working = false;
  };
  parentPort!.on('message', (message: 'checkpoint' | 'close') => {
    if (message === 'close') {
      db.close();
      parentPort!.close();
      return;
    }
    asked = true;
    if (!working) setImmediate(work);
  });
}

/**
 * Checkpoints a SQLite database's write-ahead log on a thread of its own, so that the writer's
 * commits never stop to copy pages and sync the database file (SQLite's autocheckpoint does that
 * inside the commit that crosses the limit: tens of milliseconds every few thousand commits). The
 * writer turns autocheckpoint off and calls `committed()` after each commit.
 */
export class WalCheckpointer {
  /** Started at the first ask: a store that commits little (most tests' stores) never starts one. */
  private worker: Worker | undefined;
  private commits = 0;
  private closed = false;

  constructor(
    private readonly path: string,
    /** Checkpoints on the writer's thread when the log outgrows WAL_LIMIT_BYTES. */
    private readonly checkpointHere: () => void,
  ) {}

  committed(): void {
    if (++this.commits < CHECKPOINT_EVERY_COMMITS || this.closed) return;
    this.commits = 0;
    this.thread().postMessage('checkpoint');
    if (this.walBytes() > WAL_LIMIT_BYTES) this.checkpointHere();
  }

  private thread(): Worker {
    if (!this.worker) {
      this.worker = new Worker(`var __name = (f) => f;\n(${threadMain.toString()})()`, { eval: true, workerData: { path: this.path } });
      this.worker.unref();
      // A thread that fails leaves the writer to checkpoint by size alone: nothing is lost.
      this.worker.on('error', () => undefined);
    }
    return this.worker;
  }

  private walBytes(): number {
    try {
      return statSync(`${this.path}-wal`).size;
    } catch {
      return 0;
    }
  }

  /** Closes the thread's connection first, so that the writer's close is the last and cleans the log up. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((done) => worker.once('exit', () => done()));
    worker.postMessage('close');
    await Promise.race([exited, new Promise<void>((done) => setTimeout(done, 2_000).unref())]);
    await worker.terminate();
  }
}
