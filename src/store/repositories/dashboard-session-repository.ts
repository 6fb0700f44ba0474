import type { Db } from '../db.ts';

/** A dashboard_sessions row as the dashboard's session vault speaks of it. */
export interface DashboardSessionRow {
  tokenHash: string;
  /** The session's contents, sealed with a key only the cookie's token gives. */
  sealed: string;
  signedIn: boolean;
  lastSeen: number;
  expiresAt: number;
}

interface Row {
  token_hash: string;
  sealed: string;
  signed_in: number;
  last_seen: number;
  expires_at: number;
}

/**
 * Dashboard sessions, by the hash of their token: the SQL of the session aggregate. The table is
 * bounded: prune() drops the expired ones and keeps at most `max`, so counting it reads no history.
 */
export class DashboardSessionRepository {
  async find(db: Db, tokenHash: string): Promise<DashboardSessionRow | undefined> {
    const row = await db.get<Row>('SELECT token_hash, sealed, signed_in, last_seen, expires_at FROM dashboard_sessions WHERE token_hash = ?', [tokenHash]);
    return row && { tokenHash: row.token_hash, sealed: row.sealed, signedIn: Number(row.signed_in) === 1, lastSeen: Number(row.last_seen), expiresAt: Number(row.expires_at) };
  }

  async put(db: Db, s: DashboardSessionRow): Promise<void> {
    await db.run(
      `INSERT INTO dashboard_sessions (token_hash, sealed, signed_in, last_seen, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (token_hash) DO UPDATE SET sealed = excluded.sealed, signed_in = excluded.signed_in, last_seen = excluded.last_seen, expires_at = excluded.expires_at`,
      [s.tokenHash, s.sealed, s.signedIn ? 1 : 0, s.lastSeen, s.expiresAt],
    );
  }

  /** Moves a session's idle expiry on (a use), leaving its contents as they are. */
  async touch(db: Db, tokenHash: string, lastSeen: number, expiresAt: number): Promise<void> {
    await db.run('UPDATE dashboard_sessions SET last_seen = ?, expires_at = ? WHERE token_hash = ?', [lastSeen, expiresAt, tokenHash]);
  }

  async remove(db: Db, tokenHash: string): Promise<void> {
    await db.run('DELETE FROM dashboard_sessions WHERE token_hash = ?', [tokenHash]);
  }

  /**
   * Drops the sessions expired at `now` (down the expiry index), then, beyond `max`, the least
   * recently seen, signed-out ones first (so opening sign-in forms cannot push users out).
   */
  async prune(db: Db, now: number, max: number): Promise<void> {
    await db.run('DELETE FROM dashboard_sessions WHERE expires_at < ?', [now]);
    const count = Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM dashboard_sessions'))?.n ?? 0);
    if (count <= max) return;
    await db.run('DELETE FROM dashboard_sessions WHERE token_hash IN (SELECT token_hash FROM dashboard_sessions ORDER BY signed_in, last_seen LIMIT ?)', [count - max]);
  }
}
