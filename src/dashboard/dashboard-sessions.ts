import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.ts';
import type { Environment } from '../kernel/environment.ts';
import { safeEqual } from '../kernel/secrets.ts';

// Dashboard sessions live in this process's memory only: a random id in an HttpOnly cookie
// names one, and it holds the API key(s) the user signed in with. Idle sessions expire, and
// the number kept is capped (the oldest idle one goes first), so memory stays bounded.

export interface SessionKey {
  key: string;
  environment: Environment;
  /** Learnt from GET /api/v1/keys (current) when the key may read it. */
  keyId: string | null;
  role: string | null;
  ipAllowlist: string[];
  /** Signs transfers and payouts server-side; null until known. */
  signingSecret: string | null;
  hint: string;
}

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface DashboardSession {
  id: string;
  csrf: string;
  keys: Partial<Record<Environment, SessionKey>>;
  mode: Environment;
  lastSeen: number;
  flash: Flash | null;
  /** The last replay this session ran (POST /api/v1/sandbox/replays), shown on the Sandbox page. */
  lastReplay?: unknown;
}

export const SESSION_COOKIE = 'railyard_session';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export class DashboardSessions {
  private readonly sessions = new Map<string, DashboardSession>();

  constructor(private readonly deps: { clock: Clock; idleMs: number; max: number }) {}

  /** A fresh session (no key yet: the sign-in form's CSRF token lives in it). */
  create(): DashboardSession {
    this.sweep();
    while (this.sessions.size >= this.deps.max) {
      // Signed-out sessions (anyone can open one) go before any signed-in one.
      const victim = [...this.sessions.values()].find((s) => !s.keys.test && !s.keys.live) ?? this.sessions.values().next().value;
      if (victim === undefined) break;
      this.sessions.delete(victim.id);
    }
    const session: DashboardSession = { id: randomToken(), csrf: randomToken(), keys: {}, mode: 'test', lastSeen: this.deps.clock.now(), flash: null };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session the cookie names, touched; null when unknown or idle too long. */
  find(id: string | undefined): DashboardSession | null {
    if (!id) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    const now = this.deps.clock.now();
    if (now - session.lastSeen > this.deps.idleMs) {
      this.sessions.delete(id);
      return null;
    }
    session.lastSeen = now;
    // Re-inserted so the map's order is least recently used first.
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  /** A new id and CSRF token for the same contents: signing in never keeps a pre-login id. */
  renew(session: DashboardSession): DashboardSession {
    this.sessions.delete(session.id);
    const renewed = { ...session, id: randomToken(), csrf: randomToken(), lastSeen: this.deps.clock.now() };
    this.sessions.set(renewed.id, renewed);
    return renewed;
  }

  destroy(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.deps.clock.now();
    for (const [id, s] of this.sessions) if (now - s.lastSeen > this.deps.idleMs) this.sessions.delete(id);
  }
}

export function csrfMatches(session: DashboardSession, token: unknown): boolean {
  return typeof token === 'string' && token.length > 0 && safeEqual(session.csrf, token);
}
