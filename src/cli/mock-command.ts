import express from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SystemClock, type Clock } from '../kernel/clock.ts';
import { CryptoRandom, IdGenerator } from '../kernel/ids.ts';
import { silentLogger, type Logger } from '../kernel/logger.ts';
import type { MockContext } from '../mocks/engine/mock-context.ts';
import { mockBannerLines } from '../mocks/mock-definition.ts';
import { createMock, describeMock, PROVIDERS, registration, type ProviderName } from '../provider-registry.ts';
import { MockTransactionBooks } from '../mocks/engine/mock-transaction-book.ts';
import { ProviderHealth } from '../rails/provider-health.ts';
import { RuleEngine } from '../scenarios/rule-engine.ts';
import type { ScenarioRule, Wallet } from '../scenarios/scenario-schema.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import { nextBoot } from '../store/runtime-state.ts';
import { openStore } from '../store/open-store.ts';
import { configuredScenarioPaths, isPort, parseCommandArgs, stopSignal, usageError } from './cli-support.ts';
import { loadConfig, type RailyardConfig } from '../railyard-config.ts';
import { loadScenarios } from '../railyard-scenarios.ts';

// `railyard mock <provider>`: one provider mock on its own port, with its own store, scheduler and
// scenario rules, as a stand-in upstream (for `railyard record`, or an SDK under test). The mock
// and what it accepts come from the provider registry, as for the mocks railyard serve mounts.

export const MOCK_PROVIDERS = PROVIDERS.map((p) => p.name);
export type MockProvider = ProviderName;

export function isMockProvider(name: string): name is MockProvider {
  return (MOCK_PROVIDERS as readonly string[]).includes(name);
}

/** The mocks with a strict-sandbox mode (`--as-real-sandbox`). */
export const REAL_SANDBOX_MOCKS = PROVIDERS.filter((p) => p.mock.realSandbox).map((p) => p.name);

/** What a client of the mock served at `baseUrl` needs to know: the registry's view, at the root. */
export function mockCredentialLines(provider: MockProvider, baseUrl: string, config: RailyardConfig): string[] {
  const view = describeMock(provider, config, { baseUrl, realUpstream: false });
  return mockBannerLines([{ ...view, base_url: baseUrl }], '');
}

export interface MockOptions {
  config: RailyardConfig;
  rules: readonly ScenarioRule[];
  wallets?: readonly Wallet[];
  port?: number;
  host?: string;
  /** Default ':memory:': a standalone mock forgets its transactions when it stops. */
  db?: string;
  logger?: Logger;
  /**
   * The mock's business time (callback delays): the system clock by default. A virtual clock
   * moves only through advance(), so a test plays a 5 s callback delay without waiting for it.
   */
  clock?: Clock;
  /**
   * Behave as the upstream's real sandbox: refuse what it refuses, answer as it documents, and
   * play no scenario rule (for a mock that has the mode: REAL_SANDBOX_MOCKS).
   */
  asRealSandbox?: boolean;
}

export interface RunningMock {
  provider: MockProvider;
  url: string;
  banner(): string;
  /** Moves a virtual clock on by `seconds`, running the callbacks due meanwhile; how many ran. */
  advance(seconds: number): Promise<number>;
  close(): Promise<void>;
}

export async function startMock(provider: MockProvider, options: MockOptions): Promise<RunningMock> {
  const { config } = options;
  const logger = options.logger ?? silentLogger;
  const store = await openStore(options.db ?? ':memory:');
  const boot = await nextBoot(store);
  const wallClock = new SystemClock();
  const clock = options.clock ?? wallClock;
  const ids = new IdGenerator(clock, new CryptoRandom());
  const scheduler = new Scheduler({ store, clock, ids, logger, wallClock, boot });
  await scheduler.join();
  const ctx: MockContext = {
    clock,
    scheduler,
    store,
    scenarios: options.asRealSandbox ? new RuleEngine([], []) : new RuleEngine(options.rules, options.wallets ?? []),
    health: new ProviderHealth(),
    logger,
    books: new MockTransactionBooks(store, clock),
    maxHoldMs: config.rails.max_hold_ms,
    defaultCallbackSeconds: config.rails.default_callback_seconds,
    callbackTimeoutMs: config.rails.callback_timeout_ms,
    ...(options.asRealSandbox ? { asRealSandbox: true } : {}),
  };
  const app = express();
  app.disable('x-powered-by');
  app.use(createMock(provider, ctx, config));
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
    advance: (seconds) => scheduler.advanceBy(seconds * 1000),
    banner: () =>
      `${[
        '',
        `  railyard mock ${provider} is listening on ${url}${options.asRealSandbox ? ', as the real sandbox' : ''}`,
        '',
        ...mockCredentialLines(provider, url, config).map((l) => `  ${l}`),
        ...(options.asRealSandbox ? ['', '  As the real sandbox, it refuses:', ...(registration(provider).mock.realSandbox ?? []).map((l) => `    ${l}`)] : []),
        '',
      ].join('\n')}\n`,
    async close() {
      await scheduler.stop();
      await scheduler.leave();
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
  if (options.asRealSandbox && !(REAL_SANDBOX_MOCKS as readonly string[]).includes(provider)) {
    io.stderr.write(`railyard mock: --as-real-sandbox is for ${REAL_SANDBOX_MOCKS.join(', ')}, not ${provider}\n`);
    return 2;
  }
  const mock = await startMock(provider, options);
  io.stdout.write(mock.banner());
  await new Promise<void>((done) => (io.signal.aborted ? done() : io.signal.addEventListener('abort', () => done(), { once: true })));
  await mock.close();
  io.stdout.write(`railyard mock ${provider} stopped\n`);
  return 0;
}

/** `railyard mock <provider> [--port N] [--host H] [--scenarios ...] [--as-real-sandbox]` from its arguments; the exit code. */
export async function mockMain(args: string[], usage: string): Promise<number> {
  const parsed = parseCommandArgs('mock', usage, {
    args,
    strict: true,
    allowPositionals: true,
    options: { port: { type: 'string' }, host: { type: 'string' }, 'as-real-sandbox': { type: 'boolean' }, scenarios: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } },
  });
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) return (void process.stdout.write(usage), 0);
  if (positionals.length > 1) return usageError('mock', `one provider at a time (got ${positionals.join(' ')})`, usage);
  if (values.port !== undefined && !isPort(values.port)) return usageError('mock', `--port is from 0 to 65535, not ${JSON.stringify(values.port)}`, usage);
  const config = loadConfig();
  const scenarios = loadScenarios(values.scenarios ?? configuredScenarioPaths(config.scenarios));
  return runMock(
    positionals[0] ?? '',
    { config, rules: scenarios.rules, wallets: scenarios.wallets, port: Number(values.port ?? 0), host: values.host ?? '127.0.0.1', asRealSandbox: values['as-real-sandbox'] === true },
    { stdout: process.stdout, stderr: process.stderr, signal: stopSignal() },
  );
}
