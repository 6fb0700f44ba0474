import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import supertest from 'supertest';
import { createApp, type AppOptions, type Railyard } from '../../src/app.ts';
import { merchantHeaders } from '../../src/kernel/api-client.ts';
import { answerClientError } from '../../src/http/error-mapper.ts';
import type { ScenarioRule, Wallet } from '../../src/scenarios/scenario-schema.ts';
import { processPostgresCluster } from './postgres-cluster.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

export const SANDBOX_SCENARIOS = resolve(import.meta.dirname, '../../scenarios/sandbox.yaml');

export interface TestSandbox {
  ry: Railyard;
  server: Server;
  baseUrl: string;
  key: string;
  signingSecret: string;
  /** Unauthenticated supertest agent against the listening server. */
  http: ReturnType<typeof supertest>;
  get(path: string, key?: string): supertest.Test;
  /** POST with the key; idempotencyKey and signing are opt-in. */
  post(path: string, body: unknown, opts?: PostOptions): supertest.Test;
  /** POST /api/v1/transfers, signed, with a fresh Idempotency-Key unless given. */
  transfer(body: unknown, opts?: PostOptions): supertest.Test;
  /** POST /api/v1/trades, signed, with a fresh Idempotency-Key unless given. */
  execute(body: unknown, opts?: PostOptions): supertest.Test;
  /** POST /api/v1/charges with a fresh Idempotency-Key unless given. */
  charge(body: unknown, opts?: PostOptions): supertest.Test;
  fund(amount: number, key?: string): Promise<void>;
  advance(seconds: number): Promise<void>;
  wallet(key?: string): Promise<{ available: number; reserved: number }>;
  trialBalance(environment?: 'test' | 'live'): Promise<Record<string, number>>;
  events(objectId: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface PostOptions {
  key?: string;
  signingSecret?: string;
  idempotencyKey?: string | null;
  sign?: boolean;
  timestamp?: number;
  rawBody?: string;
}

let idemCounter = 0;

export async function startTestSandbox(
  overrides: Record<string, unknown> = {},
  rules: readonly ScenarioRule[] = loadScenarios([SANDBOX_SCENARIOS]).rules,
  wallets: readonly Wallet[] = [],
  appOptions: Pick<AppOptions, 'replays' | 'wallClock' | 'logger'> = {},
): Promise<TestSandbox> {
  // RAILYARD_TEST_DB=postgres: a sandbox that names no db of its own gets a fresh PostgreSQL database.
  const pgDatabase = overrides.db === undefined && process.env.RAILYARD_TEST_DB === 'postgres' ? await (await processPostgresCluster()).createDatabase() : undefined;
  const config = buildConfig({
    db: pgDatabase ?? ':memory:',
    clock: 'virtual',
    seed: 7,
    log_requests: false,
    ...overrides,
    rails: { timeout_ms: 250, max_hold_ms: 3_000, poll_after_seconds: 60, poll_interval_seconds: 60, default_callback_seconds: 3, ...(overrides.rails as object) },
  });
  const ry = await createApp(config, { rules, wallets, ...appOptions });
  const server = createServer(ry.app);
  server.on('clientError', answerClientError);
  await new Promise<void>((done) => server.listen((overrides.port as number | undefined) ?? 0, '127.0.0.1', done));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ry.setBaseUrl(baseUrl);
  // As railyard serve does: what a stopped process left in flight on this database is finished.
  await ry.recoverInterrupted();
  const http = supertest(baseUrl);
  const key = ry.sandbox.key;
  const signingSecret = ry.sandbox.signingSecret;

  const post = (path: string, body: unknown, opts: PostOptions = {}) => {
    const raw = opts.rawBody ?? JSON.stringify(body);
    // The headers of railyard's own API client; supertest sends them, so tests keep its assertions.
    const headers = merchantHeaders(
      { method: 'POST', path, key: opts.key ?? key, idempotencyKey: opts.idempotencyKey || undefined, sign: opts.sign, signingSecret: opts.signingSecret ?? signingSecret },
      raw,
      opts.timestamp !== undefined ? opts.timestamp * 1000 : ry.wallClock.now(),
    );
    return http.post(path).set('Content-Type', 'application/json').set(headers).send(raw);
  };
  const fresh = (opts: PostOptions) => (opts.idempotencyKey === null ? undefined : (opts.idempotencyKey ?? `idem-${++idemCounter}`));

  const sandbox: TestSandbox = {
    ry,
    server,
    baseUrl,
    key,
    signingSecret,
    http,
    get: (path, k = key) => http.get(path).set('Authorization', `Bearer ${k}`),
    post,
    transfer: (body, opts = {}) => post('/api/v1/transfers', body, { sign: true, ...opts, idempotencyKey: fresh(opts) }),
    execute: (body, opts = {}) => post('/api/v1/trades', body, { sign: true, ...opts, idempotencyKey: fresh(opts) }),
    charge: (body, opts = {}) => post('/api/v1/charges', body, { ...opts, idempotencyKey: fresh(opts) }),
    async fund(amount, k = key) {
      const res = await post('/api/v1/sandbox/wallet/fund', { amount }, { key: k });
      if (res.status !== 200) throw new Error(`fund failed: ${res.status} ${JSON.stringify(res.body)}`);
    },
    async advance(seconds) {
      await ry.scheduler.advanceBy(seconds * 1000);
    },
    async wallet(k = key) {
      const res = await http.get('/api/v1/wallet').set('Authorization', `Bearer ${k}`);
      return res.body.data;
    },
    trialBalance: (environment = 'test') => ry.ledger.trialBalance(ry.store, environment),
    async events(objectId) {
      return (await ry.outbox.forObject(ry.store, objectId)).map((e) => e.type);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await ry.close();
      if (pgDatabase) await (await processPostgresCluster()).dropDatabase(pgDatabase);
    },
  };
  return sandbox;
}

/** Every currency nets to zero across all postings. */
export function expectBalanced(trial: Record<string, number>): void {
  for (const [currency, total] of Object.entries(trial)) {
    if (total !== 0) throw new Error(`ledger does not balance in ${currency}: ${total}`);
  }
}

/** A fresh sandbox for one run of a property, closed whatever happens. */
export async function withSandbox<T>(run: (sb: TestSandbox) => Promise<T>, overrides: Record<string, unknown> = {}): Promise<T> {
  const sb = await startTestSandbox(overrides);
  try {
    return await run(sb);
  } finally {
    await sb.close();
  }
}
