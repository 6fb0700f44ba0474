import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.ts';
import { UnauthorizedError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { safeEqual, sha256Hex } from '../kernel/secrets.ts';
import type { Environment } from '../ledger/ledger.ts';
import type { Db } from '../store/db.ts';
import type { Scope } from './scopes.ts';

export interface AuthContext {
  keyId: string;
  merchantId: string;
  environment: Environment;
  scopes: Scope[];
  signingSecret: string;
}

export interface IssuedKey {
  id: string;
  key: string;
  signingSecret: string;
  environment: Environment;
  scopes: Scope[];
}

const KEY_FORMAT = /^sk_(test|live)_[A-Za-z0-9_]{16,128}$/;

export function environmentOf(key: string): Environment | null {
  const match = KEY_FORMAT.exec(key);
  return match ? (match[1] as Environment) : null;
}

function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url').replace(/[-_]/g, '').slice(0, Math.ceil(bytes * 1.3));
}

/**
 * API keys are stored as SHA-256 hashes; only the request-signing secret is kept as issued,
 * because verifying an HMAC needs it.
 */
export class ApiKeyService {
  constructor(private readonly deps: { clock: Clock; ids: IdGenerator }) {}

  async issue(
    db: Db,
    input: { merchantId: string; environment: Environment; scopes: Scope[]; key?: string; signingSecret?: string; id?: string },
  ): Promise<IssuedKey> {
    const key = input.key ?? `sk_${input.environment}_${randomToken(24)}`;
    if (environmentOf(key) !== input.environment) {
      throw new Error(`key must look like sk_${input.environment}_ followed by 16 or more letters, digits or underscores`);
    }
    const signingSecret = input.signingSecret ?? `sig_${input.environment}_${randomToken(32)}`;
    const id = input.id ?? this.deps.ids.next('key');
    await db.run(
      `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_hint, scopes, signing_secret, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET key_hash = excluded.key_hash, key_hint = excluded.key_hint,
         scopes = excluded.scopes, signing_secret = excluded.signing_secret, revoked_at = NULL`,
      [id, input.merchantId, input.environment, sha256Hex(key), key.slice(0, 12) + '…' + key.slice(-4), JSON.stringify(input.scopes), signingSecret, this.deps.clock.now()],
    );
    return { id, key, signingSecret, environment: input.environment, scopes: input.scopes };
  }

  async authenticate(db: Db, authorization: string | undefined): Promise<AuthContext> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const key = match?.[1];
    if (!key || !environmentOf(key)) throw new UnauthorizedError();
    const hash = sha256Hex(key);
    const row = await db.get<{ id: string; merchant_id: string; environment: Environment; key_hash: string; scopes: string; signing_secret: string }>(
      'SELECT id, merchant_id, environment, key_hash, scopes, signing_secret FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL',
      [hash],
    );
    if (!row || !safeEqual(row.key_hash, hash)) throw new UnauthorizedError('Unknown or revoked API key');
    return {
      keyId: row.id,
      merchantId: row.merchant_id,
      environment: row.environment,
      scopes: JSON.parse(row.scopes) as Scope[],
      signingSecret: row.signing_secret,
    };
  }
}
