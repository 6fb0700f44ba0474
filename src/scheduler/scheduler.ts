import { DEFAULT_JOB_CONCURRENCY } from '../config/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { VirtualClock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { inJobScope, type JobScope } from '../kernel/job-scope.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Db, Store } from '../store/db.ts';
import { JobRepository, OUTBOUND_LANE, WORK_LANE, type JobRow } from '../store/repositories/job-repository.ts';
import { claimAdvanceTurn, claimSweep, liveBoots, raiseVirtualTime, releaseAdvanceTurn, readVirtualTime, removeHeartbeat, saveHeartbeat, saveVirtualTime } from '../store/runtime-state.ts';

export type JobHandler = (payload: any, job: { id: string; kind: string; runAt: number; partition: string | null }) => Promise<void>;

export interface ScheduledJob {
  kind: string;
  runAt: number;
  payload: unknown;
  /**
   * The object the job acts on (a charge's id, a quote's, `endpoint:<id>` for deliveries): the
   * jobs of one object run one at a time, in order; different objects run side by side. Without
   * one, the job is an object of its own.
   */
  partition?: string;
  /**
   * 'outbound': the job waits on a merchant's endpoint (a webhook delivery). Outbound jobs have a
   * lane of their own in each round, so they are sent while the jobs beside them run.
   */
  lane?: 'outbound';
}

/** How far an advance has got: jobs run, of the jobs due by its target known so far. */
export interface AdvanceProgress {
  done: number;
  total: number;
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
/** How often, in real time, an advance waiting for another instance's to end looks again. */
const ADVANCE_TURN_WAIT_MS = 50;

/**
 * How many due jobs a process claims in one write: a round. A constant, not a multiple of the
 * concurrency: a serial run and a concurrent one cut the same rounds, so they run the same jobs
 * in the same order and draw the same ids.
 */
export const ROUND_SIZE = 256;

/**
 * The outbound lane's share of a round. Its jobs wait on the wire, not on this thread, and each
 * callback causes two of them or more (a charge's pending and final webhooks): at ROUND_SIZE a
 * round sent fewer deliveries than its callbacks caused, and under load they queued for seconds.
 */
const OUTBOUND_ROUND_SIZE = 4 * ROUND_SIZE;

/** How many jobs of each lane a round holds at most, by lane id. */
const LANE_ROUND_SIZE = [ROUND_SIZE, OUTBOUND_ROUND_SIZE];

/**
 * Durable delayed work on the business clock: quote expiry, provider callbacks, status polls,
 * webhook retries. A job is written in the caller's transaction, so it exists exactly when the
 * state change that asked for it does. Jobs run at least once: a crash between running and
 * marking done runs the job again, so handlers are idempotent.
 *
 * Jobs run in rounds: up to ROUND_SIZE due jobs of the work lane and OUTBOUND_ROUND_SIZE of the
 * outbound lane, each lane claimed in one write, in (run_at, seq) order. On
 * a virtual clock a round holds the jobs of one instant, the clock stands at it, and every job
 * sees its own run_at as the time. Within a round the jobs of one partition (the object they act
 * on) run one after another in that order; different partitions run side by side, up to
 * `concurrency` jobs in flight. What they leave is the same as a serial run's: each job draws its
 * ids from a stream forked from its own identity, and its store transactions wait for the jobs
 * before it in the round to finish (JobScope), so rows, sequences and events land in round order.
 * The network calls, parsing and signing of the round's jobs overlap; concurrency 1 runs them one
 * at a time.
 *
 * On a shared database (PostgreSQL) running a job starts with claiming it: a lease in real time,
 * in the name of this process's boot. Only one process runs a job while its lease holds; the lease
 * of a process that died runs out and the job is due again. So several instances can share one
 * jobs table. On a database only this process uses (SQLite) a round is read, not claimed: the
 * scheduler runs one round at a time and holds its jobs until they are marked, and a crash leaves
 * them pending, to run again at the next start.
 */
export class Scheduler {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly tickHooks: (() => Promise<void>)[] = [];
  private readonly sweeps: (() => Promise<unknown>)[] = [];
  private sweeping = false;
  private running: Promise<unknown> = Promise.resolve();
  /** The advances asked for on this instance, one after another (on a shared database). */
  private advanceQueue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** stop() is waiting for the work in hand: a drain ends at its next round. */
  private stopping = false;
  private readonly repo: JobRepository;
  private beating: NodeJS.Timeout | undefined;
  /** Several processes may share the database (PostgreSQL): claims are leased and renewed. */
  private readonly shared: boolean;
  private readonly concurrency: number;
  /** Rounds run by this process: part of each job's place in the order (timeline entries sort by it). */
  private rounds = 0;

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
      /** Jobs in flight at once (scheduler.concurrency); 1 is serial. */
      concurrency?: number;
      /** Other processes may use the database: jobs are claimed with leases. Default: on PostgreSQL. */
      shared?: boolean;
    },
  ) {
    this.shared = deps.shared ?? deps.store.kind === 'postgres';
    this.concurrency = deps.concurrency ?? DEFAULT_JOB_CONCURRENCY;
    this.repo = new JobRepository(deps.store.kind === 'postgres');
  }

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} is already registered`);
    this.handlers.set(kind, handler);
  }

  /**
   * Work to do before every round of due jobs, such as fanning committed outbox events out into
   * webhook deliveries (which are themselves jobs, due now).
   */
  onTick(hook: () => Promise<void>): void {
    this.tickHooks.push(hook);
  }

  async schedule(db: Db, job: ScheduledJob): Promise<string> {
    const id = this.deps.ids.next('job');
    // Outside a transaction, still one: a job's writes take their turn in its round (JobScope),
    // so jobs are inserted, and numbered, in the same order in a serial and a concurrent run.
    if (db === this.deps.store) return this.deps.store.transaction((tx) => this.insert(tx, id, job));
    return this.insert(db, id, job);
  }

  private async insert(db: Db, id: string, job: ScheduledJob): Promise<string> {
    await this.repo.insert(db, {
      id,
      kind: job.kind,
      runAt: Math.round(job.runAt),
      payload: JSON.stringify(job.payload),
      partition: job.partition ?? null,
      lane: job.lane === 'outbound' ? OUTBOUND_LANE : WORK_LANE,
      now: this.deps.clock.now(),
    });
    return id;
  }

  /**
   * Runs every job due at the current time, including ones that running jobs schedule. The time is
   * read again before each round: on the system clock a delivery the fan-out made just now is due
   * in the next round, not at the next poll, so a callback's webhook follows it within rounds.
   */
  runDue(): Promise<number> {
    return this.exclusive(async () => {
      await this.syncClock();
      return this.drain(() => this.deps.clock.now());
    });
  }

  /**
   * Brings a virtual clock up to the fleet's shared time (on a shared database; a no-op on SQLite,
   * where this process's clock is the only one). Called at the start of every request and every
   * look for due jobs, so an advance another instance finished is seen before the next timestamp.
   */
  async syncClock(): Promise<void> {
    if (!this.shared || !(this.deps.clock instanceof VirtualClock)) return;
    this.adoptSharedTime(await readVirtualTime(this.deps.store));
  }

  /** Brings a virtual clock up to the fleet's time read elsewhere (the request's one read of the fleet's state). */
  adoptSharedTime(shared: number | null): void {
    const clock = this.deps.clock;
    if (shared !== null && clock instanceof VirtualClock && shared > clock.now()) clock.set(shared);
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
   * at each round, since running jobs schedule more.
   */
  advanceBy(ms: number, onProgress?: (progress: AdvanceProgress) => void): Promise<number> {
    const clock = this.deps.clock;
    if (!(clock instanceof VirtualClock)) throw new Error('only a virtual clock can be advanced');
    const advance = () => this.exclusive(() => this.advance(clock, ms, onProgress));
    if (!this.shared) return advance();
    // One advance at a time in the fleet: a second one, here or on another instance, waits for
    // the turn and starts from where the first left the shared clock, so the two add up.
    const turn = this.advanceQueue.then(() => this.inAdvanceTurn(advance));
    this.advanceQueue = turn.catch(() => undefined);
    return turn;
  }

  private async inAdvanceTurn<T>(work: () => Promise<T>): Promise<T> {
    const { store, boot } = this.deps;
    while ((await claimAdvanceTurn(store, boot, await this.liveBoots())) !== null) await new Promise((done) => setTimeout(done, ADVANCE_TURN_WAIT_MS));
    try {
      return await work();
    } finally {
      await releaseAdvanceTurn(store, boot).catch((err: unknown) => this.deps.logger.warn('clock advance: turn not given back', { error: String(err) }));
    }
  }

  private async advance(clock: VirtualClock, ms: number, onProgress?: (progress: AdvanceProgress) => void): Promise<number> {
    await this.syncClock();
    const target = clock.now() + ms;
    const { store, wallClock, boot } = this.deps;
    let ran = 0;
    let total = onProgress ? await this.repo.pendingThrough(store, target) : 0;
    onProgress?.({ done: 0, total });
    for (;;) {
      await this.tick();
      const next = this.shared ? await this.repo.nextDueAt(store, target, wallClock.now(), boot) : await this.repo.nextDueAtOwned(store, target);
      if (next !== undefined) {
        if (next > clock.now()) {
          if (this.shared) await raiseVirtualTime(store, next);
          clock.set(next);
        }
        const round = await this.claimRound(clock.now());
        if (onProgress && round.length > 0) total = Math.max(total, ran + (await this.repo.pendingThrough(store, target)));
        ran += await this.runRound(round, onProgress && ((done) => onProgress({ done: ran + done, total: Math.max(total, ran + done) })));
        continue;
      }
      // Nothing this process may claim: wait for the due jobs other instances are running.
      if (!this.shared || (await this.repo.pendingThrough(store, target)) === 0) break;
      await new Promise((done) => setTimeout(done, FLEET_WAIT_MS));
    }
    if (this.shared) {
      await raiseVirtualTime(store, target);
      await this.syncClock();
    } else {
      clock.set(target);
      // A restart on this database resumes business time here.
      await saveVirtualTime(store, target);
    }
    onProgress?.({ done: ran, total: ran });
    return ran;
  }

  /** How many jobs fall due within `ms` of business time from now: an indexed count, not a load. */
  async dueWithin(ms: number): Promise<number> {
    await this.syncClock();
    return this.repo.pendingThrough(this.deps.store, this.deps.clock.now() + ms);
  }

  /** Whether any job waits, due or not: one indexed read. */
  hasPending(): Promise<boolean> {
    return this.repo.anyPending(this.deps.store);
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
    await store.holdPresence?.(boot);
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
   * The other boots alive on a shared database (heartbeat within the lease and, on PostgreSQL,
   * their presence session open): their claims and
   * in-flight requests are theirs. Always none on SQLite, where one process owns the database.
   */
  async liveBoots(): Promise<number[]> {
    if (!this.shared) return [];
    const { store } = this.deps;
    const live = await liveBoots(store, this.deps.wallClock.now() - JOB_LEASE_MS);
    // A store that knows which processes hold their session open knows a killed one dead at once,
    // without waiting out its heartbeat's lease.
    const present = store.presentBoots ? new Set(await store.presentBoots()) : undefined;
    return live.filter((b) => b !== this.deps.boot && (present === undefined || present.has(b)));
  }

  /** Leaves a shared database on a clean stop: the heartbeat ends and the jobs it held are free at once. */
  async leave(): Promise<void> {
    if (this.beating) clearInterval(this.beating);
    this.beating = undefined;
    if (!this.shared) return;
    await removeHeartbeat(this.deps.store, this.deps.boot);
    await this.repo.releaseClaimsOf(this.deps.store, this.deps.boot);
    await releaseAdvanceTurn(this.deps.store, this.deps.boot);
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

  /**
   * Polls for due jobs in the background (the served sandbox; tests drive runDue/advanceBy). Every
   * 50 ms: on the system clock a job runs at most that long after it falls due (an idle look is
   * two indexed reads), so a webhook follows its callback well within a second.
   */
  start(intervalMs = 50): void {
    if (this.timer) return;
    // A look still running (a long round) is not queued behind: the next tick after it looks again.
    let looking = false;
    this.timer = setInterval(() => {
      if (looking) return;
      looking = true;
      this.runDue()
        .catch((err) => this.deps.logger.error('scheduler tick failed', { error: String(err) }))
        .finally(() => (looking = false));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    // A drain under sustained load could go on for as long as the load: it ends at its next round.
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      await this.running;
    } finally {
      this.stopping = false;
    }
  }

  /** Rounds of the jobs due by `until()`, until none is left, or the scheduler stops. */
  private async drain(until: () => number): Promise<number> {
    let ran = 0;
    while (!this.stopping) {
      await this.tick();
      const round = await this.claimRound(until());
      if (round.length === 0) break;
      ran += await this.runRound(round);
    }
    return ran;
  }

  /** The tick hooks, once before each round (not before each job: they look at the whole outbox). */
  private async tick(): Promise<void> {
    for (const hook of this.tickHooks) await hook();
  }

  /**
   * Claims the next round: up to LANE_ROUND_SIZE free jobs of each lane due by `dueBy`, the work
   * lane's first, each lane in (run_at, seq) order. On a database only this process uses, reads
   * it: rounds run one at a time and a round's jobs are marked before the next is read, so none
   * runs twice, and nothing is written for the claim.
   */
  private async claimRound(dueBy: number): Promise<JobRow[]> {
    const work = await this.claimLane(dueBy, WORK_LANE);
    return [...work, ...(await this.claimLane(dueBy, OUTBOUND_LANE))];
  }

  private claimLane(dueBy: number, lane: number): Promise<JobRow[]> {
    const size = LANE_ROUND_SIZE[lane]!;
    if (!this.shared) return this.repo.dueRound(this.deps.store, dueBy, lane, size);
    const now = this.deps.wallClock.now();
    return this.repo.claimRound(this.deps.store, dueBy, lane, now, this.deps.boot, now + JOB_LEASE_MS, size);
  }

  /**
   * Runs a round: the jobs of one partition one after another in round order, different
   * partitions side by side: at most `concurrency` of the work lane in flight and the whole
   * outbound lane (serially, one job in all). The next job of a lane to start is always the lane's
   * earliest whose partition is idle, so the earliest unfinished job is always running; a job's
   * transactions wait only for the earlier jobs of its lane, so the round never stalls. The outbound lane comes last in the
   * round's order but starts at once: its deliveries are on the wire while the work lane's jobs
   * commit, and each lane writes in its own order, which is all a serial run fixes too (the lanes
   * write to different rows: deliveries never touch what the work lane writes).
   */
  private runRound(jobs: JobRow[], onDone?: (done: number) => void): Promise<number> {
    if (jobs.length === 0) return Promise.resolve(0);
    const round = ++this.rounds;
    /** Finished, or asked for its last transaction (sealed): the jobs after it need not wait. */
    const finished = new Array<boolean>(jobs.length).fill(false);
    const started = new Array<boolean>(jobs.length).fill(false);
    const busy = new Set<string>();
    const serial = this.concurrency === 1;
    /** Where the outbound lane starts in the round's order (the work lane's jobs come first). */
    let firstOutbound = jobs.findIndex((job) => job.lane === OUTBOUND_LANE);
    if (firstOutbound < 0) firstOutbound = jobs.length;
    const laneOf = (rank: number) => (rank < firstOutbound ? WORK_LANE : OUTBOUND_LANE);
    /** Per lane: every job of the lane before this rank has finished or sealed. */
    const settledBelow = [0, firstOutbound];
    const laneEnd = [firstOutbound, jobs.length];
    const turns: { rank: number; go: () => void }[] = [];
    /** Jobs in flight per lane. */
    const inFlight = [0, 0];
    // The outbound lane's jobs wait on the wire: all of them are sent at once (a round holds at
    // most OUTBOUND_ROUND_SIZE), or the last would wait behind the first.
    const room = [this.concurrency, OUTBOUND_ROUND_SIZE];
    const hasRoom = (lane: number) => (serial ? inFlight[WORK_LANE]! + inFlight[OUTBOUND_LANE]! === 0 : inFlight[lane]! < room[lane]!);
    let done = 0;
    const marks: Promise<void>[] = [];
    /** Jobs whose handlers succeeded: marked done together when the round ends (one statement). */
    const succeeded: number[] = [];
    const release = () => {
      for (const lane of [WORK_LANE, OUTBOUND_LANE]) {
        while (settledBelow[lane]! < laneEnd[lane]! && finished[settledBelow[lane]!]) settledBelow[lane]!++;
      }
      for (let i = turns.length - 1; i >= 0; i--) {
        const { rank } = turns[i]!;
        if (rank <= settledBelow[laneOf(rank)]!) turns.splice(i, 1)[0]!.go();
      }
    };
    return new Promise<number>((resolve) => {
      /** Per lane: every job of the lane before this rank has started (the scan for the next begins there). */
      const unstarted = [0, firstOutbound];
      const dispatch = () => {
        // Each lane from its earliest job not yet started, while it has room; serially, one job at
        // a time in the round's order (the work lane's jobs first).
        for (const lane of [WORK_LANE, OUTBOUND_LANE]) {
          while (unstarted[lane]! < laneEnd[lane]! && started[unstarted[lane]!]) unstarted[lane]!++;
          for (let rank = unstarted[lane]!; rank < laneEnd[lane]! && hasRoom(lane); rank++) {
            if (started[rank]) continue;
            start(rank, lane);
          }
        }
      };
      const start = (rank: number, lane: number) => {
        const job = jobs[rank]!;
        const partition = job.partition_key ?? job.id;
        // The partition's earlier job is still running, or this one waits behind it.
        if (busy.has(partition)) return;
        busy.add(partition);
        started[rank] = true;
        inFlight[lane]!++;
        const scope: JobScope = {
          jobId: job.id,
          round,
          rank,
          ids: this.deps.ids.fork(`${job.id}@${job.run_at}`, job.seq),
          entries: 0,
          finalSection: false,
          turn: () => (rank <= settledBelow[lane]! ? Promise.resolve() : new Promise<void>((go) => turns.push({ rank, go }))),
          seal: () => {
            finished[rank] = true;
            release();
          },
        };
        void inJobScope(scope, () => this.execute(job)).then((outcome) => {
          if (outcome === 'done') succeeded.push(job.seq);
          else {
            outcome.failed.catch(() => undefined); // seen by Promise.all at the round's end
            marks.push(outcome.failed);
          }
          finished[rank] = true;
          busy.delete(partition);
          inFlight[lane]!--;
          done++;
          release();
          try {
            onDone?.(done);
          } catch (err) {
            this.deps.logger.error('advance progress callback failed', { error: String(err) });
          }
          // A crash before the marks runs the round's jobs again: at least once, as ever.
          if (done === jobs.length) resolve(Promise.all([...marks, this.repo.markAllDone(this.deps.store, succeeded)]).then(() => done));
          else dispatch();
        });
      };
      dispatch();
    });
  }

  /** Runs a job's handler: done (marked with its round), or failed (marked at once). */
  private async execute(job: JobRow): Promise<'done' | { failed: Promise<void> }> {
    const handler = this.handlers.get(job.kind);
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(JSON.parse(job.payload), { id: job.id, kind: job.kind, runAt: job.run_at, partition: job.partition_key });
      return 'done';
    } catch (err) {
      this.deps.logger.error('job failed', { job: job.id, kind: job.kind, error: String(err) });
      return { failed: this.repo.markFailed(this.deps.store, job.id, String(err).slice(0, 500)) };
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.running.then(work);
    this.running = result.catch(() => undefined);
    return result;
  }
}
