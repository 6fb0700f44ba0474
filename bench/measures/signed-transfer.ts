import type { RequestSpec } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { merchantHeaders } from '../../src/kernel/api-client.ts';
import { compareThroughput } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { RailyardProcess, SANDBOX_SECRET } from '../launch.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, expectOk, fundWallet } from '../railyard-client.ts';

const PATH = '/api/v1/transfers';
const BODY = JSON.stringify({ amount: 100, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
/** Enough for every transfer a run can make (amount + 1.00 GHS fee each). */
const FUNDING = 100_000_000_000;

/** Headers of one signed transfer: its own Idempotency-Key, real-time timestamp, HMAC. */
export function signedTransferHeaders(idempotencyKey: string, rawBody: string, secret = SANDBOX_SECRET): Record<string, string> {
  return merchantHeaders({ method: 'POST', path: PATH, idempotencyKey, sign: true, signingSecret: secret }, rawBody, Date.now());
}

/** A setupRequest hook that signs every request afresh under its own key (the client's cost, paid on both sides). */
function signEach(prefix: string): (request: RequestSpec) => RequestSpec {
  const run = randomBytes(4).toString('hex');
  let n = 0;
  return (request) => ({ ...request, headers: { ...(request.headers ?? {}), ...signedTransferHeaders(`${prefix}-${run}-${++n}`, BODY) } });
}

/** A signed transfer: POST /api/v1/transfers, HMAC-signed, from a funded wallet. Reported, no target. */
export const signedTransfer: Measure = {
  id: 'transfer',
  aliases: ['signed-transfer'],
  title: 'signed transfer',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const server = await RailyardProcess.start({ dir: ctx.runDir, label: 'transfer', db: join(ctx.runDir, 'transfer.sqlite'), clock: 'virtual' });
    try {
      await fundWallet(server.baseUrl, FUNDING);
      const probe = await expectOk(requestJson(server.baseUrl, 'POST', PATH, { headers: { ...auth, ...signedTransferHeaders('bench-transfer-probe', BODY) }, body: BODY }), 'transfer probe');
      const cmp = await compareThroughput(ctx, {
        label: 'transfer',
        railyardUrl: server.baseUrl,
        method: 'POST',
        path: PATH,
        headers: auth,
        body: BODY,
        setupRequest: signEach('bench-transfer'),
        probe,
      });
      const valid = cmp.railyard.invalidRounds === 0;
      const perRound = cmp.pairs.map((p) => p.railyard.okPerSec);
      const notes = [`virtual clock, wallet funded once, 1.00 GHS momo transfers to 0551234987; railyard 2xx/s per round: ${perRound.join(', ')}`];
      if (!valid)
        notes.push(
          `transfer: railyard rounds with >1% non-2xx or errors: ${cmp.railyard.invalidRounds}; statuses ${JSON.stringify(cmp.railyard.statusCodes)}; e.g. ${cmp.railyard.sampleFailures[0] ?? ''}`,
        );
      return {
        id: this.id,
        title: this.title,
        rows: [
          { measure: 'signed transfer req/s', railyard: fmt(cmp.railyard.okPerSec), baseline: fmt(cmp.baseline.okPerSec), ratio: ratioText(cmp.ratio), target: 'report', met: valid ? null : false },
          {
            measure: `signed transfer p99 @${ctx.connections} conn`,
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
