import { join } from 'node:path';
import { compareThroughput } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { RailyardProcess } from '../launch.ts';
import { load, type LoadResult } from '../load.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { uniqueIdempotencyKeys } from '../unique-keys.ts';

const PATH = '/api/v1/charges';
export const CHARGE_BODY = JSON.stringify({ amount: 10000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });

/** Charges to the success number at `baseUrl` for `durationSec`, each with an Idempotency-Key of its own (`keys` names them). */
export function chargeLoad(baseUrl: string, connections: number, durationSec: number, keys: string): Promise<LoadResult> {
  return load({ baseUrl, method: 'POST', path: PATH, headers: auth, body: CHARGE_BODY, connections, durationSec, setupRequest: uniqueIdempotencyKeys(keys) });
}

/**
 * POST /api/v1/charges to the success number, each with its own Idempotency-Key: the initiation
 * (record, MTN mock over HTTP, answer). Reported, no target.
 */
export const chargeInitiate: Measure = {
  id: 'charge',
  aliases: ['charge-initiate'],
  title: 'charge initiate',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    // A virtual clock: the callbacks never fall due, so this measures the initiation alone
    // (P2 measures the whole flow) and nothing deferred spills into the baseline rounds.
    const server = await RailyardProcess.start({ dir: ctx.runDir, label: 'charge', db: join(ctx.runDir, 'charge.sqlite'), clock: 'virtual' });
    try {
      const probe = await expectOk(requestJson(server.baseUrl, 'POST', PATH, { headers: { ...auth, 'idempotency-key': 'bench-charge-probe' }, body: CHARGE_BODY }), 'charge probe');
      const cmp = await compareThroughput(ctx, {
        label: 'charge',
        railyardUrl: server.baseUrl,
        method: 'POST',
        path: PATH,
        headers: auth,
        body: CHARGE_BODY,
        setupRequest: uniqueIdempotencyKeys('bench-charge'),
        probe,
      });
      const valid = cmp.railyard.invalidRounds === 0;
      const notes = [`virtual clock (callbacks never fall due), success number 0551234987, unique Idempotency-Key per request, ${ctx.connections} connections`];
      if (!valid)
        notes.push(
          `charge: railyard rounds with >1% non-2xx or errors: ${cmp.railyard.invalidRounds}; statuses ${JSON.stringify(cmp.railyard.statusCodes)}; e.g. ${cmp.railyard.sampleFailures[0] ?? ''}`,
        );
      return {
        id: this.id,
        title: this.title,
        rows: [
          { measure: 'charge initiate req/s', railyard: fmt(cmp.railyard.okPerSec), baseline: fmt(cmp.baseline.okPerSec), ratio: ratioText(cmp.ratio), target: 'report', met: valid ? null : false },
          {
            measure: `charge initiate p99 @${ctx.connections} conn`,
            railyard: fmt(cmp.railyard.p99Ms, 'ms'),
            baseline: fmt(cmp.baseline.p99Ms, 'ms'),
            ratio: ratioText(cmp.railyard.p99Ms / cmp.baseline.p99Ms),
            target: 'report',
            met: valid ? null : false,
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
