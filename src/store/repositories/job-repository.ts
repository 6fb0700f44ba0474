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
  async insert(db: Db, job: { id: string; kind: string; runAt: number; payload: string; now: number }): Promise<void> {
    await db.run('INSERT INTO jobs (id, kind, run_at, payload, state, created_at) VALUES (?, ?, ?, ?, ?, ?)', [job.id, job.kind, job.runAt, job.payload, 'pending', job.now]);
  }

  /** How many jobs wait, and the earliest run_at among them. */
  async pendingSummary(db: Db): Promise<{ count: number; next: number | null } | undefined> {
    return db.get<{ count: number; next: number | null }>("SELECT COUNT(*) AS count, MIN(run_at) AS next FROM jobs WHERE state = 'pending'");
  }

  /** Frees the pending jobs claimed by any boot but `boot`; the number freed. */
  async releaseClaimsNotOf(db: Db, boot: number): Promise<number> {
    const r = await db.run("UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE state = 'pending' AND claimed_by <> ?", [boot]);
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
    return db.all<{ id: string }>(
      `UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE seq IN (
           SELECT seq FROM jobs WHERE state = 'pending' AND run_at = ? AND (lease_until IS NULL OR lease_until < ? OR claimed_by = ?) ORDER BY seq LIMIT ?
         ) RETURNING id`,
      [boot, leaseUntil, runAt, now, boot, limit],
    );
  }

  async markDone(db: Db, id: string): Promise<void> {
    await db.run("UPDATE jobs SET state = 'done', attempts = attempts + 1, lease_until = NULL WHERE id = ?", [id]);
  }

  async markFailed(db: Db, id: string, error: string): Promise<void> {
    await db.run("UPDATE jobs SET state = 'failed', attempts = attempts + 1, lease_until = NULL, last_error = ? WHERE id = ?", [error, id]);
  }
}
