import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.ts';
import { IpNotAllowedError, NotFoundError, UnauthorizedError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { safeEqual, sha256Hex } from '../kernel/secrets.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db, Store } from '../store/db.ts';
import { ApiKeyRepository, type ApiKeyRow } from '../store/repositories/api-key-repository.ts';
import { ipAllowed } from './ip-allowlist.ts';
import type { Role } from './roles.ts';
import type { Scope } from './scopes.ts';

/** An API key's row as read ahead of its request's route, by the hash it was read by. */
export interface LookedUpKey {
  /** The Authorization header it was read for, and its key's hash: not hashed again for the route. */
  authorization: string;
  hash: string;
  /** undefined: no key with this hash, or it is revoked. */
  row: ApiKeyRow | undefined;
}

/** The hash an Authorization header's API key is stored by, or undefined when it holds none. */
export function apiKeyHashOf(authorization: string | undefined): string | undefined {
  const key = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return key && environmentOf(key) ? sha256Hex(key) : undefined;
}

export interface AuthContext {
  keyId: string;
  merchantId: string;
  environment: Environment;
  scopes: Scope[];
  signingSecret: string;
  role: Role;
  ipAllowlist: string[];
}

export interface IssuedKey {
  id: string;
  key: string;
  signingSecret: string;
  environment: Environment;
  scopes: Scope[];
  role: Role;
  ipAllowlist: string[];
}

/** A key as listed: never the key or its signing secret. */
export interface KeyRecord {
  id: string;
  environment: Environment;
  keyHint: string;
  scopes: Scope[];
  role: Role;
  ipAllowlist: string[];
  createdAt: number;
  revokedAt: number | null;
}

type KeyRow = ApiKeyRow;

const record = (row: KeyRow): KeyRecord => ({
  id: row.id,
  environment: row.environment,
  keyHint: row.key_hint,
  scopes: JSON.parse(row.scopes) as Scope[],
  role: row.role as Role,
  ipAllowlist: JSON.parse(row.ip_allowlist) as string[],
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

const KEY_FORMAT = /^sk_(test|live)_[A-Za-z0-9_]{16,128}$/;

export function environmentOf(key: string): Environment | null {
  const match = KEY_FORMAT.exec(key);
  return match ? (match[1] as Environment) : null;
}

function randomToken(bytes: number): string {
  return randomBytes(bytes)
    .toString('base64url')
    .replace(/[-_]/g, '')
    .slice(0, Math.ceil(bytes * 1.3));
}

/**
 * API keys are stored as SHA-256 hashes; only the request-signing secret is kept as issued,
 * because verifying an HMAC needs it.
 */
export class ApiKeyService {
  private readonly repo = new ApiKeyRepository();

  constructor(private readonly deps: { clock: Clock; ids: IdGenerator; store: Store }) {}

  async issue(
    db: Db,
    input: { merchantId: string; environment: Environment; scopes: Scope[]; role?: Role; ipAllowlist?: string[]; key?: string; signingSecret?: string; id?: string },
  ): Promise<IssuedKey> {
    const key = input.key ?? `sk_${input.environment}_${randomToken(24)}`;
    if (environmentOf(key) !== input.environment) {
      throw new Error(`key must look like sk_${input.environment}_ followed by 16 or more letters, digits or underscores`);
    }
    const signingSecret = input.signingSecret ?? `sig_${input.environment}_${randomToken(32)}`;
    const id = input.id ?? this.deps.ids.next('key');
    const role = input.role ?? 'admin';
    const ipAllowlist = input.ipAllowlist ?? [];
    // Re-seeding the sandbox key keeps the role and allowlist someone gave it.
    await this.repo.upsert(db, {
      id,
      merchantId: input.merchantId,
      environment: input.environment,
      keyHash: sha256Hex(key),
      keyHint: `${key.slice(0, 12)}…${key.slice(-4)}`,
      scopes: JSON.stringify(input.scopes),
      signingSecret,
      createdAt: this.deps.clock.now(),
      role,
      ipAllowlist: JSON.stringify(ipAllowlist),
    });
    return { id, key, signingSecret, environment: input.environment, scopes: input.scopes, role, ipAllowlist };
  }

  /** issue, in a transaction of its own. */
  issueInTransaction(input: Parameters<ApiKeyService['issue']>[1]): Promise<IssuedKey> {
    return this.deps.store.transaction((tx) => this.issue(tx, input));
  }

  /**
   * The key's context, or 401. With the client address (express req.ip), a key whose allowlist
   * is not empty is refused from any other address (403 ip_not_allowed). `lookedUp` is the key's
   * row as read earlier in this request (with the fleet's state): used when it is this key's.
   */
  async authenticate(authorization: string | undefined, ip?: string, lookedUp?: LookedUpKey): Promise<AuthContext> {
    const hash = lookedUp && lookedUp.authorization === authorization ? lookedUp.hash : apiKeyHashOf(authorization);
    if (hash === undefined) throw new UnauthorizedError();
    const row = lookedUp?.hash === hash ? lookedUp.row : await this.repo.findActiveByHash(this.deps.store, hash);
    if (!row || !safeEqual(row.key_hash, hash)) throw new UnauthorizedError('Unknown or revoked API key');
    const ipAllowlist = JSON.parse(row.ip_allowlist) as string[];
    if (ip !== undefined && !ipAllowed(ipAllowlist, ip)) throw new IpNotAllowedError(ip);
    return {
      keyId: row.id,
      merchantId: row.merchant_id,
      environment: row.environment,
      scopes: JSON.parse(row.scopes) as Scope[],
      signingSecret: row.signing_secret,
      role: row.role as Role,
      ipAllowlist,
    };
  }

  /** The merchant's keys of both environments, oldest first. */
  async list(merchantId: string): Promise<KeyRecord[]> {
    const rows = await this.repo.listByMerchant(this.deps.store, merchantId);
    return rows.map(record);
  }

  async get(merchantId: string, id: string): Promise<KeyRecord> {
    return record(await this.owned(this.deps.store, merchantId, id));
  }

  /** Revoked at once: the next request with the key is 401. Revoking again changes nothing. */
  async revoke(merchantId: string, id: string): Promise<KeyRecord> {
    const { store } = this.deps;
    const row = await this.owned(store, merchantId, id);
    if (row.revoked_at === null) await this.repo.revoke(store, id, this.deps.clock.now());
    return record((await this.owned(store, merchantId, id))!);
  }

  /** Replaces the allowlist (entries already validated); empty accepts any address. */
  async setIpAllowlist(merchantId: string, id: string, entries: string[]): Promise<KeyRecord> {
    const { store } = this.deps;
    await this.owned(store, merchantId, id);
    await this.repo.setIpAllowlist(store, id, JSON.stringify(entries));
    return record(await this.owned(store, merchantId, id));
  }

  /** The explicit reveal of a key's request-signing secret (the key itself is only a hash). */
  async signingSecret(merchantId: string, id: string): Promise<string> {
    return (await this.owned(this.deps.store, merchantId, id)).signing_secret;
  }

  private async owned(db: Db, merchantId: string, id: string): Promise<KeyRow> {
    const row = await this.repo.findOwned(db, id, merchantId);
    if (!row) throw new NotFoundError(`No API key ${id}`, { id });
    return row;
  }
}
