import { type Db, plannedEachRun } from '../db.ts';

/** A job as the scheduler runs it. */
export interface JobRow {
  id: string;
  kind: string;
  run_at: number;
  payload: string;
  /** The object the job acts on: its jobs run in order; null, the job is its own partition. */
  partition_key: string | null;
  seq: number;
  /** 0: the work lane; 1: the outbound lane (jobs that wait on a merchant's endpoint). */
  lane: number;
}

/** The lanes as stored: the work lane, and the outbound lane (jobs that wait on a merchant's endpoint). */
export const WORK_LANE = 0;
export const OUTBOUND_LANE = 1;
const LANE_IDS = [WORK_LANE, OUTBOUND_LANE] as const;

/**
 * The earliest run_at among the jobs `where` matches: the first entry of each lane's run of the
 * jobs_lane_due index (pending jobs by lane, then run_at), the earlier of those.
 */
async function earliestOfLanes(db: Db, where: string, params: (lane: number) => (number | string)[]): Promise<number | undefined> {
  const first = (alias: string) => `SELECT run_at FROM (SELECT run_at FROM jobs WHERE ${where} ORDER BY run_at LIMIT 1) AS ${alias}`;
  const row = await db.get<{ run_at: number | null }>(`SELECT MIN(run_at) AS run_at FROM (${LANE_IDS.map((lane) => first(`lane_${lane}`)).join(' UNION ALL ')}) AS due`, LANE_IDS.flatMap(params));
  return row?.run_at == null ? undefined : Number(row.run_at);
}

/** Durable delayed work and its leases: the SQL of the jobs aggregate. */
export class JobRepository {
  /**
   * `skipLocked` (PostgreSQL): a claim passes over the rows another process is claiming at the
   * same moment instead of waiting for them, so concurrent claims never take one job twice.
   */
  constructor(private readonly skipLocked = false) {}

  async insert(db: Db, job: { id: string; kind: string; runAt: number; payload: string; partition: string | null; lane: number; now: number }): Promise<void> {
    await db.run('INSERT INTO jobs (id, kind, run_at, payload, partition_key, state, created_at, lane) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      job.id,
      job.kind,
      job.runAt,
      job.payload,
      job.partition,
      'pending',
      job.now,
      job.lane,
    ]);
  }

  /** Whether any job waits (one row of the pending jobs' index, not a count). */
  async anyPending(db: Db): Promise<boolean> {
    return (await db.get("SELECT seq FROM jobs WHERE state = 'pending' LIMIT 1")) !== undefined;
  }

  /** How many jobs wait, and the earliest run_at among them. */
  async pendingSummary(db: Db): Promise<{ count: number; next: number | null } | undefined> {
    return db.get<{ count: number; next: number | null }>("SELECT COUNT(*) AS count, MIN(run_at) AS next FROM jobs WHERE state = 'pending'");
  }

  /** How many jobs due by `until` still wait (some perhaps running in another process). */
  async pendingThrough(db: Db, until: number): Promise<number> {
    // Every lane named, so the count is a range of each lane's run of jobs_lane_due, not a scan of all pending jobs.
    const row = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE state = 'pending' AND lane IN (${LANE_IDS.join(', ')}) AND run_at <= ?`, [until]);
    return row?.n ?? 0;
  }

  // A claimed job has a lease until it finishes or is freed: `lease_until IS NOT NULL` reads the
  // jobs claimed now from jobs_claimed, not every pending job. Planned at each run: the plan
  // PostgreSQL keeps from runs on an empty table walks every pending job (jobs_lane_due).

  /** Frees the pending jobs claimed by any boot but those of `boots`; the number freed. */
  async releaseClaimsNotOf(db: Db, boots: readonly number[]): Promise<number> {
    const r = await db.run(
      plannedEachRun(`UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE lease_until IS NOT NULL AND state = 'pending' AND claimed_by NOT IN (${boots.map(() => '?').join(', ')})`),
      [...boots],
    );
    return r.changes;
  }

  /** Frees the pending jobs `boot` claimed (a process leaving the fleet); the number freed. */
  async releaseClaimsOf(db: Db, boot: number): Promise<number> {
    const r = await db.run(plannedEachRun("UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE lease_until IS NOT NULL AND state = 'pending' AND claimed_by = ?"), [boot]);
    return r.changes;
  }

  /** Renews the leases of the pending jobs `boot` holds (its heartbeat): a live process keeps its claims. */
  async extendLeases(db: Db, boot: number, leaseUntil: number): Promise<number> {
    const r = await db.run(plannedEachRun("UPDATE jobs SET lease_until = ? WHERE claimed_by = ? AND lease_until IS NOT NULL AND lease_until < ? AND state = 'pending'"), [
      leaseUntil,
      boot,
      leaseUntil,
    ]);
    return r.changes;
  }

  /** When the earliest job due by `until` that is free at `now` (or already `boot`'s) falls due. */
  async nextDueAt(db: Db, until: number, now: number, boot: number): Promise<number | undefined> {
    return earliestOfLanes(db, "state = 'pending' AND lane = ? AND run_at <= ? AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?)", (lane) => [lane, until, now, boot]);
  }

  /**
   * When the earliest job due by `until` falls due, on a database only this process uses: no job
   * there is anyone else's.
   */
  async nextDueAtOwned(db: Db, until: number): Promise<number | undefined> {
    return earliestOfLanes(db, "state = 'pending' AND lane = ? AND run_at <= ?", (lane) => [lane, until]);
  }

  /**
   * The first `limit` jobs of `lane` due by `dueBy` in (run_at, seq) order, read and not claimed:
   * on a database only this process uses, the round the scheduler holds while it runs them is
   * claim enough, and a claim left by a crash would be freed at start-up anyway.
   */
  async dueRound(db: Db, dueBy: number, lane: number, limit: number): Promise<JobRow[]> {
    const rows = await db.all<JobRow>("SELECT id, kind, run_at, payload, partition_key, seq, lane FROM jobs WHERE state = 'pending' AND lane = ? AND run_at <= ? ORDER BY run_at, seq LIMIT ?", [
      lane,
      dueBy,
      limit,
    ]);
    for (const row of rows) {
      row.run_at = Number(row.run_at);
      row.seq = Number(row.seq);
      row.lane = Number(row.lane);
    }
    return rows;
  }

  /**
   * Claims for `boot`, until `leaseUntil`, the first `limit` free jobs of `lane` due by `dueBy` in
   * (run_at, seq) order, which they come back in. (Jobs a round writes are inserted in the
   * round's order, JobScope, so seq is the same in a serial and a concurrent run.)
   */
  async claimRound(db: Db, dueBy: number, lane: number, now: number, boot: number, leaseUntil: number, limit: number): Promise<JobRow[]> {
    // The jobs are chosen, and locked, first (due): a job another process claimed meanwhile is
    // checked again in its new version before it is locked, and skipped while another holds it.
    // Then each is updated by key. The shape leaves PostgreSQL one sensible plan, whatever it knows
    // of the table: updating `WHERE seq IN (the choice)` let it walk every pending job, running the
    // choice again for each, in the plan it kept from the scheduler's first claims on an empty table.
    const rows = await db.all<JobRow>(
      `WITH due AS MATERIALIZED (
           SELECT seq FROM jobs WHERE state = 'pending' AND lane = ? AND run_at <= ? AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?) ORDER BY run_at, seq LIMIT ?${this.skipLocked ? ' FOR UPDATE SKIP LOCKED' : ''}
         )
         UPDATE jobs SET claimed_by = ?, lease_until = ? FROM due WHERE jobs.seq = due.seq
         RETURNING jobs.id, jobs.kind, jobs.run_at, jobs.payload, jobs.partition_key, jobs.seq, jobs.lane`,
      [lane, dueBy, now, boot, limit, boot, leaseUntil],
    );
    for (const row of rows) {
      row.run_at = Number(row.run_at);
      row.seq = Number(row.seq);
      row.lane = Number(row.lane);
    }
    return rows.sort((a, b) => a.run_at - b.run_at || a.seq - b.seq);
  }

  /** Marks the jobs of a round done in one statement, by seq (the primary key). */
  async markAllDone(db: Db, seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    await db.run(`UPDATE jobs SET state = 'done', attempts = attempts + 1, lease_until = NULL WHERE seq IN (${seqs.map(() => '?').join(', ')})`, [...seqs]);
  }

  async markFailed(db: Db, id: string, error: string): Promise<void> {
    await db.run("UPDATE jobs SET state = 'failed', attempts = attempts + 1, lease_until = NULL, last_error = ? WHERE id = ?", [error, id]);
  }
}
