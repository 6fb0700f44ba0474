import type { AuthContext } from '../auth/api-key-service.ts';
import type { Config } from '../config/config.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { NotFoundError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Db, Store } from '../store/db.ts';
import { WebhookEndpointRepository, type WebhookEndpointRow } from '../store/repositories/webhook-endpoint-repository.ts';
import { newWebhookSecret } from './webhook-signer.ts';
import type { z } from 'zod';
import type { endpointSchema, endpointWithSecretSchema } from './webhook.schemas.ts';

export type EndpointRow = WebhookEndpointRow;

type Endpoint = z.infer<typeof endpointSchema>;
type EndpointWithSecret = z.infer<typeof endpointWithSecretSchema>;

export const SANDBOX_ENDPOINT_ID = 'we_sandbox0000000000000';

/** Webhook endpoints per merchant and environment, with secret rotation. */
export class WebhookEndpointService {
  private readonly repo = new WebhookEndpointRepository();

  constructor(private readonly deps: { store: Store; clock: Clock; ids: IdGenerator; config: Pick<Config, 'webhooks'> }) {}

  present(row: EndpointRow): Endpoint {
    const rotating = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > this.deps.clock.now();
    return {
      id: row.id,
      object: 'webhook_endpoint',
      url: row.url,
      event_types: row.event_types ? (JSON.parse(row.event_types) as string[]) : null,
      enabled: row.enabled === 1,
      failing: row.failing === 1,
      secret_rotating_until: rotating ? iso(row.previous_secret_expires_at!) : null,
      livemode: row.environment === 'live',
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  /** The secrets that sign a delivery now: the current one, and the previous during its grace period. */
  secrets(row: EndpointRow): string[] {
    const graceful = row.previous_secret && row.previous_secret_expires_at !== null && row.previous_secret_expires_at > this.deps.clock.now();
    return graceful ? [row.secret, row.previous_secret!] : [row.secret];
  }

  async create(auth: AuthContext, input: { url: string; event_types?: string[]; enabled: boolean }): Promise<EndpointWithSecret> {
    const now = this.deps.clock.now();
    const id = this.deps.ids.next('we');
    const secret = newWebhookSecret();
    await this.repo.insert(this.deps.store, {
      id,
      environment: auth.environment,
      merchantId: auth.merchantId,
      url: input.url,
      eventTypes: input.event_types ? JSON.stringify([...new Set(input.event_types)]) : null,
      enabled: input.enabled ? 1 : 0,
      secret,
      now,
    });
    return { ...this.present((await this.row(this.deps.store, id))!), secret };
  }

  async list(auth: AuthContext): Promise<Endpoint[]> {
    const rows = await this.repo.listLive(this.deps.store, auth.environment, auth.merchantId);
    return rows.map((r) => this.present(r));
  }

  async get(auth: AuthContext, id: string): Promise<Endpoint> {
    return this.present(await this.owned(auth, id));
  }

  async remove(auth: AuthContext, id: string): Promise<Endpoint> {
    const row = await this.owned(auth, id);
    const now = this.deps.clock.now();
    await this.repo.markDeleted(this.deps.store, id, now);
    return this.present({ ...row, updated_at: now });
  }

  /** A disabled endpoint gets no new deliveries, and its pending retries stop; enabling resumes new ones. */
  async setEnabled(auth: AuthContext, id: string, enabled: boolean): Promise<Endpoint> {
    const row = await this.owned(auth, id);
    if ((row.enabled === 1) !== enabled) {
      await this.repo.setEnabled(this.deps.store, id, enabled ? 1 : 0, this.deps.clock.now());
    }
    return this.present((await this.row(this.deps.store, id))!);
  }

  async rotate(auth: AuthContext, id: string, graceSeconds?: number): Promise<EndpointWithSecret> {
    const row = await this.owned(auth, id);
    const now = this.deps.clock.now();
    const grace = graceSeconds ?? this.deps.config.webhooks.rotation_grace_seconds;
    const secret = newWebhookSecret();
    await this.repo.rotateSecret(this.deps.store, id, secret, row.secret, now + grace * 1000, now);
    return { ...this.present((await this.row(this.deps.store, id))!), secret };
  }

  row(db: Db, id: string): Promise<EndpointRow | undefined> {
    return this.repo.find(db, id);
  }

  private async owned(auth: AuthContext, id: string): Promise<EndpointRow> {
    const row = await this.repo.findOwned(this.deps.store, id, auth.environment, auth.merchantId);
    if (!row) throw new NotFoundError(`No webhook endpoint ${id}`, { id });
    return row;
  }

  /** RAILYARD_WEBHOOK_URL: one endpoint for the sandbox merchant, its secret kept across restarts. */
  async ensureSandboxEndpoint(merchantId: string, url: string): Promise<string> {
    const now = this.deps.clock.now();
    const existing = await this.row(this.deps.store, SANDBOX_ENDPOINT_ID);
    if (existing) {
      await this.repo.reviveSandbox(this.deps.store, SANDBOX_ENDPOINT_ID, url, now);
      return existing.secret;
    }
    const secret = newWebhookSecret();
    await this.repo.insertSandbox(this.deps.store, { id: SANDBOX_ENDPOINT_ID, merchantId, url, secret, now });
    return secret;
  }
}
