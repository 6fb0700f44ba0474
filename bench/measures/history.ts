import { join } from 'node:path';
import { startPostgresCluster, type PostgresCluster } from '../../test/support/postgres-cluster.ts';
import { summarise } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { RailyardProcess, type Memory } from '../launch.ts';
import type { LoadResult } from '../load.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult, type TableRow } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { readTemplate, seedHistory, type HistoryReport } from '../seed-history.ts';
import { CHARGE_BODY, chargeLoad } from './charge-initiate.ts';

// History: does a charge cost more once the store holds a lot of them? Charge initiate 2xx/s on a
// fresh store against a store already holding N charges with their mock transactions (seeded
// straight into the database), on SQLite and on PostgreSQL, in interleaved rounds: the ratio
// history ÷ fresh is the figure (target ≥ 0.8×), with the RSS of the process on the grown store
// (target < 300 MB at 1M).

const MIN_RATIO = 0.8;
const MAX_RSS_MB = 300;

export type StoreKind = 'SQLite' | 'PostgreSQL';

const mb = (m: Memory) => m.rssKb / 1024;

interface Pair {
  fresh: RailyardProcess;
  history: RailyardProcess;
  seed: HistoryReport;
  rssIdle: Memory;
}

/** Starts railyard on `db`, makes the one charge whose mock transaction the history copies, and stops it. */
async function prepare(ctx: BenchContext, label: string, db: string): Promise<void> {
  const server = await RailyardProcess.start({ dir: ctx.runDir, label: `${label}-schema`, db, clock: 'virtual' });
  try {
    await expectOk(requestJson(server.baseUrl, 'POST', '/api/v1/charges', { headers: { ...auth, 'idempotency-key': `bench-${label}-template` }, body: CHARGE_BODY }), `${label} template charge`);
  } finally {
    await server.stop();
  }
}

async function startPair(ctx: BenchContext, label: string, store: StoreKind, freshDb: string, historyDb: string, charges: number): Promise<Pair> {
  await prepare(ctx, `${label}-grown`, historyDb);
  const template = await readTemplate(historyDb);
  ctx.log(`  history ${store}: seeding ${charges.toLocaleString('en')} charges with their transactions, journals and mock transactions`);
  const seed = await seedHistory(historyDb, charges, template);
  ctx.log(`  history ${store}: seeded in ${seed.seconds.toFixed(1)} s`);
  const fresh = await RailyardProcess.start({ dir: ctx.runDir, label: `${label}-fresh`, db: freshDb, clock: 'virtual' });
  const history = await RailyardProcess.start({ dir: ctx.runDir, label: `${label}-grown`, db: historyDb, clock: 'virtual', startTimeoutMs: 300_000 });
  return { fresh, history, seed, rssIdle: history.memory() };
}

/** What the history measure says before its rows: how the load and the history are made. */
export function historyNote(ctx: BenchContext): string {
  return `history: charge initiate (success number, unique Idempotency-Key, ${ctx.connections} connections, virtual clock) on a fresh store and on one holding ${ctx.scale.historyCharges.toLocaleString('en')} successful charges, each with its transactions row, settlement journal (3 postings) and mtn-momo mock transaction, seeded straight into the database; ${ctx.rounds} interleaved rounds of ${ctx.durationSec} s`;
}

export interface HistoryRatio {
  rows: TableRow[];
  notes: string[];
  /** Every round and figure; undefined when the stores could not be prepared. */
  raw: Record<string, unknown> | undefined;
}

export interface HistoryRatioOptions {
  store: StoreKind;
  /** Prefix of the processes' logs and the benchmark's Idempotency-Keys. */
  label: string;
  /** The fresh store's and the grown store's databases (URLs or SQLite paths), asked for once. */
  databases: () => Promise<[fresh: string, grown: string]>;
}

/**
 * Charge initiate 2xx/s on a store holding ctx.scale.historyCharges charges ÷ on a fresh one, in
 * interleaved rounds, and the RSS of the grown store's process: two rows and their notes. A store
 * that cannot be prepared gives an error row, not an exception.
 */
export async function measureHistoryRatio(ctx: BenchContext, { store, label, databases }: HistoryRatioOptions): Promise<HistoryRatio> {
  const charges = ctx.scale.historyCharges;
  const rows: TableRow[] = [];
  const notes: string[] = [];
  let pair: Pair;
  try {
    const [freshDb, historyDb] = await databases();
    pair = await startPair(ctx, label, store, freshDb, historyDb, charges);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    rows.push({ measure: `history ${store}: charge rate at ${charges.toLocaleString('en')} ÷ at 0`, railyard: 'error', baseline: 'n/a', ratio: 'n/a', target: `≥ ${MIN_RATIO}×`, met: false });
    notes.push(`history ${store}: ${message.split('\n')[0]}`);
    return { rows, notes, raw: undefined };
  }
  try {
    const run = (server: RailyardProcess, durationSec: number, tag: string) => chargeLoad(server.baseUrl, ctx.connections, durationSec, `bench-${label}-${tag}`);
    ctx.log(`  history ${store}: warm-up`);
    await run(pair.fresh, ctx.warmupSec, 'warm-fresh');
    await run(pair.history, ctx.warmupSec, 'warm-grown');
    const rounds: { fresh: LoadResult; history: LoadResult }[] = [];
    for (let round = 1; round <= ctx.rounds; round++) {
      ctx.log(`  history ${store}: round ${round}/${ctx.rounds}`);
      const fresh = await run(pair.fresh, ctx.durationSec, `fresh-${round}`);
      const grown = await run(pair.history, ctx.durationSec, `grown-${round}`);
      rounds.push({ fresh, history: grown });
    }
    const fresh = summarise(rounds.map((r) => r.fresh));
    const grown = summarise(rounds.map((r) => r.history));
    const ratio = grown.okPerSec / fresh.okPerSec;
    const valid = fresh.invalidRounds === 0 && grown.invalidRounds === 0;
    const rssAfter = pair.history.memory();
    const rssFresh = pair.fresh.memory();
    rows.push({
      measure: `history ${store}: charge rate at ${charges.toLocaleString('en')} ÷ at 0`,
      railyard: fmt(grown.okPerSec),
      baseline: fmt(fresh.okPerSec),
      ratio: ratioText(ratio),
      target: `≥ ${MIN_RATIO}×`,
      met: valid && ratio >= MIN_RATIO,
    });
    rows.push({
      measure: `history ${store}: RSS with ${charges.toLocaleString('en')} charges`,
      railyard: fmt(mb(rssAfter), 'MB'),
      baseline: fmt(mb(rssFresh), 'MB'),
      ratio: ratioText(rssAfter.rssKb / rssFresh.rssKb),
      target: charges >= 1_000_000 ? `< ${MAX_RSS_MB} MB` : `report (< ${MAX_RSS_MB} MB at 1M)`,
      met: charges >= 1_000_000 ? mb(rssAfter) < MAX_RSS_MB : null,
    });
    notes.push(
      `history ${store}: seeded in ${pair.seed.seconds.toFixed(1)} s; p99 ${fmt(grown.p99Ms, 'ms')} with history, ${fmt(fresh.p99Ms, 'ms')} fresh; RSS of the grown store's process ${fmt(mb(pair.rssIdle), 'MB')} idle after start, ${fmt(mb(rssAfter), 'MB')} after the load (fresh store: ${fmt(mb(rssFresh), 'MB')}); baseline column = the fresh store`,
    );
    if (Object.keys(grown.statusCodes).length === 0) notes.push(`history ${store}: the grown store answered no request within a round (each took longer than the ${ctx.durationSec} s round)`);
    if (!valid)
      notes.push(
        `history ${store}: rounds with >1% non-2xx or errors (fresh ${fresh.invalidRounds}, grown ${grown.invalidRounds}); statuses ${JSON.stringify({ fresh: fresh.statusCodes, grown: grown.statusCodes })}; e.g. ${[...fresh.sampleFailures, ...grown.sampleFailures][0] ?? ''}`,
      );
    return { rows, notes, raw: { seed: pair.seed, fresh, history: grown, ratio, rssIdle: pair.rssIdle, rssAfter, rssFresh, rounds } };
  } finally {
    await pair.fresh.stop();
    await pair.history.stop();
  }
}

export const history: Measure = {
  id: 'history',
  aliases: ['history-rate'],
  title: 'charge rate with history (0 vs N charges), SQLite and PostgreSQL',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const rows: TableRow[] = [];
    const raw: Record<string, unknown> = { charges: ctx.scale.historyCharges };
    const notes: string[] = [historyNote(ctx)];
    let cluster: PostgresCluster | null = null;
    try {
      for (const store of ['SQLite', 'PostgreSQL'] as const) {
        const part = await measureHistoryRatio(ctx, {
          store,
          label: `history-${store.toLowerCase()}`,
          databases: async () => {
            if (store === 'SQLite') return [join(ctx.runDir, 'history-fresh.sqlite'), join(ctx.runDir, 'history-grown.sqlite')];
            cluster = await startPostgresCluster();
            return [await cluster.createDatabase(), await cluster.createDatabase()];
          },
        });
        rows.push(...part.rows);
        notes.push(...part.notes);
        if (part.raw) raw[store] = part.raw;
      }
      return { id: this.id, title: this.title, rows, raw, notes };
    } finally {
      await (cluster as PostgresCluster | null)?.stop();
    }
  },
};
