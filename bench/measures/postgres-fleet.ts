import { join } from 'node:path';
import { cpus } from 'node:os';
import pg from 'pg';
import { startPostgresCluster, type PostgresCluster } from '../../test/support/postgres-cluster.ts';
import { COMPOSE_FILE, composePostgresSettings } from '../compose-postgres-settings.ts';
import { summarise, type LoadSummary } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { launchBaseline, RailyardProcess, REPO_ROOT, type ChildServer } from '../launch.ts';
import { load, type LoadResult } from '../load.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult, type TableRow } from '../measure.ts';
import { countStatements, type StatementCount } from '../postgres-statements.ts';
import { startCpuReading, type RoundCpu } from '../process-cpu.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { uniqueIdempotencyKeys } from '../unique-keys.ts';
import { CHARGE_BODY } from './charge-initiate.ts';
import { historyNote, measureHistoryRatio } from './history.ts';

// The PostgreSQL column: quote and charge throughput of railyard on SQLite (one process), on
// PostgreSQL with one process, and on PostgreSQL with three processes sharing one database, the
// load spread round-robin over the three (autocannon sends connection i to instance i mod 3, as
// a balancer would). Every side runs in the same interleaved rounds against the same bare express
// baseline, so the ratios compare; the machine runs the database, every instance and the load
// generator, so three instances share its cores with everything else. PostgreSQL runs with the
// settings deploy/compose.yaml ships. Then, for a throughput model on other machines: the CPU
// each operation costs the database, railyard and the load generator (PostgreSQL ×1 rounds), the
// statements each sends (a cluster of its own with pg_stat_statements), and the history ratio on
// PostgreSQL (the history measure's, on this measure's cluster).

const QUOTE = { path: '/api/v1/trades/quote', body: JSON.stringify({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100000 }) };
const CHARGE = { path: '/api/v1/charges', body: CHARGE_BODY };
const ENDPOINTS = [
  { id: 'quote', ...QUOTE },
  { id: 'charge', ...CHARGE },
] as const;

/** The server settings the note states: those that decide durability, memory and SERIALIZABLE's room. */
const SHOWN_SETTINGS = ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_level', 'shared_buffers', 'max_connections', 'max_pred_locks_per_transaction'];

interface Side {
  name: string;
  servers: RailyardProcess[];
  urls: string[];
}

interface Round {
  result: LoadResult;
  cpu: RoundCpu;
}

/** CPU µs per answered request over some rounds: each counter's total ÷ the answers' total. */
interface CpuPerOp {
  databaseUs: number;
  serverUs: number;
  loadUs: number;
  /** Share of the machine's cores the three used, over the rounds' time. */
  busyShare: number;
}

function cpuPerOp(rounds: Round[], cores: number): CpuPerOp {
  const answered = rounds.reduce((s, r) => s + r.result.ok2xx + r.result.non2xx, 0);
  const total = (pick: (c: RoundCpu) => number) => rounds.reduce((s, r) => s + pick(r.cpu), 0);
  const seconds = rounds.reduce((s, r) => s + r.result.durationSec, 0);
  const busy = total((c) => (Number.isNaN(c.databaseMs) ? 0 : c.databaseMs) + c.serverMs + c.loadMs);
  return {
    databaseUs: (total((c) => c.databaseMs) * 1_000) / answered,
    serverUs: (total((c) => c.serverMs) * 1_000) / answered,
    loadUs: (total((c) => c.loadMs) * 1_000) / answered,
    busyShare: busy / (seconds * 1_000 * cores),
  };
}

/** Starts `count` railyard processes on one database: the first migrates, the rest start together. */
async function startFleet(ctx: BenchContext, label: string, db: string, count: number): Promise<RailyardProcess[]> {
  const start = (i: number) => RailyardProcess.start({ dir: ctx.runDir, label: `${label}-${i + 1}`, db, clock: 'virtual' });
  const first = await start(0);
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(i + 1)));
  return [first, ...rest];
}

/** `name=value` of the settings the server runs with, as SHOW prints them. */
async function serverSettings(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; value: string }>('SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1)', [SHOWN_SETTINGS]);
    const byName = new Map(rows.map((r) => [r.name, r.value]));
    return SHOWN_SETTINGS.map((name) => `${name}=${byName.get(name) ?? '?'}`).join(', ');
  } finally {
    await client.end();
  }
}

function settingsNote(settings: Record<string, string>, shown: string): string {
  const file = COMPOSE_FILE.slice(REPO_ROOT.length + 1);
  const given = Object.entries(settings).map(([name, value]) => `${name}=${value}`);
  if (process.env.RAILYARD_TEST_PG_URL)
    return `PostgreSQL: the running server RAILYARD_TEST_PG_URL names, with its own settings (${shown}), not necessarily those ${file} ships (${given.join(', ') || 'none: the defaults'})`;
  return (
    `PostgreSQL with the settings ${file} ships: ${given.length ? given.join(', ') : 'none (its postgres service passes no -c flag), so the server defaults'} on a throwaway cluster (initdb --locale=C as the image's POSTGRES_INITDB_ARGS; ` +
    `trust instead of scram-sha-256 on 127.0.0.1, a cost paid once per pooled connection); the server runs with ${shown}`
  );
}

export const postgresFleet: Measure = {
  id: 'postgres',
  aliases: ['pg', 'fleet'],
  title: 'PostgreSQL column (quote, charge; 1 and 3 instances; CPU and statements per operation; history ratio)',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    let cluster: PostgresCluster | null = null;
    const servers: RailyardProcess[] = [];
    const cores = cpus().length;
    try {
      const settings = composePostgresSettings();
      cluster = await startPostgresCluster({ settings });
      const sqlite = await startFleet(ctx, 'pg-ref-sqlite', join(ctx.runDir, 'pg-ref.sqlite'), 1);
      servers.push(...sqlite);
      const oneDb = await cluster.createDatabase();
      const one = await startFleet(ctx, 'pg-x1', oneDb, 1);
      servers.push(...one);
      const three = await startFleet(ctx, 'pg-x3', await cluster.createDatabase(), 3);
      servers.push(...three);
      const sides: Side[] = [
        { name: 'SQLite ×1', servers: sqlite, urls: sqlite.map((s) => s.baseUrl) },
        { name: 'PostgreSQL ×1', servers: one, urls: one.map((s) => s.baseUrl) },
        { name: 'PostgreSQL ×3', servers: three, urls: three.map((s) => s.baseUrl) },
      ];

      const rows: TableRow[] = [];
      const raw: Record<string, unknown> = { settings, cores };
      const shown = await serverSettings(oneDb);
      raw.serverSettings = shown;
      const notes: string[] = [
        settingsNote(settings, shown),
        `virtual clock; ${ctx.connections} connections, ` +
          `spread ${Array.from({ length: 3 }, (_, i) => Math.floor(ctx.connections / 3) + (i < ctx.connections % 3 ? 1 : 0)).join('/')} over the three instances; ${ctx.rounds} interleaved rounds of ${ctx.durationSec} s; ` +
          `the database, every instance and the load generator share the machine's ${cores} cores`,
      ];
      const cpuRows: TableRow[] = [];
      for (const endpoint of ENDPOINTS) {
        const headers = endpoint.id === 'charge' ? { ...auth, 'idempotency-key': 'bench-pg-charge-probe' } : auth;
        const probe = await expectOk(requestJson(sides[0]!.urls[0]!, 'POST', endpoint.path, { headers, body: endpoint.body }), `${endpoint.id} probe`);
        const baseline: ChildServer = await launchBaseline({ dir: ctx.runDir, label: `baseline-pg-${endpoint.id}`, method: 'post', path: endpoint.path, status: probe.status, body: probe.text });
        try {
          const run = (urls: string | string[], durationSec: number, side: string) =>
            load({
              baseUrl: urls,
              method: 'POST',
              path: endpoint.path,
              headers: auth,
              body: endpoint.body,
              connections: ctx.connections,
              durationSec,
              ...(endpoint.id === 'charge' ? { setupRequest: uniqueIdempotencyKeys(`bench-pg-${side.replace(/[^A-Za-z0-9-]+/g, '-')}`) } : {}),
            });
          // A round with the CPU each part used meanwhile: the database counts only for PostgreSQL sides.
          const measured = async (roots: number[], onPostgres: boolean, urls: string | string[], durationSec: number, side: string): Promise<Round> => {
            const reading = startCpuReading(onPostgres ? cluster!.serverPid : undefined, roots);
            const result = await run(urls, durationSec, side);
            return { result, cpu: reading() };
          };
          ctx.log(`  postgres ${endpoint.id}: warm-up`);
          await run(baseline.baseUrl, ctx.warmupSec, 'warm');
          for (const side of sides) await run(side.urls, ctx.warmupSec, `warm-${side.name}`);
          const rounds: { baseline: Round; sides: Round[] }[] = [];
          for (let round = 1; round <= ctx.rounds; round++) {
            ctx.log(`  postgres ${endpoint.id}: round ${round}/${ctx.rounds}`);
            const b = await measured([baseline.pgid], false, baseline.baseUrl, ctx.durationSec, 'baseline');
            const results: Round[] = [];
            for (const side of sides)
              results.push(
                await measured(
                  side.servers.map((s) => s.pgid),
                  side.name.startsWith('PostgreSQL'),
                  side.urls,
                  ctx.durationSec,
                  `${side.name}-${round}`,
                ),
              );
            rounds.push({ baseline: b, sides: results });
          }
          const base: LoadSummary = summarise(rounds.map((r) => r.baseline.result));
          const summaries = sides.map((_, i) => summarise(rounds.map((r) => r.sides[i]!.result)));
          sides.forEach((side, i) => {
            const s = summaries[i]!;
            const valid = s.invalidRounds === 0;
            rows.push({
              measure: `${endpoint.id} req/s, ${side.name}`,
              railyard: fmt(s.okPerSec),
              baseline: fmt(base.okPerSec),
              ratio: ratioText(s.okPerSec / base.okPerSec),
              target: 'report',
              met: valid ? null : false,
            });
            if (!valid) notes.push(`${endpoint.id} ${side.name}: ${s.invalidRounds} round(s) with >1% non-2xx or errors; statuses ${JSON.stringify(s.statusCodes)}; e.g. ${s.sampleFailures[0] ?? ''}`);
          });
          const [, pg1, pg3] = summaries;
          notes.push(
            `${endpoint.id}: PostgreSQL ×3 ÷ ×1 = ${ratioText(pg3!.okPerSec / pg1!.okPerSec)}; PostgreSQL ×1 ÷ SQLite ×1 = ${ratioText(pg1!.okPerSec / summaries[0]!.okPerSec)}; ` +
              `p99 ${sides.map((side, i) => `${side.name} ${fmt(summaries[i]!.p99Ms, 'ms')}`).join(', ')} (baseline ${fmt(base.p99Ms, 'ms')})`,
          );

          const cpuBase = cpuPerOp(
            rounds.map((r) => r.baseline),
            cores,
          );
          const cpu = sides.map((_, i) =>
            cpuPerOp(
              rounds.map((r) => r.sides[i]!),
              cores,
            ),
          );
          const cpuPg1 = cpu[1]!;
          const cpuRow = (what: string, value: number, baselineValue: number): TableRow => ({
            measure: `${endpoint.id} CPU µs per request, ${what}, PostgreSQL ×1`,
            railyard: fmt(value, 'µs'),
            baseline: Number.isFinite(baselineValue) ? fmt(baselineValue, 'µs') : 'n/a',
            ratio: Number.isFinite(baselineValue) ? ratioText(value / baselineValue) : 'n/a',
            target: 'report',
            met: null,
          });
          cpuRows.push(
            cpuRow('PostgreSQL server', cpuPg1.databaseUs, Number.NaN),
            cpuRow('railyard process', cpuPg1.serverUs, cpuBase.serverUs),
            cpuRow('load generator', cpuPg1.loadUs, cpuBase.loadUs),
          );
          notes.push(
            `${endpoint.id} CPU per request (all rounds' CPU ÷ answers; baseline column = bare express): ` +
              sides
                .map(
                  (side, i) =>
                    `${side.name} railyard ${fmt(cpu[i]!.serverUs, 'µs')}${side.name.startsWith('PostgreSQL') ? ` + PostgreSQL ${fmt(cpu[i]!.databaseUs, 'µs')}` : ''} + load ${fmt(cpu[i]!.loadUs, 'µs')}, machine ${fmt(cpu[i]!.busyShare * 100, '%')} busy`,
                )
                .join('; ') +
              `; bare express ${fmt(cpuBase.serverUs, 'µs')} + load ${fmt(cpuBase.loadUs, 'µs')}, machine ${fmt(cpuBase.busyShare * 100, '%')} busy (the idle instances' heartbeats and job polls count in PostgreSQL's share)`,
          );
          raw[endpoint.id] = {
            baseline: base,
            sides: Object.fromEntries(sides.map((side, i) => [side.name, summaries[i]])),
            cpuPerRequest: { baseline: cpuBase, ...Object.fromEntries(sides.map((side, i) => [side.name, cpu[i]])) },
            rounds,
          };
        } finally {
          await baseline.stop();
        }
      }
      if (cluster.serverPid === undefined) notes.push('the PostgreSQL server runs outside the bench (RAILYARD_TEST_PG_URL): its CPU is not measured');
      // The fleet's idle processes would only add noise to what follows.
      for (const s of servers.splice(0)) await s.stop();

      ctx.log('  postgres: statements per operation (a cluster with pg_stat_statements)');
      let statements: Record<string, StatementCount> | undefined;
      try {
        statements = await countStatements(
          ctx,
          settings,
          ENDPOINTS.map((endpoint) => ({
            id: endpoint.id,
            spec: (baseUrl, durationSec) => ({
              baseUrl,
              method: 'POST' as const,
              path: endpoint.path,
              headers: auth,
              body: endpoint.body,
              connections: ctx.connections,
              durationSec,
              ...(endpoint.id === 'charge' ? { setupRequest: uniqueIdempotencyKeys('bench-pg-statements') } : {}),
            }),
          })),
        );
      } catch (err) {
        notes.push(`statements per operation: not counted (${(err instanceof Error ? err.message : String(err)).split('\n')[0]})`);
      }
      for (const endpoint of ENDPOINTS) {
        const count = statements?.[endpoint.id];
        rows.push(...cpuRows.filter((r) => r.measure.startsWith(`${endpoint.id} `)));
        if (!count) continue;
        const row = (what: string, value: string): TableRow => ({ measure: `${endpoint.id} ${what}, PostgreSQL ×1`, railyard: value, baseline: 'n/a', ratio: 'n/a', target: 'report', met: null });
        rows.push(row('statements per request (BEGIN, COMMIT included)', fmt(count.statementsPerOp, '', 2)), row('PostgreSQL execution µs per request', fmt(count.executionUsPerOp, 'µs')));
        notes.push(
          `${endpoint.id} statements (pg_stat_statements on a cluster of its own, ${count.operations.toLocaleString('en')} requests in ${ctx.durationSec} s, counted until ${fmt(count.drainSec, 's')} after, ${fmt(count.idleStatementsPerSec)} idle statements/s taken off): ` +
            `${fmt(count.statementsPerOp, '', 2)} per request in ${fmt(count.transactionsPerOp, '', 2)} transactions; most frequent: ` +
            count.statements
              .slice(0, 6)
              .map((s) => `${fmt(s.callsPerOp, '', 2)}× ${s.query.slice(0, 70)}`)
              .join(' | ') +
            '; most execution time per request: ' +
            [...count.statements]
              .sort((a, b) => b.callsPerOp * b.meanUs - a.callsPerOp * a.meanUs)
              .slice(0, 3)
              .map((s) => `${fmt(s.callsPerOp * s.meanUs, 'µs')} (${fmt(s.callsPerOp, '', 2)}× ${fmt(s.meanUs, 'µs')}) ${s.query.slice(0, 90)}`)
              .join(' | '),
        );
      }
      raw.statements = statements;

      ctx.log('  postgres: history ratio');
      notes.push(historyNote(ctx));
      const historyStart = performance.now();
      const pgCluster = cluster;
      const part = await measureHistoryRatio(ctx, { store: 'PostgreSQL', label: 'pg-history', databases: async () => [await pgCluster.createDatabase(), await pgCluster.createDatabase()] });
      rows.push(...part.rows);
      notes.push(...part.notes, `history PostgreSQL: seeding and rounds took ${fmt((performance.now() - historyStart) / 1_000, 's')} in all`);
      raw.history = part.raw;
      return { id: this.id, title: this.title, rows, raw, notes };
    } finally {
      for (const s of servers) await s.stop();
      await cluster?.stop();
    }
  },
};
