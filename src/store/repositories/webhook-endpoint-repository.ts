import type { Db } from '../db.ts';

/** A webhook_endpoints row as stored. */
export interface WebhookEndpointRow {
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  url: string;
  event_types: string | null;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  failing: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** Webhook endpoints per merchant and environment: the SQL of the webhook endpoint aggregate. */
export class WebhookEndpointRepository {
  async insert(db: Db, row: { id: string; environment: string; merchantId: string; url: string; eventTypes: string | null; enabled: number; secret: string; now: number }): Promise<void> {
    await db.run(
      `INSERT INTO webhook_endpoints (id, environment, merchant_id, url, event_types, enabled, secret, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.environment, row.merchantId, row.url, row.eventTypes, row.enabled, row.secret, row.now, row.now],
    );
  }

  /** The sandbox merchant's endpoint (RAILYARD_WEBHOOK_URL): test, every event type, enabled. */
  async insertSandbox(db: Db, row: { id: string; merchantId: string; url: string; secret: string; now: number }): Promise<void> {
    await db.run(
      `INSERT INTO webhook_endpoints (id, environment, merchant_id, url, event_types, enabled, secret, created_at, updated_at)
       VALUES (?, 'test', ?, ?, NULL, 1, ?, ?, ?)`,
      [row.id, row.merchantId, row.url, row.secret, row.now, row.now],
    );
  }

  /** Revives the sandbox endpoint at a new URL. */
  async reviveSandbox(db: Db, id: string, url: string, now: number): Promise<void> {
    await db.run('UPDATE webhook_endpoints SET url = ?, deleted_at = NULL, enabled = 1, updated_at = ? WHERE id = ?', [url, now, id]);
  }

  /** The merchant's endpoints not deleted, oldest first. */
  listLive(db: Db, environment: string, merchantId: string): Promise<WebhookEndpointRow[]> {
    return db.all<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE environment = ? AND merchant_id = ? AND deleted_at IS NULL ORDER BY seq', [environment, merchantId]);
  }

  /** The merchant's endpoints that take new deliveries, oldest first. */
  listEnabled(db: Db, environment: string, merchantId: string): Promise<WebhookEndpointRow[]> {
    return db.all<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE environment = ? AND merchant_id = ? AND enabled = 1 AND deleted_at IS NULL ORDER BY seq', [environment, merchantId]);
  }

  find(db: Db, id: string): Promise<WebhookEndpointRow | undefined> {
    return db.get<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ?', [id]);
  }

  /** The endpoint if the merchant owns it in this environment and it is not deleted. */
  findOwned(db: Db, id: string, environment: string, merchantId: string): Promise<WebhookEndpointRow | undefined> {
    return db.get<WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ? AND environment = ? AND merchant_id = ? AND deleted_at IS NULL', [id, environment, merchantId]);
  }

  async markDeleted(db: Db, id: string, now: number): Promise<void> {
    await db.run('UPDATE webhook_endpoints SET deleted_at = ?, updated_at = ? WHERE id = ?', [now, now, id]);
  }

  async setEnabled(db: Db, id: string, enabled: number, now: number): Promise<void> {
    await db.run('UPDATE webhook_endpoints SET enabled = ?, updated_at = ? WHERE id = ?', [enabled, now, id]);
  }

  /** A new secret; the old one keeps signing until `previousExpiresAt`. */
  async rotateSecret(db: Db, id: string, secret: string, previousSecret: string, previousExpiresAt: number, now: number): Promise<void> {
    await db.run('UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_secret_expires_at = ?, updated_at = ? WHERE id = ?', [secret, previousSecret, previousExpiresAt, now, id]);
  }

  /** A delivery got through: the endpoint is no longer failing. */
  async clearFailing(db: Db, id: string): Promise<void> {
    // Most endpoints are not failing: then nothing is written.
    await db.run('UPDATE webhook_endpoints SET failing = 0 WHERE id = ? AND failing = 1', [id]);
  }

  /** A delivery failed for good: the endpoint is flagged failing. */
  async markFailing(db: Db, id: string, now: number): Promise<void> {
    await db.run('UPDATE webhook_endpoints SET failing = 1, updated_at = ? WHERE id = ?', [now, id]);
  }
}
