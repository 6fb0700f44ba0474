import type { Clock } from '../kernel/clock.ts';
import { VirtualClock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Db, Store } from '../store/db.ts';
import { JobRepository, type JobRow } from '../store/repositories/job-repository.ts';
import { claimSweep, liveBoots, raiseVirtualTime, readVirtualTime, removeHeartbeat, saveHeartbeat, saveVirtualTime } from '../store/runtime-state.ts';

export type JobHandler = (payload: any, job: { id: string; kind: string; runAt: number }) => Promise<void>;


/** How far an advance has got: jobs run, and jobs due by its target (run and still waiting). */
export interface AdvanceProgress {
  done: number;
  total: number;
}

/** How many jobs an advance runs between two counts of the jobs still due (the total grows as jobs schedule more). */
const RECOUNT_EVERY = 256;

export interface ScheduledJob {
  kind: string;
  runAt: number;
  payload: unknown;
}

/**
 * How long, in real time, a claimed job stays with the process that claimed it. On a shared
 * (PostgreSQL) database a live process renews its leases with every heartbeat, so this is also how
 * long a crashed process's claims outlive it.
 */
export const JOB_LEASE_MS = 30_000;

/** How often, in real time, a process on a shared database proves it is alive. */
export const HEARTBEAT_MS = 5_000;

/** How often, in real time, an advance looks again for due jobs other processes are running. */
const FLEET_WAIT_MS = 20;

/** How many jobs due at one instant a process claims in one write. */
const CLAIM_CHUNK = 32;

/**
 * Durable delayed work on the business clock: quote expiry, provider callbacks, status polls,
 * webhook retries. A job is written in the caller's transaction, so it exists exactly when the
 * state change that asked for it does. Jobs run in (run_at, creation) order, one at a time, at
 * least once: a crash between running and marking done runs the job again, so handlers are
 * idempotent.
 *
 * Running a job starts with claiming it: a lease in real time, in the name of this process's
 * boot, taken for up to CLAIM_CHUNK jobs due at the same instant at once. Only one process runs a
 * job while its lease holds; the lease of a process that died runs out and the job is due again
 * (at once, at start-up, for the boots of a database only one process uses). So several
 * instances can share one jobs table.
 */
export class Scheduler {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly tickHooks: (() => Promise<void>)[] = [];
  private readonly sweeps: (() => Promise<unknown>)[] = [];
  private sweeping = false;
  private running: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly repo: JobRepository;
  private beating: NodeJS.Timeout | undefined;
  /** Several processes may share the database (PostgreSQL): claims are leased and renewed. */
  private readonly shared: boolean;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      ids: IdGenerator;
      logger: Logger;
      /** Real time, for leases: business time may stand still or leap. */
      wallClock: Clock;
      /** This process's boot: the owner of the jobs it claims. */
      boot: number;
    },
  ) {
    this.shared = deps.store.kind === 'postgres';
    this.repo = new JobRepository(this.shared);
  }

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} is already registered`);
    this.handlers.set(kind, handler);
  }

  /**
   * Work to do before every look for due jobs, such as fanning committed outbox events out into
   * webhook deliveries (which are themselves jobs, due now).
   */
  onTick(hook: () => Promise<void>): void {
    this.tickHooks.push(hook);
  }

  async schedule(db: Db, job: ScheduledJob): Promise<string> {
    const id = this.deps.ids.next('job');
    await this.repo.insert(db, { id, kind: job.kind, runAt: Math.round(job.runAt), payload: JSON.stringify(job.payload), now: this.deps.clock.now() });
    return id;
  }

  /** Runs every job due at the current time, including ones that running jobs schedule. */
  runDue(): Promise<number> {
    return this.exclusive(async () => {
      await this.syncClock();
      return this.drain(this.deps.clock.now());
    });
  }

  /**
   * Brings a virtual clock up to the fleet's shared time (on a shared database; a no-op on SQLite,
   * where this process's clock is the only one). Called at the start of every request and every
   * look for due jobs, so an advance another instance finished is seen before the next timestamp.
   */
  async syncClock(): Promise<void> {
    const clock = this.deps.clock;
    if (!this.shared || !(clock instanceof VirtualClock)) return;
    const shared = await readVirtualTime(this.deps.store);
    if (shared !== null && shared > clock.now()) clock.set(shared);
  }

  /**
   * Moves a virtual clock forward, stopping at each job that falls due on the way so that every
   * job sees the time it was scheduled for, in order.
   *
   * On a shared database the clock is the fleet's: the advance starts from the shared time, raises
   * it at each stop (other instances' schedulers help with the jobs due there, each claimed once),
   * and answers only when every job due by the target is done, wherever it ran.
   *
   * `onProgress` hears how far it got: first with done 0, then after every job, last with done
   * equal to total. The total is an indexed count of the jobs due by the target, counted again
   * every RECOUNT_EVERY jobs and whenever done reaches it, since running jobs schedule more.
   */
  advanceBy(ms: number, onProgress?: (p: AdvanceProgress) => void): Promise<number> {
    const clock = this.deps.clock;
    if (!(clock instanceof VirtualClock)) throw new Error('only a virtual clock can be advanced');
    return this.exclusive(async () => {
      await this.syncClock();
      const target = clock.now() + ms;
      let ran = 0;
      let total = 0;
      const count = async () => {
        if (onProgress) total = Math.max(total, ran + (await this.repo.pendingThrough(this.deps.store, target)));
      };
      await count();
      onProgress?.({ done: 0, total });
      for (;;) {
        const next = await this.nextDue(target);
        if (next) {
          if (next.run_at > clock.now()) {
            if (this.shared) await raiseVirtualTime(this.deps.store, next.run_at);
            clock.set(next.run_at);
          }
          await this.execute(next);
          ran++;
          if (onProgress) {
            if (ran >= total || ran % RECOUNT_EVERY === 0) await count();
            onProgress({ done: ran, total: Math.max(total, ran) });
          }
          continue;
        }
        // Nothing this process may claim: wait for the due jobs other instances are running.
        if (!this.shared || (await this.repo.pendingThrough(this.deps.store, target)) === 0) break;
        await new Promise((done) => setTimeout(done, FLEET_WAIT_MS));
      }
      if (this.shared) {
        await raiseVirtualTime(this.deps.store, target);
        await this.syncClock();
      } else {
        clock.set(target);
        // A restart on this database resumes business time here.
        await saveVirtualTime(this.deps.store, target);
      }
      onProgress?.({ done: ran, total: ran });
      return ran;
    });
  }

  /** How many jobs fall due within `ms` of business time from now: an indexed count, not a load. */
  async dueWithin(ms: number): Promise<number> {
    await this.syncClock();
    return this.repo.pendingThrough(this.deps.store, this.deps.clock.now() + ms);
  }

  /** How many jobs wait, and when the next falls due: counted, not loaded. */
  async pending(): Promise<{ count: number; nextRunAt: number | null }> {
    const row = await this.repo.pendingSummary(this.deps.store);
    return { count: row?.count ?? 0, nextRunAt: row?.next ?? null };
  }

  /**
   * Joins the database at start-up; the number of claims freed. On SQLite one process owns the
   * database, so every earlier boot's claims died with it and are freed at once. On a shared
   * (PostgreSQL) database this process starts its heartbeat and frees only the claims of boots
   * whose heartbeat stopped: a live instance keeps its claims, and a crashed one's are taken over
   * when its lease runs out (at most JOB_LEASE_MS after its last heartbeat).
   */
  async join(): Promise<number> {
    const { store, boot } = this.deps;
    if (!this.shared) return this.repo.releaseClaimsNotOf(store, [boot]);
    await this.heartbeat();
    if (!this.beating) {
      this.beating = setInterval(() => {
        this.heartbeat().catch((err) => this.deps.logger.error('heartbeat failed', { error: String(err) }));
      }, HEARTBEAT_MS);
      this.beating.unref();
    }
    return this.repo.releaseClaimsNotOf(store, [boot, ...(await this.liveBoots())]);
  }

  /**
   * The other boots alive on a shared database (heartbeat within the lease): their claims and
   * in-flight requests are theirs. Always none on SQLite, where one process owns the database.
   */
  async liveBoots(): Promise<number[]> {
    if (!this.shared) return [];
    const live = await liveBoots(this.deps.store, this.deps.wallClock.now() - JOB_LEASE_MS);
    return live.filter((b) => b !== this.deps.boot);
  }

  /** Leaves a shared database on a clean stop: the heartbeat ends and the jobs it held are free at once. */
  async leave(): Promise<void> {
    if (this.beating) clearInterval(this.beating);
    this.beating = undefined;
    if (!this.shared) return;
    await removeHeartbeat(this.deps.store, this.deps.boot);
    await this.repo.releaseClaimsOf(this.deps.store, this.deps.boot);
  }

  /**
   * Work for one instance of the fleet to do every heartbeat or so, such as recovering what dead
   * instances left in flight. Only on a shared database; one instance at a time does it.
   */
  onSweep(work: () => Promise<unknown>): void {
    this.sweeps.push(work);
  }

  /** Proves this instance alive (renewing its leases), and takes the sweep when it is free (a shared database only). */
  async heartbeat(): Promise<void> {
    if (!this.shared) return;
    const { store, boot, wallClock, logger } = this.deps;
    const now = wallClock.now();
    await saveHeartbeat(store, boot, now);
    await this.repo.extendLeases(store, boot, now + JOB_LEASE_MS);
    if (this.sweeping || this.sweeps.length === 0 || !(await claimSweep(store, now, now + HEARTBEAT_MS - 1))) return;
    this.sweeping = true;
    try {
      for (const sweep of this.sweeps) await sweep().catch((err) => logger.error('sweep failed', { error: String(err) }));
    } finally {
      this.sweeping = false;
    }
  }

  /** Polls for due jobs in the background (the served sandbox; tests drive runDue/advanceBy). */
  start(intervalMs = 200): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.runDue().catch((err) => this.deps.logger.error('scheduler tick failed', { error: String(err) }));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async drain(until: number): Promise<number> {
    let ran = 0;
    for (;;) {
      const next = await this.nextDue(until);
      if (!next) return ran;
      await this.execute(next);
      ran++;
    }
  }

  /** The next due job this process has claimed, after the tick hooks ran. */
  private async nextDue(until: number): Promise<JobRow | undefined> {
    for (const hook of this.tickHooks) await hook();
    const { store, wallClock, boot } = this.deps;
    for (;;) {
      const now = wallClock.now();
      // The next job in (run_at, seq) order that is free, or already claimed by this process.
      const job = await this.repo.nextClaimable(store, until, now, boot);
      if (!job) return undefined;
      if (job.claimed_by === boot && job.lease_until !== null && job.lease_until - now > JOB_LEASE_MS / 2) return job;
      // Claim it with the jobs due at the same instant after it: one write for a run of jobs, and
      // the order is unchanged, since jobs due later wait behind any a running job schedules now.
      const claimed = await this.repo.claimDueAt(store, job.run_at, now, boot, now + JOB_LEASE_MS, CLAIM_CHUNK);
      if (claimed.some((c) => c.id === job.id)) return job;
      // Another process claimed it between the two statements: look again.
    }
  }

  private async execute(job: JobRow): Promise<void> {
    const handler = this.handlers.get(job.kind);
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(JSON.parse(job.payload), { id: job.id, kind: job.kind, runAt: job.run_at });
      await this.repo.markDone(this.deps.store, job.id);
    } catch (err) {
      this.deps.logger.error('job failed', { job: job.id, kind: job.kind, error: String(err) });
      await this.repo.markFailed(this.deps.store, job.id, String(err).slice(0, 500));
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.running.then(work);
    this.running = result.catch(() => undefined);
    return result;
  }
}
