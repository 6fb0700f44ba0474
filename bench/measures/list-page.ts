import { encodeCursor } from '../../src/http/pagination.ts';
import { requestJson } from '../http-json.ts';
import { launchBaseline, RailyardProcess } from '../launch.ts';
import { fmt, interleave, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { sampleLatency, type LatencyResult } from '../sample-latency.ts';
import { median } from '../stats.ts';

const MAX_RATIO = 1.5;
/** One client: the p50 is the page's own latency, with no queueing behind another request. */
const CONNECTIONS = 1;
const FIRST = '/api/v1/transactions?page_size=20';
/** A page from the middle of the list: the keyset seek has to find its place in the index. */
const cursorPage = (rows: number) => `/api/v1/transactions?page_size=20&cursor=${encodeCursor(Math.floor(rows / 2))}`;
/** A type with no rows at all: the filter has to look at every row (context, no target). */
const RARE_TYPE = '/api/v1/transactions?page_size=20&type=trade';

interface PageSamples {
  first: LatencyResult;
  cursor: LatencyResult;
  rare: LatencyResult;
}

async function checkPage(server: RailyardProcess, path: string): Promise<void> {
  const res = await expectOk(requestJson(server.baseUrl, 'GET', path, { headers: auth, timeoutMs: 60_000 }), `GET ${path}`);
  const items = res.json?.data;
  if (!Array.isArray(items) || items.length !== 20) throw new Error(`GET ${path} gave ${Array.isArray(items) ? items.length : 'no'} items, not 20`);
}

/** P3: the p50 of a transactions page on a 1M-row database against the same page on a 1k-row one. */
export const listPage: Measure = {
  id: 'list',
  aliases: ['p3', 'list-page'],
  title: 'P3 list page',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const small = await ctx.databases.get(ctx.scale.smallRows);
    const large = await ctx.databases.get(ctx.scale.largeRows);
    // Both servers stay up and the rounds alternate, so a drift of the machine hits both sizes alike.
    const smallServer = await RailyardProcess.start({ dir: ctx.runDir, label: 'list-small', db: small.path, clock: 'virtual' });
    let largeServer: RailyardProcess | undefined;
    try {
      largeServer = await RailyardProcess.start({ dir: ctx.runDir, label: 'list-large', db: large.path, clock: 'virtual' });
      for (const [server, rows] of [
        [smallServer, ctx.scale.smallRows],
        [largeServer, ctx.scale.largeRows],
      ] as const) {
        await checkPage(server, FIRST);
        await checkPage(server, cursorPage(rows));
      }
      const sample = (server: RailyardProcess, path: string, maxRequests: number, maxSeconds: number) =>
        sampleLatency({ baseUrl: server.baseUrl, paths: [path], headers: auth, connections: CONNECTIONS, maxRequests, maxSeconds });
      const maxRequests = ctx.quick ? 300 : 3_000;
      const maxSeconds = Math.max(1, ctx.durationSec / 2);
      const pageBody = await expectOk(requestJson(smallServer.baseUrl, 'GET', FIRST, { headers: auth }), 'first page');
      const express = await launchBaseline({ dir: ctx.runDir, label: 'baseline-list', method: 'get', path: '/api/v1/transactions', status: 200, body: pageBody.text });
      try {
        ctx.log('  list: warm-up');
        for (const [server, rows] of [
          [smallServer, ctx.scale.smallRows],
          [largeServer, ctx.scale.largeRows],
        ] as const) {
          for (const path of [FIRST, cursorPage(rows), RARE_TYPE]) await sample(server, path, 200, maxSeconds);
        }
        await sampleLatency({ baseUrl: express.baseUrl, paths: [FIRST], connections: CONNECTIONS, maxRequests: 200, maxSeconds });
        const ls = largeServer;
        const pairs = await interleave<PageSamples & { express: LatencyResult }, PageSamples>(
          ctx,
          'list',
          async () => ({
            first: await sample(smallServer, FIRST, maxRequests, maxSeconds),
            cursor: await sample(smallServer, cursorPage(ctx.scale.smallRows), maxRequests, maxSeconds),
            rare: await sample(smallServer, RARE_TYPE, maxRequests, maxSeconds),
            express: await sampleLatency({ baseUrl: express.baseUrl, paths: [FIRST], connections: CONNECTIONS, maxRequests, maxSeconds }),
          }),
          async () => ({
            first: await sample(ls, FIRST, maxRequests, maxSeconds),
            cursor: await sample(ls, cursorPage(ctx.scale.largeRows), maxRequests, maxSeconds),
            rare: await sample(ls, RARE_TYPE, Math.min(maxRequests, 200), maxSeconds),
          }),
        );
        const med = (side: 'baseline' | 'railyard', key: 'first' | 'cursor' | 'rare') => median(pairs.map((p) => p[side][key].p50Ms));
        const invalid = pairs.flatMap((p) => [p.baseline.first, p.baseline.cursor, p.railyard.first, p.railyard.cursor]).filter((r) => r.invalid).length;
        const expressP50 = median(pairs.map((p) => p.baseline.express.p50Ms));
        const row = (label: string, key: 'first' | 'cursor' | 'rare', target: boolean) => {
          const ratio = med('railyard', key) / med('baseline', key);
          return {
            measure: label,
            railyard: fmt(med('railyard', key), 'ms', 2),
            baseline: fmt(med('baseline', key), 'ms', 2),
            ratio: ratioText(ratio),
            target: target ? `≤ ${MAX_RATIO.toFixed(2)}×` : 'report',
            met: target ? invalid === 0 && ratio <= MAX_RATIO : null,
          };
        };
        const largeLabel = ctx.scale.largeRows >= 1_000_000 ? `${ctx.scale.largeRows / 1_000_000}M` : `${ctx.scale.largeRows / 1_000}k`;
        const notes = [
          `P3: railyard = p50 on the ${ctx.scale.largeRows.toLocaleString('en')}-row database, baseline = the same page on the ${ctx.scale.smallRows.toLocaleString('en')}-row one; ${CONNECTIONS} connection, up to ${maxRequests} requests or ${maxSeconds} s per sample; bare express p50 for the same page bytes: ${fmt(expressP50, 'ms', 3)}`,
          `P3 seeding: ${large.report.charges} charges, ${large.report.transfers} transfers, ${large.report.journals} journals, ${large.report.postings} postings in ${large.report.seconds.toFixed(1)} s`,
        ];
        if (invalid) notes.push(`P3: samples with >1% non-2xx or errors: ${invalid}`);
        return {
          id: this.id,
          title: this.title,
          rows: [
            row(`P3 list first page p50 @${largeLabel} vs 1k`, 'first', true),
            row(`P3 list cursor page p50 @${largeLabel} vs 1k`, 'cursor', true),
            row(`list ?type=trade (no rows) p50 @${largeLabel} vs 1k`, 'rare', false),
          ],
          raw: {
            pairs,
            expressP50Ms: expressP50,
            seeds: { small: small.report, large: large.report },
            memoryAfter: { small: smallServer.memory(), large: largeServer.memory() },
          },
          notes,
        };
      } finally {
        await express.stop();
      }
    } finally {
      await largeServer?.stop();
      await smallServer.stop();
    }
  },
};
