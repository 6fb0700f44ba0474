import type { Clock } from '../kernel/clock.ts';
import type { Logger } from '../kernel/logger.ts';
import type { AdvanceProgress } from '../scheduler/scheduler.ts';

export type AdvanceState = 'running' | 'succeeded' | 'failed';

/** A clock advance running in the background, as its resource shows it. */
export interface ClockAdvance {
  id: string;
  state: AdvanceState;
  seconds: number;
  /** Business time when it started, and the time it moves the clock to. */
  from: number;
  to: number;
  done: number;
  total: number;
  /** Real time: when it was asked for, and when it ended. */
  startedAt: number;
  finishedAt: number | null;
  error: string | null;
}

/** How many ended advances are kept for their followers to read. */
const KEEP_ENDED = 100;

/**
 * The advances this process runs in the background, so that a long one can be followed. They
 * live in memory: an advance belongs to the process that runs it, and the jobs it runs are
 * durable anyway (a restart resumes business time at the last job that ran).
 */
export class ClockAdvances {
  private readonly advances = new Map<string, ClockAdvance>();
  private readonly listeners = new Map<string, Set<(a: ClockAdvance) => void>>();
  private serial = 0;

  constructor(
    private readonly deps: {
      clock: Clock;
      /** Real time, for started_at and finished_at. */
      wallClock: Clock;
      logger: Logger;
      /** This process's boot: advance ids never repeat across restarts on one database. */
      boot: number;
      advanceBy(ms: number, onProgress: (p: AdvanceProgress) => void): Promise<number>;
    },
  ) {}

  /** Starts advancing by `seconds` in the background; `expected` is the jobs due by the target now. */
  start(seconds: number, expected: number): ClockAdvance {
    const ms = Math.round(seconds * 1000);
    const from = this.deps.clock.now();
    const advance: ClockAdvance = {
      id: `adv_${this.deps.boot}_${++this.serial}`,
      state: 'running',
      seconds,
      from,
      to: from + ms,
      done: 0,
      total: expected,
      startedAt: this.deps.wallClock.now(),
      finishedAt: null,
      error: null,
    };
    this.advances.set(advance.id, advance);
    let started = false;
    this.deps
      .advanceBy(ms, (p) => {
        // Another advance may have run first: this one starts from where that one left the clock.
        if (!started) {
          started = true;
          advance.from = this.deps.clock.now();
          advance.to = advance.from + ms;
        }
        advance.done = p.done;
        advance.total = p.total;
        this.notify(advance);
      })
      .then(
        (ran) => {
          advance.done = ran;
          advance.total = ran;
          advance.state = 'succeeded';
        },
        (err: unknown) => {
          advance.state = 'failed';
          advance.error = err instanceof Error ? err.message : String(err);
          this.deps.logger.error('clock advance failed', { advance: advance.id, error: advance.error });
        },
      )
      .finally(() => {
        advance.finishedAt = this.deps.wallClock.now();
        this.notify(advance);
        this.listeners.delete(advance.id);
        this.forgetOld();
      });
    return advance;
  }

  get(id: string): ClockAdvance | undefined {
    return this.advances.get(id);
  }

  /** Calls `listener` on every change of the advance until it ends; returns the unsubscribe. */
  follow(id: string, listener: (a: ClockAdvance) => void): () => void {
    const set = this.listeners.get(id) ?? new Set();
    set.add(listener);
    this.listeners.set(id, set);
    return () => set.delete(listener);
  }

  private notify(advance: ClockAdvance): void {
    for (const listener of this.listeners.get(advance.id) ?? []) listener(advance);
  }

  private forgetOld(): void {
    const ended = [...this.advances.values()].filter((a) => a.state !== 'running');
    for (const a of ended.slice(0, Math.max(0, ended.length - KEEP_ENDED))) this.advances.delete(a.id);
  }
}
