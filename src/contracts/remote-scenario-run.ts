// Provider states on a running railyard (a container, say): the script's requests and clock
// advances are sent to it over HTTP, as a merchant would; expect_* steps are left out, since only
// the in-process sandbox can be inspected. Which routes are signed or idempotent is read from the
// target's own /openapi.json. Webhook messages are read back from its events API.

import type { RequestHandler } from 'express';
import { configSchema } from '../config/config.ts';
import type { RouteSpec } from '../http/route.ts';
import { interpolate, type ScenarioSource } from '../replay/replay-api.ts';
import type { StateParams } from './contract-generator.ts';
import { authorise, merchantHeaders, type MerchantCredentials } from './authorise-request.ts';

interface RouteFlags {
  method: string;
  path: string;
  signed: boolean;
  idempotent: boolean;
}

interface EventRecord {
  id: string;
  type: string;
  created_at: string;
}

export class RemoteScenarioRun {
  private routes: RouteFlags[] = [];
  private readonly used = new Set<string>();
  private readonly key: string;
  private readonly secret: string;
  /** Events that existed before the current state was built: not this run's. */
  private before = new Set<string>();

  constructor(
    private readonly baseUrl: string,
    credentials: { apiKey?: string; signingSecret?: string } = {},
  ) {
    const defaults = configSchema.parse({}).sandbox;
    this.key = credentials.apiKey ?? defaults.key;
    this.secret = credentials.signingSecret ?? defaults.signing_secret;
  }

  /** Reads the target's route table from its OpenAPI document. */
  async connect(): Promise<void> {
    const res = await fetch(new URL('/openapi.json', this.baseUrl));
    if (!res.ok) throw new Error(`${this.baseUrl}/openapi.json answered ${res.status}: is it railyard?`);
    const doc = (await res.json()) as { paths?: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    this.routes = Object.entries(doc.paths ?? {}).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => {
        const names = new Set((op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase()));
        return { method, path: path.replace(/\{([^}]+)\}/g, ':$1'), signed: names.has('x-service-signature'), idempotent: names.has('idempotency-key') };
      }),
    );
  }

  private auth(): MerchantCredentials {
    return { key: this.key, secret: this.secret, routes: this.routes as unknown as RouteSpec[], now: Date.now() };
  }

  /** Adds the key, a fresh signature and Idempotency-Key to each request the verifier sends. */
  filter: RequestHandler = (req, _res, next) => {
    if (!req.path.startsWith('/_pact')) authorise(req, this.auth());
    next();
  };

  private async send(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const raw = body === undefined ? undefined : JSON.stringify(body);
    const headers = merchantHeaders(this.auth(), method, path, raw ?? '');
    if (raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(path, this.baseUrl), { method, headers, ...(raw !== undefined ? { body: raw } : {}) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  }

  private async events(): Promise<EventRecord[]> {
    const all: EventRecord[] = [];
    let cursor: string | null = null;
    do {
      const res = await this.send('GET', `/api/v1/events?page_size=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = res.body as { data?: EventRecord[]; meta?: { next_cursor?: string | null } };
      if (res.status !== 200 || !Array.isArray(body.data)) throw new Error(`GET /api/v1/events answered ${res.status}`);
      all.push(...body.data);
      cursor = body.meta?.next_cursor ?? null;
    } while (cursor);
    return all;
  }

  /** Runs the script's requests and clock advances through `after_step`; returns the state's values. */
  async afterStep(source: ScenarioSource, params: StateParams, values: (script: unknown[], vars: Record<string, unknown>) => Record<string, unknown>): Promise<Record<string, unknown>> {
    this.before = new Set((await this.events()).map((e) => e.id));
    const script = source.scenario.script ?? [];
    const vars: Record<string, unknown> = {};
    for (let i = 1; i <= (params.after_step ?? 0); i++) {
      const step = script[i - 1]!;
      if ('request' in step) {
        const r = step.request;
        const res = await this.send(r.method, String(interpolate(r.path, vars)), r.body === undefined ? undefined : interpolate(r.body, vars));
        if (r.as) vars[r.as] = res;
      } else if ('advance' in step) {
        const res = await this.send('POST', '/api/v1/sandbox/clock/advance', { seconds: step.advance, wait: true });
        if (res.status >= 300) throw new Error(`could not advance the clock of ${this.baseUrl} (${res.status}): start it with RAILYARD_CLOCK=virtual`);
      }
    }
    return values(script, vars);
  }

  /** The n-th event of a type created since the state began to be built, as its webhook carries it. */
  async message(params: StateParams): Promise<unknown> {
    const mine = (await this.events())
      .filter((e) => !this.before.has(e.id) && e.type === params.event_type)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
    const event = mine[(params.event_ordinal ?? 1) - 1];
    if (!event) throw new Error(`${this.baseUrl} has no ${params.event_type} event #${params.event_ordinal} from this state`);
    return event;
  }
}
