import type { Db } from '../db.ts';

/** An api_keys row as stored: the key only as its hash. */
export interface ApiKeyRow {
  id: string;
  merchant_id: string;
  environment: 'test' | 'live';
  key_hash: string;
  key_hint: string;
  scopes: string;
  signing_secret: string;
  role: string;
  ip_allowlist: string;
  created_at: number;
  revoked_at: number | null;
}

/** API keys of merchants: the SQL of the key aggregate. */
export class ApiKeyRepository {
  /**
   * Inserts the key, or re-keys an existing id (new hash, hint, scopes and signing secret, not
   * revoked) keeping the role and allowlist someone gave it.
   */
  async upsert(
    db: Db,
    row: { id: string; merchantId: string; environment: string; keyHash: string; keyHint: string; scopes: string; signingSecret: string; createdAt: number; role: string; ipAllowlist: string },
  ): Promise<void> {
    await db.run(
      `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_hint, scopes, signing_secret, created_at, role, ip_allowlist)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET key_hash = excluded.key_hash, key_hint = excluded.key_hint,
         scopes = excluded.scopes, signing_secret = excluded.signing_secret, revoked_at = NULL`,
      [row.id, row.merchantId, row.environment, row.keyHash, row.keyHint, row.scopes, row.signingSecret, row.createdAt, row.role, row.ipAllowlist],
    );
  }

  /** The key not revoked with this hash. */
  findActiveByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
    return db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL', [keyHash]);
  }

  /** The merchant's keys of both environments, oldest first. */
  listByMerchant(db: Db, merchantId: string): Promise<ApiKeyRow[]> {
    return db.all<ApiKeyRow>('SELECT * FROM api_keys WHERE merchant_id = ? ORDER BY created_at, id', [merchantId]);
  }

  findOwned(db: Db, id: string, merchantId: string): Promise<ApiKeyRow | undefined> {
    return db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE id = ? AND merchant_id = ?', [id, merchantId]);
  }

  async revoke(db: Db, id: string, now: number): Promise<void> {
    await db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [now, id]);
  }

  async setIpAllowlist(db: Db, id: string, ipAllowlist: string): Promise<void> {
    await db.run('UPDATE api_keys SET ip_allowlist = ? WHERE id = ?', [ipAllowlist, id]);
  }
}
