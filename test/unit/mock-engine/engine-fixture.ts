import express, { type Express } from 'express';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SystemClock, VirtualClock, VIRTUAL_EPOCH } from '../../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../../src/kernel/ids.ts';
import type { Logger } from '../../../src/kernel/logger.ts';
import type { CallbackMessage } from '../../../src/mocks/engine/callback-sender.ts';
import type { MockContext } from '../../../src/mocks/engine/mock-context.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';
import { ProviderHealth } from '../../../src/rails/provider-health.ts';
import type { Decision, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { Scheduler } from '../../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps what it is told, so tests can read what the engine reported. */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (message, fields) => void lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => void lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => void lines.push({ level: 'error', message, fields }),
  };
}

/** A store, a virtual clock, a scheduler and books: one "process" of a mock. */
export async function engineWorld(options: { store?: SqliteStore; boot?: number; rule?: (query: RailQuery) => Decision | undefined } = {}) {
  const store = options.store ?? new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(options.boot ?? 1));
  const logger = recordingLogger();
  const scheduler = new Scheduler({ store, clock, ids, logger, wallClock: new SystemClock(), boot: options.boot ?? 1 });
  const queries: RailQuery[] = [];
  const ctx: MockContext = {
    clock,
    scheduler,
    store,
    scenarios: {
      decide: (query) => {
        queries.push(query);
        return options.rule?.(query);
      },
    },
    health: new ProviderHealth(),
    logger,
    books: new MockTransactionBooks(store, clock),
    maxHoldMs: 300,
    defaultCallbackSeconds: 3,
  };
  return { store, clock, scheduler, logger, ctx, queries };
}

/** A sender that only remembers: what the planner asked to send, and when. */
export function fakeSender(clock: VirtualClock) {
  const sent: { message: CallbackMessage; reference: string; at: number }[] = [];
  return { sent, send: async (message: CallbackMessage, reference: string) => void sent.push({ message, reference, at: clock.now() - VIRTUAL_EPOCH }) };
}

/** Listens on a free port; returns the base URL and a closer. */
export async function serve(app: Express): Promise<{ base: string; close(): Promise<void> }> {
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A receiver that records each callback it gets (method, headers, exact body). */
export function callbackReceiver(status = 200) {
  const received: { method: string; path: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
  const app = express();
  app.use(express.text({ type: () => true }));
  app.all('/*rest', (req, res) => {
    received.push({ method: req.method, path: req.originalUrl, headers: req.headers, body: typeof req.body === 'string' ? req.body : '' });
    res.status(status).end();
  });
  return { app, received };
}
