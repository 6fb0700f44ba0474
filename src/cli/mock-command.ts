import express, { type Router } from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config/config.ts';
import { SystemClock } from '../kernel/clock.ts';
import { CryptoRandom, IdGenerator } from '../kernel/ids.ts';
import { silentLogger, type Logger } from '../kernel/logger.ts';
import { createBankRailMock } from '../mocks/bank-rail-mock.ts';
import { createHubtelMock } from '../mocks/hubtel-mock.ts';
import type { MockContext } from '../mocks/mock-context.ts';
import { MockTransactionBooks } from '../mocks/mock-transaction-book.ts';
import { createMtnMomoMock } from '../mocks/mtn-momo-mock.ts';
import { ProviderHealth } from '../rails/provider-health.ts';
import { RuleEngine } from '../scenarios/rule-engine.ts';
import { loadScenarios } from '../scenarios/scenario-loader.ts';
import type { ScenarioRule, Wallet } from '../scenarios/scenario-schema.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import { nextBoot } from '../store/runtime-state.ts';
import { SqliteStore } from '../store/sqlite-store.ts';
import { configuredScenarioPaths, isPort, stopSignal, usageError } from './cli-support.ts';

// `railyard mock <provider>`: one provider mock on its own port, with its own store, scheduler and
// scenario rules, as a stand-in upstream (for `railyard record`, or an SDK under test).

export const MOCK_PROVIDERS = ['mtn-momo', 'hubtel', 'bank-rail'] as const;
export type MockProvider = (typeof MOCK_PROVIDERS)[number];

export function isMockProvider(name: string): name is MockProvider {
  return (MOCK_PROVIDERS as readonly string[]).includes(name);
}

/** The one place that builds a provider mock from the configuration's credentials. */
export function createProviderMock(provider: MockProvider, ctx: MockContext, config: Config): Router {
  const p = config.providers;
  switch (provider) {
    case 'mtn-momo':
      return createMtnMomoMock(ctx, {
        apiUser: p['mtn-momo'].api_user,
        apiKey: p['mtn-momo'].api_key,
        collectionSubscriptionKey: p['mtn-momo'].collection_subscription_key,
        disbursementSubscriptionKey: p['mtn-momo'].disbursement_subscription_key,
        targetEnvironment: p['mtn-momo'].target_environment,
      });
    case 'hubtel':
      return createHubtelMock(ctx, {
        clientId: p.hubtel.client_id,
        clientSecret: p.hubtel.client_secret,
        posSalesId: p.hubtel.pos_sales_id,
        prepaidDepositId: p.hubtel.prepaid_deposit_id,
      });
    case 'bank-rail':
      return createBankRailMock(ctx, { clientId: p['bank-rail'].client_id, clientSecret: p['bank-rail'].client_secret });
  }
}

/** What a client of the mock needs to know: base URL(s) and the credentials it accepts. */
export function mockCredentialLines(provider: MockProvider, baseUrl: string, config: Config): string[] {
  const p = config.providers;
  switch (provider) {
    case 'mtn-momo':
      return [
        `base URL              ${baseUrl}`,
        `subscription keys     collection ${p['mtn-momo'].collection_subscription_key}, disbursement ${p['mtn-momo'].disbursement_subscription_key} (Ocp-Apim-Subscription-Key)`,
        `API user / API key    ${p['mtn-momo'].api_user} / ${p['mtn-momo'].api_key} (Basic auth on POST /collection/token/, /disbursement/token/)`,
        `target environment    ${p['mtn-momo'].target_environment} (X-Target-Environment)`,
        `or provision a user   POST /v1_0/apiuser with X-Reference-Id: <uuid> and a subscription key,`,
        `                      then POST /v1_0/apiuser/<uuid>/apikey`,
      ];
    case 'hubtel':
      return [
        `base URL              ${baseUrl} (hosts: receive /rmp, receive status /txnstatus, send /smp, send status /smrsc, verify /rnv)`,
        `client id / secret    ${p.hubtel.client_id} / ${p.hubtel.client_secret} (Basic auth)`,
        `POS Sales ID          ${p.hubtel.pos_sales_id}; Prepaid Deposit ID ${p.hubtel.prepaid_deposit_id}`,
      ];
    case 'bank-rail':
      return [
        `base URL              ${baseUrl}`,
        `participant id        ${p['bank-rail'].client_id} (x-participant-id)`,
        `signing secret        ${p['bank-rail'].client_secret} (x-signature: hex HMAC-SHA256 of "<x-timestamp>.<METHOD>.<path>.<raw body>")`,
      ];
  }
}

export interface MockOptions {
  config: Config;
  rules: readonly ScenarioRule[];
  wallets?: readonly Wallet[];
  port?: number;
  host?: string;
  /** Default ':memory:': a standalone mock forgets its transactions when it stops. */
  db?: string;
  logger?: Logger;
}

export interface RunningMock {
  provider: MockProvider;
  url: string;
  banner(): string;
  close(): Promise<void>;
}

export async function startMock(provider: MockProvider, options: MockOptions): Promise<RunningMock> {
  const { config } = options;
  const logger = options.logger ?? silentLogger;
  const store = new SqliteStore(options.db ?? ':memory:');
  const boot = await nextBoot(store);
  const clock = new SystemClock();
  const ids = new IdGenerator(clock, new CryptoRandom());
  const scheduler = new Scheduler({ store, clock, ids, logger, wallClock: clock, boot });
  await scheduler.releaseEarlierClaims();
  const ctx: MockContext = {
    clock,
    scheduler,
    store,
    scenarios: new RuleEngine(options.rules, options.wallets ?? []),
    health: new ProviderHealth(),
    logger,
    books: await MockTransactionBooks.load(store, clock),
    maxHoldMs: config.rails.max_hold_ms,
    defaultCallbackSeconds: config.rails.default_callback_seconds,
  };
  const app = express();
  app.disable('x-powered-by');
  app.use(createProviderMock(provider, ctx, config));
  const server = createServer(app);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, host, () => done());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  scheduler.start();
  return {
    provider,
    url,
    banner: () => ['', `  railyard mock ${provider} is listening on ${url}`, '', ...mockCredentialLines(provider, url, config).map((l) => `  ${l}`), ''].join('\n') + '\n',
    async close() {
      await scheduler.stop();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await store.close();
    },
  };
}

export interface MockIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  signal: AbortSignal;
}

/** Serves the mock until the signal aborts; 0 on a clean stop, 2 on a usage error. */
export async function runMock(provider: string, options: Omit<MockOptions, 'logger'>, io: MockIo): Promise<number> {
  if (!isMockProvider(provider)) {
    io.stderr.write(`railyard mock: say which provider: ${MOCK_PROVIDERS.join(', ')}${provider ? `, not ${JSON.stringify(provider)}` : ''}\n`);
    return 2;
  }
  const mock = await startMock(provider, options);
  io.stdout.write(mock.banner());
  await new Promise<void>((done) => (io.signal.aborted ? done() : io.signal.addEventListener('abort', () => done(), { once: true })));
  await mock.close();
  io.stdout.write(`railyard mock ${provider} stopped\n`);
  return 0;
}

/** `railyard mock <provider> [--port N] [--host H] [--scenarios ...]` from its arguments; the exit code. */
export async function mockMain(args: string[], usage: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: { port: { type: 'string' }, host: { type: 'string' }, scenarios: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    return usageError('mock', err instanceof Error ? err.message : String(err), usage);
  }
  const { values, positionals } = parsed;
  if (values.help) return void process.stdout.write(usage), 0;
  if (positionals.length > 1) return usageError('mock', `one provider at a time (got ${positionals.join(' ')})`, usage);
  if (values.port !== undefined && !isPort(values.port)) return usageError('mock', `--port is from 0 to 65535, not ${JSON.stringify(values.port)}`, usage);
  const config = loadConfig();
  const scenarios = loadScenarios(values.scenarios ?? configuredScenarioPaths(config.scenarios));
  return runMock(
    positionals[0] ?? '',
    { config, rules: scenarios.rules, wallets: scenarios.wallets, port: Number(values.port ?? 0), host: values.host ?? '127.0.0.1' },
    { stdout: process.stdout, stderr: process.stderr, signal: stopSignal() },
  );
}
