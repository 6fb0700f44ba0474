// Provider states on a running railyard (a container, say), each built in isolation: the state
// gets a fresh sandbox merchant and test key (POST /api/v1/sandbox/merchants), so no earlier
// state's wallet, events, lists or Idempotency-Keys are in its way; the scenario rules start
// afresh (POST /api/v1/sandbox/scenarios/restart); and the rails take the line-up and short
// real-time timeout the scenario's replay runs with (PUT /api/v1/sandbox/rails), restored to the
// target's configuration at the end. Then the script's requests and clock advances are sent to
// it, as a merchant would, and due jobs run after each request as in a replay; expect_* steps
// are left out, since only the in-process sandbox can be inspected. Which routes are signed or
// idempotent is read from the target's own /openapi.json. Webhook messages are read back from
// the state's merchant's events API.

import type { RequestHandler } from 'express';
import type { RouteSpec } from '../http/route.ts';
import { ApiClient, rawBodyOf } from '../kernel/api-client.ts';
import { interpolate, replayConfig, type ScenarioSource } from '../replay/replay-api.ts';
import type { StateParams } from './contract-generator.ts';
import { authorise, contractHeaders, type MerchantCredentials } from './authorise-request.ts';
import { configSchema } from '../railyard-config.ts';

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

interface Key {
  key: string;
  secret: string;
}

/** The sandbox controls a state is built with; a target without them is an older railyard. */
const CONTROLS = ['post /api/v1/sandbox/merchants', 'post /api/v1/sandbox/scenarios/restart', 'put /api/v1/sandbox/rails'];

export class RemoteScenarioRun {
  private routes: RouteFlags[] = [];
  /** The target's sandbox key: it creates each state's merchant and tunes the rails. */
  private readonly admin: Key;
  /** The current state's merchant. */
  private merchant: Key;
  private virtualClock = false;
  private providerNames: string[] = [];
  private tuned = false;
  /** A state's clock advance may run many jobs before it answers. */
  private readonly client: ApiClient;

  constructor(
    private readonly baseUrl: string,
    credentials: { apiKey?: string; signingSecret?: string } = {},
  ) {
    this.client = new ApiClient({ baseUrl, timeoutMs: 10 * 60_000 });
    const defaults = configSchema.parse({}).sandbox;
    this.admin = { key: credentials.apiKey ?? defaults.key, secret: credentials.signingSecret ?? defaults.signing_secret };
    this.merchant = this.admin;
  }

  /** Reads the target's route table from its OpenAPI document, its clock and its providers. */
  async connect(): Promise<void> {
    const res = await this.client.request({ method: 'GET', path: '/openapi.json' });
    if (res.status !== 200) throw new Error(`${this.baseUrl}/openapi.json answered ${res.status}: is it railyard?`);
    const doc = (res.json ?? {}) as { paths?: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    this.routes = Object.entries(doc.paths ?? {}).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => {
        const names = new Set((op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase()));
        return { method, path: path.replace(/\{([^}]+)\}/g, ':$1'), signed: names.has('x-service-signature'), idempotent: names.has('idempotency-key') };
      }),
    );
    const missing = CONTROLS.filter((c) => !this.routes.some((r) => `${r.method} ${r.path}` === c));
    if (missing.length) throw new Error(`${this.baseUrl} lacks the sandbox controls that isolate each state (${missing.join(', ')}): is it an older railyard?`);
    const clock = await this.send(this.admin, 'GET', '/api/v1/sandbox/clock');
    if (clock.status !== 200) throw new Error(`GET /api/v1/sandbox/clock answered ${clock.status}: are --key and --secret the target's sandbox key?`);
    this.virtualClock = (clock.body as { data?: { mode?: string } }).data?.mode === 'virtual';
    const rails = await this.send(this.admin, 'GET', '/api/v1/sandbox/rails');
    this.providerNames = ((rails.body as { data?: { providers?: { name: string }[] } }).data?.providers ?? []).map((p) => p.name);
  }

  private auth(key: Key): MerchantCredentials {
    return { key: key.key, secret: key.secret, routes: this.routes as unknown as RouteSpec[], now: Date.now() };
  }

  /** Adds the state's key, a fresh signature and Idempotency-Key to each request the verifier sends. */
  filter: RequestHandler = (req, _res, next) => {
    if (!req.path.startsWith('/_pact')) authorise(req, this.auth(this.merchant));
    next();
  };

  private async send(as: Key, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const raw = rawBodyOf(body);
    const res = await this.client.request({ method, path, body: raw, headers: contractHeaders(this.auth(as), method, path, raw ?? '') });
    return { status: res.status, body: res.text === '' ? null : res.json === undefined ? res.text : res.json };
  }

  private async control(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await this.send(this.admin, method, path, body);
    if (res.status >= 300) throw new Error(`could not build the state: ${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data?: unknown }).data;
  }

  /** A fresh merchant, fresh scenario rules, and the rails the scenario's replay runs with. */
  private async isolate(source: ScenarioSource, params: StateParams): Promise<void> {
    const config = replayConfig(source, params.seed ?? 1);
    const providers: Record<string, { enabled: boolean; priority: number }> = {};
    for (const name of this.providerNames) {
      const p = (config.providers as Record<string, { enabled: boolean; priority: number } | undefined>)[name];
      if (p) providers[name] = { enabled: p.enabled, priority: p.priority };
    }
    await this.control('PUT', '/api/v1/sandbox/rails', { timeout_ms: config.rails.timeout_ms, providers });
    this.tuned = true;
    await this.control('POST', '/api/v1/sandbox/scenarios/restart');
    const merchant = (await this.control('POST', '/api/v1/sandbox/merchants', { name: `contract state: ${source.scenario.name}, after step ${params.after_step ?? 0}` })) as {
      key: string;
      signing_secret: string;
    };
    this.merchant = { key: merchant.key, secret: merchant.signing_secret };
  }

  private async events(): Promise<EventRecord[]> {
    const all: EventRecord[] = [];
    let cursor: string | null = null;
    do {
      const res = await this.send(this.merchant, 'GET', `/api/v1/events?page_size=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const body = res.body as { data?: EventRecord[]; meta?: { next_cursor?: string | null } };
      if (res.status !== 200 || !Array.isArray(body.data)) throw new Error(`GET /api/v1/events answered ${res.status}`);
      all.push(...body.data);
      cursor = body.meta?.next_cursor ?? null;
    } while (cursor);
    return all;
  }

  /** Runs the script's requests and clock advances through `after_step` for a fresh merchant; returns the state's values. */
  async afterStep(source: ScenarioSource, params: StateParams, values: (script: unknown[], vars: Record<string, unknown>) => Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.isolate(source, params);
    const script = source.scenario.script ?? [];
    const vars: Record<string, unknown> = {};
    for (let i = 1; i <= (params.after_step ?? 0); i++) {
      const step = script[i - 1]!;
      if ('request' in step) {
        const r = step.request;
        const res = await this.send(this.merchant, r.method, String(interpolate(r.path, vars)), r.body === undefined ? undefined : interpolate(r.body, vars));
        if (r.as) vars[r.as] = res;
        // A replay runs the jobs that fell due after each request (a 0 s callback, say).
        if (this.virtualClock) await this.control('POST', '/api/v1/sandbox/clock/advance', { seconds: 0, wait: true });
      } else if ('advance' in step) {
        const res = await this.send(this.admin, 'POST', '/api/v1/sandbox/clock/advance', { seconds: step.advance, wait: true });
        if (res.status >= 300) throw new Error(`could not advance the clock of ${this.baseUrl} (${res.status}): start it with RAILYARD_CLOCK=virtual`);
      }
    }
    return values(script, vars);
  }

  /**
   * The n-th event of a type that the state's merchant has, as its webhook carries it. Events of
   * one instant (jobs of one round) keep the order they were written in, which is the order a
   * replay delivers them in; their ids are random on a served sandbox, so they cannot break ties.
   */
  async message(params: StateParams): Promise<unknown> {
    const mine = (await this.events())
      .reverse() // the list is newest first, by insertion
      .filter((e) => e.type === params.event_type)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    const event = mine[(params.event_ordinal ?? 1) - 1];
    if (!event) throw new Error(`${this.baseUrl} has no ${params.event_type} event #${params.event_ordinal} from this state`);
    return event;
  }

  /** Gives the target its configured rails back. */
  async close(): Promise<void> {
    if (!this.tuned) return;
    this.tuned = false;
    await this.control('PUT', '/api/v1/sandbox/rails', {});
  }
}
