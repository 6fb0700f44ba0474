/** What `Atomics.waitAsync` answers (Node has it; the TypeScript lib this project targets does not declare it). */
type AsyncWait = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync(cells: Int32Array, index: number, value: number): AsyncWait }).waitAsync;

const NEXT = 0;
const SERVING = 1;

/**
 * Turns at writing one SQLite file, shared by the threads of one process that each hold a
 * connection to it (the served sandbox's job thread beside the request thread): a ticket lock in
 * shared memory, first come first served. Without it a second writer gets SQLITE_BUSY, and
 * SQLite's busy handler sleeps the waiting thread, event loop and all. Here a waiting thread
 * keeps serving its event loop: its turn is a promise.
 */
export class WriteTurn {
  private readonly cells: Int32Array;

  /** `buffer`: the lock's memory, from the WriteTurn of another thread (workerData), or fresh. */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)) {
    this.cells = new Int32Array(buffer);
  }

  /** Resolves when this thread may write: each caller is served in the order it asked. */
  async take(): Promise<void> {
    const ticket = Atomics.add(this.cells, NEXT, 1);
    for (;;) {
      const serving = Atomics.load(this.cells, SERVING);
      if (serving === ticket) return;
      const wait = waitAsync(this.cells, SERVING, serving);
      if (!wait.async) continue;
      // A pending waitAsync does not keep a thread alive on its own (a worker with nothing else
      // to do would exit while it waits): this timer does, for as long as the wait lasts.
      const alive = setInterval(() => undefined, 1 << 30);
      try {
        await wait.value;
      } finally {
        clearInterval(alive);
      }
    }
  }

  /** Hands the turn to the next in line (call once per take, when the write is committed or undone). */
  give(): void {
    Atomics.add(this.cells, SERVING, 1);
    Atomics.notify(this.cells, SERVING);
  }
}
