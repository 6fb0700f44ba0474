import { join } from 'node:path';
import { compareThroughput } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { RailyardProcess } from '../launch.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';

const PATH = '/api/v1/trades/quote';
const BODY = JSON.stringify({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100000 });
const MIN_RATIO = 0.7;
const MAX_P99_MS = 20;

/** P1: quotes per second against bare express, and railyard's p99 at the configured connections. */
export const quote: Measure = {
  id: 'quote',
  aliases: ['p1'],
  title: 'P1 quote',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    // A virtual clock: quote expiries never fall due during the run, so no deferred work of
    // railyard's spills into the baseline rounds that follow its rounds.
    const server = await RailyardProcess.start({ dir: ctx.runDir, label: 'quote', db: join(ctx.runDir, 'quote.sqlite'), clock: 'virtual' });
    try {
      const probe = await expectOk(requestJson(server.baseUrl, 'POST', PATH, { headers: auth, body: BODY }), 'quote probe');
      const cmp = await compareThroughput(ctx, { label: 'quote', railyardUrl: server.baseUrl, method: 'POST', path: PATH, headers: auth, body: BODY, probe });
      const valid = cmp.railyard.invalidRounds === 0;
      const notes = [`virtual clock, ${ctx.connections} connections, ${ctx.rounds} rounds of ${ctx.durationSec} s; p99 over 2xx answers (autocannon, whole ms)`];
      if (!valid)
        notes.push(`railyard rounds with >1% non-2xx or errors: ${cmp.railyard.invalidRounds}; statuses ${JSON.stringify(cmp.railyard.statusCodes)}; e.g. ${cmp.railyard.sampleFailures[0] ?? ''}`);
      return {
        id: this.id,
        title: this.title,
        rows: [
          {
            measure: 'P1 quote req/s',
            railyard: fmt(cmp.railyard.okPerSec),
            baseline: fmt(cmp.baseline.okPerSec),
            ratio: ratioText(cmp.ratio),
            target: `≥ ${MIN_RATIO.toFixed(2)}×`,
            met: valid && cmp.ratio >= MIN_RATIO,
          },
          {
            measure: `P1 quote p99 @${ctx.connections} conn`,
            railyard: fmt(cmp.railyard.p99Ms, 'ms'),
            baseline: fmt(cmp.baseline.p99Ms, 'ms'),
            ratio: ratioText(cmp.railyard.p99Ms / cmp.baseline.p99Ms),
            target: `< ${MAX_P99_MS} ms`,
            met: valid && cmp.railyard.p99Ms < MAX_P99_MS,
          },
        ],
        raw: { ...cmp, probeStatus: probe.status, memoryAfter: server.memory() },
        notes,
      };
    } finally {
      await server.stop();
    }
  },
};
