import pg from 'pg';
import { startPostgresCluster } from '../test/support/postgres-cluster.ts';
import { RailyardProcess, sleep } from './launch.ts';
import { load, type LoadSpec } from './load.ts';
import type { BenchContext } from './measure.ts';

// Statements per operation: railyard on a cluster of its own with pg_stat_statements loaded (the
// compose file's settings plus shared_preload_libraries), one window of load per operation, counted
// until the work the requests left behind (retries, jobs due at once) has drained. The statements
// railyard runs while idle (heartbeat, job polls), counted before any load, are taken off at their
// rate. Not the cluster whose throughput the bench reports: the extension is not what the compose
// file ships.

export interface StatementCount {
  /** Operations answered in the window (2xx or not). */
  operations: number;
  /** Statements per operation, BEGIN and COMMIT included: each is a round trip unless pipelined. */
  statementsPerOp: number;
  /** Explicit transactions (BEGIN) per operation. */
  transactionsPerOp: number;
  /** The server's execution time of those statements per operation, µs (planning, parsing and the wire not included). */
  executionUsPerOp: number;
  /** Statements run per second while idle, taken off the counts. */
  idleStatementsPerSec: number;
  /** Seconds counted after the load stopped, until the rate fell back to idle. */
  drainSec: number;
  /** The statements, most frequent first: calls per operation and mean execution µs. */
  statements: { query: string; callsPerOp: number; meanUs: number }[];
}

export interface StatementEndpoint {
  id: string;
  spec: (baseUrl: string, durationSec: number) => LoadSpec;
}

interface Totals {
  calls: number;
  begins: number;
  execMs: number;
  rows: { query: string; calls: number; execMs: number }[];
}

async function readTotals(statsUrl: string, database: string): Promise<Totals> {
  const client = new pg.Client({ connectionString: statsUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ query: string; calls: string; exec_ms: number }>(
      `SELECT query, calls, total_exec_time AS exec_ms FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY calls DESC`,
      [database],
    );
    const list = rows.map((r) => ({ query: r.query.replace(/\s+/g, ' '), calls: Number(r.calls), execMs: Number(r.exec_ms) }));
    return {
      calls: list.reduce((s, r) => s + r.calls, 0),
      begins: list.filter((r) => /^begin\b/i.test(r.query)).reduce((s, r) => s + r.calls, 0),
      execMs: list.reduce((s, r) => s + r.execMs, 0),
      rows: list,
    };
  } finally {
    await client.end();
  }
}

async function reset(statsUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: statsUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_stat_statements_reset()');
  } finally {
    await client.end();
  }
}

const POLL_MS = 500;
const MAX_DRAIN_MS = 30_000;

/** Waits until the statements per second are back to about the idle rate; returns the ms waited. */
async function drain(statsUrl: string, database: string, idlePerSec: number): Promise<number> {
  const start = performance.now();
  let last = (await readTotals(statsUrl, database)).calls;
  for (;;) {
    await sleep(POLL_MS * 2);
    const now = (await readTotals(statsUrl, database)).calls;
    const perSec = ((now - last) * 1_000) / (POLL_MS * 2);
    last = now;
    if (perSec <= idlePerSec * 1.5 + 5 || performance.now() - start > MAX_DRAIN_MS) return performance.now() - start;
  }
}

/** Counts the statements of each endpoint's operations on a cluster of its own; `settings` are the compose file's. */
export async function countStatements(ctx: BenchContext, settings: Record<string, string>, endpoints: StatementEndpoint[]): Promise<Record<string, StatementCount>> {
  const cluster = await startPostgresCluster({ settings: { ...settings, shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.max': '10000' } });
  let server: RailyardProcess | undefined;
  try {
    const db = await cluster.createDatabase();
    const statsUrl = await cluster.createDatabase();
    const database = new URL(db).pathname.slice(1);
    const admin = new pg.Client({ connectionString: statsUrl });
    await admin.connect();
    await admin.query('CREATE EXTENSION pg_stat_statements').finally(() => admin.end());
    server = await RailyardProcess.start({ dir: ctx.runDir, label: 'pg-statements', db, clock: 'virtual' });
    const window = ctx.durationSec;
    ctx.log(`  postgres statements: ${window} s idle`);
    await reset(statsUrl);
    const idleStart = performance.now();
    await sleep(window * 1_000);
    const idle = await readTotals(statsUrl, database);
    const idleSec = (performance.now() - idleStart) / 1_000;
    const idleRate = new Map(idle.rows.map((r) => [r.query, r.calls / idleSec]));
    const counts: Record<string, StatementCount> = {};
    for (const endpoint of endpoints) {
      ctx.log(`  postgres statements ${endpoint.id}: warm-up, ${window} s of load, then until drained`);
      await load(endpoint.spec(server.baseUrl, ctx.warmupSec));
      await drain(statsUrl, database, idle.calls / idleSec);
      await reset(statsUrl);
      const loadStart = performance.now();
      const result = await load(endpoint.spec(server.baseUrl, window));
      const drainMs = await drain(statsUrl, database, idle.calls / idleSec);
      const loaded = await readTotals(statsUrl, database);
      const seconds = (performance.now() - loadStart) / 1_000;
      const operations = result.ok2xx + result.non2xx;
      const idleShare = seconds / idleSec;
      counts[endpoint.id] = {
        operations,
        statementsPerOp: (loaded.calls - idle.calls * idleShare) / operations,
        transactionsPerOp: (loaded.begins - idle.begins * idleShare) / operations,
        executionUsPerOp: ((loaded.execMs - idle.execMs * idleShare) * 1_000) / operations,
        idleStatementsPerSec: idle.calls / idleSec,
        drainSec: drainMs / 1_000,
        statements: loaded.rows
          .map((r) => ({ query: r.query.slice(0, 160), callsPerOp: (r.calls - (idleRate.get(r.query) ?? 0) * seconds) / operations, meanUs: (r.execMs * 1_000) / r.calls }))
          .filter((r) => r.callsPerOp >= 0.01)
          .sort((a, b) => b.callsPerOp - a.callsPerOp),
      };
    }
    return counts;
  } finally {
    await server?.stop();
    await cluster.stop();
  }
}
