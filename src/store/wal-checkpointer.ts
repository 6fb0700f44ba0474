import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** Commits between asks for a background checkpoint: a few megabytes of WAL at most. */
export const CHECKPOINT_EVERY_COMMITS = 64;

/**
 * Under a steady stream of writes the background checkpoint always ends just behind the last
 * commit, and SQLite restarts the log only once a checkpoint has caught up with it. So when the
 * thread reports a log past this length, the writer copies the few frames committed while the
 * thread worked (the database file is already synced, so its sync is short) and the next commit
 * starts the log afresh.
 */
const WAL_RESTART_BYTES = 16 * 1024 * 1024;

/** What the thread may leave behind for the writer to copy on its own thread: the frames of tens of milliseconds. */
const WAL_CATCH_UP_BYTES = 4 * 1024 * 1024;

/**
 * Past this size the WAL file is checkpointed on the writer's own thread whatever the thread
 * reports (a thread that died or never catches up): the log's length stays bounded.
 */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;

/** The log lengths the checkpointer acts at: WAL_RESTART_BYTES, WAL_CATCH_UP_BYTES and WAL_LIMIT_BYTES by default. */
export interface WalSizes {
  restartBytes: number;
  catchUpBytes: number;
  limitBytes: number;
}

/** What the thread reports after each checkpoint: the log's length and what is not yet copied out of it. */
interface CheckpointReport {
  logBytes: number;
  backlogBytes: number;
}

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
  const pageSize = Number((db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  let asked = false;
  let working = false;
  const work = () => {
    working = true;
    while (asked) {
      asked = false;
      try {
        const { busy, log, checkpointed } = checkpoint.get() as { busy: number; log: number; checkpointed: number };
        if (!busy && log >= 0) parentPort!.postMessage({ logBytes: log * pageSize, backlogBytes: (log - checkpointed) * pageSize });
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
  /** Set by the thread's report: the writer's next commit is followed by a short checkpoint of its own. */
  private catchUp = false;

  private readonly sizes: WalSizes;

  constructor(
    private readonly path: string,
    /** Checkpoints on the writer's own thread (see `WAL_RESTART_BYTES` and `WAL_LIMIT_BYTES`). */
    private readonly checkpointHere: () => void,
    sizes: Partial<WalSizes> = {},
  ) {
    this.sizes = { restartBytes: WAL_RESTART_BYTES, catchUpBytes: WAL_CATCH_UP_BYTES, limitBytes: WAL_LIMIT_BYTES, ...sizes };
  }

  /** Called after each commit, outside any transaction: the only moment the writer may checkpoint. */
  committed(): void {
    if (this.closed) return;
    if (this.catchUp) {
      this.catchUp = false;
      this.checkpointHere();
    }
    if (++this.commits < CHECKPOINT_EVERY_COMMITS) return;
    this.commits = 0;
    this.thread().postMessage('checkpoint');
    if (this.walBytes() > this.sizes.limitBytes) this.checkpointHere();
  }

  /** The thread caught up with all but the last few frames of a long log: the writer copies those after its next commit, so that the log restarts. */
  private reported(report: CheckpointReport): void {
    this.catchUp = report.logBytes >= this.sizes.restartBytes && report.backlogBytes <= this.sizes.catchUpBytes;
  }

  private thread(): Worker {
    if (!this.worker) {
      this.worker = new Worker(`var __name = (f) => f;\n(${threadMain.toString()})()`, { eval: true, workerData: { path: this.path } });
      this.worker.unref();
      this.worker.on('message', (report: CheckpointReport) => this.reported(report));
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
