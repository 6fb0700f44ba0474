import type { Db } from '../db.ts';

/** A job as the scheduler runs it. */
export interface JobRow {
  id: string;
  kind: string;
  run_at: number;
  payload: string;
}

/** A due job with its claim. */
export interface ClaimableJobRow extends JobRow {
  claimed_by: number | null;
  lease_until: number | null;
}

/** Durable delayed work and its leases: the SQL of the jobs aggregate. */
export class JobRepository {
  /**
   * `skipLocked` (PostgreSQL): a claim passes over the rows another process is claiming at the
   * same moment instead of waiting for them, so concurrent claims never take one job twice.
   */
  constructor(private readonly skipLocked = false) {}

  async insert(db: Db, job: { id: string; kind: string; runAt: number; payload: string; now: number }): Promise<void> {
    await db.run('INSERT INTO jobs (id, kind, run_at, payload, state, created_at) VALUES (?, ?, ?, ?, ?, ?)', [job.id, job.kind, job.runAt, job.payload, 'pending', job.now]);
  }

  /** How many jobs wait, and the earliest run_at among them. */
  async pendingSummary(db: Db): Promise<{ count: number; next: number | null } | undefined> {
    return db.get<{ count: number; next: number | null }>("SELECT COUNT(*) AS count, MIN(run_at) AS next FROM jobs WHERE state = 'pending'");
  }

  /** How many jobs due by `until` still wait (some perhaps running in another process). */
  async pendingThrough(db: Db, until: number): Promise<number> {
    const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE state = 'pending' AND run_at <= ?", [until]);
    return row?.n ?? 0;
  }

  /** Frees the pending jobs claimed by any boot but those of `boots`; the number freed. */
  async releaseClaimsNotOf(db: Db, boots: readonly number[]): Promise<number> {
    const r = await db.run(`UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE state = 'pending' AND claimed_by NOT IN (${boots.map(() => '?').join(', ')})`, [...boots]);
    return r.changes;
  }

  /** Frees the pending jobs `boot` claimed (a process leaving the fleet); the number freed. */
  async releaseClaimsOf(db: Db, boot: number): Promise<number> {
    const r = await db.run("UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE state = 'pending' AND claimed_by = ?", [boot]);
    return r.changes;
  }

  /** Renews the leases of the pending jobs `boot` holds (its heartbeat): a live process keeps its claims. */
  async extendLeases(db: Db, boot: number, leaseUntil: number): Promise<number> {
    const r = await db.run("UPDATE jobs SET lease_until = ? WHERE state = 'pending' AND claimed_by = ? AND lease_until IS NOT NULL AND lease_until < ?", [leaseUntil, boot, leaseUntil]);
    return r.changes;
  }

  /** The next job in (run_at, seq) order due by `until` that is free at `now`, or already claimed by `boot`. */
  nextClaimable(db: Db, until: number, now: number, boot: number): Promise<ClaimableJobRow | undefined> {
    return db.get<ClaimableJobRow>(
      "SELECT id, kind, run_at, payload, claimed_by, lease_until FROM jobs WHERE state = 'pending' AND run_at <= ? AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?) ORDER BY run_at, seq LIMIT 1",
      [until, now, boot],
    );
  }

  /** Claims for `boot`, until `leaseUntil`, up to `limit` free jobs due at `runAt`, in seq order; the ids claimed. */
  claimDueAt(db: Db, runAt: number, now: number, boot: number, leaseUntil: number, limit: number): Promise<{ id: string }[]> {
    // The outer conditions repeat the inner ones: a row claimed meanwhile by another process is
    // checked again in its new version before it is taken.
    return db.all<{ id: string }>(
      `UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE seq IN (
           SELECT seq FROM jobs WHERE state = 'pending' AND run_at = ? AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?) ORDER BY seq LIMIT ?${this.skipLocked ? ' FOR UPDATE SKIP LOCKED' : ''}
         ) AND state = 'pending' AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?) RETURNING id`,
      [boot, leaseUntil, runAt, now, boot, limit, now, boot],
    );
  }

  async markDone(db: Db, id: string): Promise<void> {
    await db.run("UPDATE jobs SET state = 'done', attempts = attempts + 1, lease_until = NULL WHERE id = ?", [id]);
  }

  async markFailed(db: Db, id: string, error: string): Promise<void> {
    await db.run("UPDATE jobs SET state = 'failed', attempts = attempts + 1, lease_until = NULL, last_error = ? WHERE id = ?", [error, id]);
  }
}
