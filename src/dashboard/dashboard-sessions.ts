import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.ts';
import type { Environment } from '../kernel/environment.ts';
import { safeEqual } from '../kernel/secrets.ts';

// Dashboard sessions live in the database, so whichever instance of a fleet answers serves them
// (the balancer needs no sticky route). A random token in an HttpOnly cookie names one; the
// database holds only the token's SHA-256 (found by it, then compared in constant time) and the
// session's contents (the API key(s) the user signed in with) sealed with AES-256-GCM under a key
// derived from the token: without the cookie, a row reveals nothing. Idle sessions expire, and
// the number kept is capped (the least recently seen signed-out one goes first).

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

/** A session as the vault keeps it: by its token's hash, its contents sealed. */
export interface StoredSession {
  tokenHash: string;
  sealed: string;
  signedIn: boolean;
  lastSeen: number;
  expiresAt: number;
}

/** Where sessions are kept (the composition root hands the database's in): the dashboard's port. */
export interface SessionVault {
  find(tokenHash: string): Promise<StoredSession | undefined>;
  put(session: StoredSession): Promise<void>;
  touch(tokenHash: string, lastSeen: number, expiresAt: number): Promise<void>;
  remove(tokenHash: string): Promise<void>;
  /** Drops expired sessions, then keeps at most `max`, the least recently seen signed-out ones going first. */
  prune(now: number, max: number): Promise<void>;
}

type Contents = Omit<DashboardSession, 'id' | 'lastSeen'>;

/** A token is 32 random bytes in base64url: anything longer names no session (and is not hashed). */
const MAX_TOKEN_LENGTH = 64;

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function keyOf(token: string): Buffer {
  return Buffer.from(hkdfSync('sha256', token, '', 'railyard dashboard session', 32));
}

function seal(token: string, contents: Contents): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(token), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(contents), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function unseal(token: string, sealed: string): Contents | null {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(token), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as Contents;
  } catch {
    return null;
  }
}

function contentsOf(session: DashboardSession): Contents {
  const { id: _id, lastSeen: _lastSeen, ...contents } = session;
  return contents;
}

export class DashboardSessions {
  /** What each session read held, so that only a changed one is written back. */
  private readonly written = new WeakMap<DashboardSession, string>();

  constructor(private readonly deps: { clock: Clock; idleMs: number; max: number; vault: SessionVault }) {}

  /** A fresh session (no key yet: the sign-in form's CSRF token lives in it). */
  async create(): Promise<DashboardSession> {
    const now = this.deps.clock.now();
    await this.deps.vault.prune(now, this.deps.max - 1);
    const session: DashboardSession = { id: randomToken(), csrf: randomToken(), keys: {}, mode: 'test', lastSeen: now, flash: null };
    await this.write(session);
    return session;
  }

  /** The live session the cookie names, touched; null when unknown, idle too long or not ours. */
  async find(token: string | undefined): Promise<DashboardSession | null> {
    if (!token || token.length > MAX_TOKEN_LENGTH) return null;
    const tokenHash = hashOf(token);
    const stored = await this.deps.vault.find(tokenHash);
    if (!stored || !safeEqual(stored.tokenHash, tokenHash)) return null;
    const now = this.deps.clock.now();
    if (now > stored.expiresAt) {
      await this.deps.vault.remove(tokenHash);
      return null;
    }
    const contents = unseal(token, stored.sealed);
    if (!contents) return null;
    // A use moves the expiry on; written at most ten times per idle period.
    let lastSeen = stored.lastSeen;
    if (now - lastSeen >= this.deps.idleMs / 10) {
      lastSeen = now;
      await this.deps.vault.touch(tokenHash, now, now + this.deps.idleMs);
    }
    const session: DashboardSession = { ...contents, id: token, lastSeen };
    this.written.set(session, JSON.stringify(contentsOf(session)));
    return session;
  }

  /** Writes what a request changed in the session (its flash, mode, keys, last replay). */
  async save(session: DashboardSession): Promise<void> {
    if (this.written.get(session) === JSON.stringify(contentsOf(session))) return;
    await this.write(session);
  }

  /** A new id and CSRF token for the same contents: signing in never keeps a pre-login id. */
  async renew(session: DashboardSession): Promise<DashboardSession> {
    await this.deps.vault.remove(hashOf(session.id));
    const renewed = { ...session, id: randomToken(), csrf: randomToken(), lastSeen: this.deps.clock.now() };
    await this.write(renewed);
    return renewed;
  }

  async destroy(id: string): Promise<void> {
    await this.deps.vault.remove(hashOf(id));
  }

  private async write(session: DashboardSession): Promise<void> {
    const contents = contentsOf(session);
    await this.deps.vault.put({
      tokenHash: hashOf(session.id),
      sealed: seal(session.id, contents),
      signedIn: !!(session.keys.test || session.keys.live),
      lastSeen: session.lastSeen,
      expiresAt: session.lastSeen + this.deps.idleMs,
    });
    this.written.set(session, JSON.stringify(contents));
  }
}

export function csrfMatches(session: DashboardSession, token: unknown): boolean {
  return typeof token === 'string' && token.length > 0 && safeEqual(session.csrf, token);
}
