import { join } from 'node:path';
import { startPostgresCluster, type PostgresCluster } from '../../test/support/postgres-cluster.ts';
import { summarise, type LoadSummary } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { launchBaseline, RailyardProcess, type ChildServer } from '../launch.ts';
import { load, type LoadResult } from '../load.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult, type TableRow } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { uniqueIdempotencyKeys } from '../unique-keys.ts';
import { CHARGE_BODY } from './charge-initiate.ts';

// The PostgreSQL column: quote and charge throughput of railyard on SQLite (one process), on
// PostgreSQL with one process, and on PostgreSQL with three processes sharing one database, the
// load spread round-robin over the three (autocannon sends connection i to instance i mod 3, as
// a balancer would). Every side runs in the same interleaved rounds against the same bare express
// baseline, so the ratios compare; the machine runs the database, every instance and the load
// generator, so three instances share its cores with everything else.

const QUOTE = { path: '/api/v1/trades/quote', body: JSON.stringify({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100000 }) };
const CHARGE = { path: '/api/v1/charges', body: CHARGE_BODY };

interface Side {
  name: string;
  urls: string[];
}

/** Starts `count` railyard processes on one database: the first migrates, the rest start together. */
async function startFleet(ctx: BenchContext, label: string, db: string, count: number): Promise<RailyardProcess[]> {
  const start = (i: number) => RailyardProcess.start({ dir: ctx.runDir, label: `${label}-${i + 1}`, db, clock: 'virtual' });
  const first = await start(0);
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(i + 1)));
  return [first, ...rest];
}

export const postgresFleet: Measure = {
  id: 'postgres',
  aliases: ['pg', 'fleet'],
  title: 'PostgreSQL column (quote, charge; 1 and 3 instances)',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    let cluster: PostgresCluster | null = null;
    const servers: RailyardProcess[] = [];
    try {
      cluster = await startPostgresCluster();
      const sqlite = await startFleet(ctx, 'pg-ref-sqlite', join(ctx.runDir, 'pg-ref.sqlite'), 1);
      servers.push(...sqlite);
      const one = await startFleet(ctx, 'pg-x1', await cluster.createDatabase(), 1);
      servers.push(...one);
      const three = await startFleet(ctx, 'pg-x3', await cluster.createDatabase(), 3);
      servers.push(...three);
      const sides: Side[] = [
        { name: 'SQLite ×1', urls: sqlite.map((s) => s.baseUrl) },
        { name: 'PostgreSQL ×1', urls: one.map((s) => s.baseUrl) },
        { name: 'PostgreSQL ×3', urls: three.map((s) => s.baseUrl) },
      ];

      const rows: TableRow[] = [];
      const raw: Record<string, unknown> = {};
      const notes: string[] = [
        `a throwaway PostgreSQL cluster on this machine (fsync off, as the tests run it); virtual clock; ${ctx.connections} connections, ` +
          `spread ${Array.from({ length: 3 }, (_, i) => Math.floor(ctx.connections / 3) + (i < ctx.connections % 3 ? 1 : 0)).join('/')} over the three instances; ${ctx.rounds} interleaved rounds of ${ctx.durationSec} s; ` +
          "the database, every instance and the load generator share the machine's cores",
      ];
      for (const endpoint of [
        { id: 'quote', ...QUOTE },
        { id: 'charge', ...CHARGE },
      ]) {
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
          ctx.log(`  postgres ${endpoint.id}: warm-up`);
          await run(baseline.baseUrl, ctx.warmupSec, 'warm');
          for (const side of sides) await run(side.urls, ctx.warmupSec, `warm-${side.name}`);
          const rounds: { baseline: LoadResult; sides: LoadResult[] }[] = [];
          for (let round = 1; round <= ctx.rounds; round++) {
            ctx.log(`  postgres ${endpoint.id}: round ${round}/${ctx.rounds}`);
            const b = await run(baseline.baseUrl, ctx.durationSec, 'baseline');
            const results: LoadResult[] = [];
            for (const side of sides) results.push(await run(side.urls, ctx.durationSec, `${side.name}-${round}`));
            rounds.push({ baseline: b, sides: results });
          }
          const base: LoadSummary = summarise(rounds.map((r) => r.baseline));
          const summaries = sides.map((_, i) => summarise(rounds.map((r) => r.sides[i]!)));
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
          raw[endpoint.id] = { baseline: base, sides: Object.fromEntries(sides.map((side, i) => [side.name, summaries[i]])), rounds };
        } finally {
          await baseline.stop();
        }
      }
      return { id: this.id, title: this.title, rows, raw, notes };
    } finally {
      for (const s of servers) await s.stop();
      await cluster?.stop();
    }
  },
};
