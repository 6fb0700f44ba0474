import { Agent } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { requestJson } from '../http-json.ts';
import { RailyardProcess } from '../launch.ts';
import { fmt, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, clockState, fundWallet, waitUntilNothingDue } from '../railyard-client.ts';
import { runPool, type PoolResult } from '../run-pool.ts';
import { round } from '../stats.ts';
import { startWebhookReceiver } from '../webhook-receiver.ts';
import { signedTransferHeaders } from './signed-transfer.ts';
import { CREATE_CONCURRENCY, createCharges, P4_CONFIG, timedAdvance } from './simulated-day.ts';

// Settle rate: a burst of acknowledged operations (charges and signed transfers to the success
// number, half each) made while the virtual clock stands still, then one advance past their
// callbacks, timed: operations settled (success or failed) per second of that advance, their
// webhooks delivered to a receiver on the way. Target ≥ 4,000 operations/s.

const MIN_OPS_PER_SEC = 4_000;
/** Past every success-number callback (5 s), before the first status poll (60 s). */
const SETTLE_SECONDS = 10;

function createTransfers(baseUrl: string, agent: Agent, count: number): Promise<PoolResult> {
  return runPool(count, CREATE_CONCURRENCY, 600, async (i) => {
    const body = JSON.stringify({ amount: 1_000 + (i % 100), currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    const res = await requestJson(baseUrl, 'POST', '/api/v1/transfers', { headers: { ...auth, ...signedTransferHeaders(`bench-settle-trf-${i}`, body) }, body, agent, timeoutMs: 60_000 });
    return res.status === 201 || res.status === 200 || `${res.status} ${res.text.slice(0, 200)}`;
  });
}

function settledCount(db: string): { charges: number; transfers: number; pending: number } {
  const sqlite = new DatabaseSync(db, { readOnly: true });
  try {
    const n = (sql: string) => (sqlite.prepare(sql).get() as { n: number }).n;
    return {
      charges: n("SELECT COUNT(*) AS n FROM charges WHERE status IN ('success', 'failed')"),
      transfers: n("SELECT COUNT(*) AS n FROM transfers WHERE status IN ('success', 'failed')"),
      pending: n("SELECT (SELECT COUNT(*) FROM charges WHERE status NOT IN ('success', 'failed')) + (SELECT COUNT(*) FROM transfers WHERE status NOT IN ('success', 'failed')) AS n"),
    };
  } finally {
    sqlite.close();
  }
}

export const settleRate: Measure = {
  id: 'settle',
  aliases: ['settle-rate'],
  title: 'settle rate after a burst',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const receiver = await startWebhookReceiver({ dir: ctx.runDir, label: 'receiver-settle' });
    const db = join(ctx.runDir, 'settle.sqlite');
    const agent = new Agent({ keepAlive: true, maxSockets: CREATE_CONCURRENCY });
    let server: RailyardProcess | undefined;
    try {
      server = await RailyardProcess.start({ dir: ctx.runDir, label: 'settle', db, clock: 'virtual', config: P4_CONFIG, env: { RAILYARD_WEBHOOK_URL: receiver.url } });
      const total = ctx.scale.settleOperations;
      const half = Math.floor(total / 2);
      await fundWallet(server.baseUrl, 1_000_000_000);
      ctx.log(`  settle: a burst of ${half} charges and ${total - half} transfers (not timed)`);
      const charges = await createCharges(server.baseUrl, agent, half, 'bench-settle-chg', ['0551234987']);
      const transfers = await createTransfers(server.baseUrl, agent, total - half);
      const acknowledged = charges.done + transfers.done;
      await waitUntilNothingDue(server.baseUrl, 600);
      const before = settledCount(db);
      const pendingJobs = (await clockState(server.baseUrl)).pending_jobs;
      ctx.log(`  settle: advancing ${SETTLE_SECONDS} s over ${acknowledged} acknowledged operations (${pendingJobs} jobs pending)`);
      const advance = await timedAdvance(server.baseUrl, SETTLE_SECONDS);
      const after = settledCount(db);
      const settled = after.charges + after.transfers - (before.charges + before.transfers);
      const perSec = settled / advance.seconds;
      const ok = !advance.timedOut && advance.status === 200 && settled === acknowledged && perSec >= MIN_OPS_PER_SEC;
      const stats = await receiver.stats();
      const notes = [
        `settle: ${charges.done} charges and ${transfers.done} signed transfers to 0551234987 acknowledged (${charges.seconds.toFixed(1)} s + ${transfers.seconds.toFixed(1)} s, not timed) while the virtual clock stood still; one advance of ${SETTLE_SECONDS} s ran ${advance.jobsRun ?? '?'} jobs in ${fmt(advance.seconds, 's', 2)} (status ${advance.status}); ${settled} settled, ${after.pending} still pending; webhooks delivered ${JSON.stringify(stats.delivered)}`,
      ];
      if (charges.failed || transfers.failed) notes.push(`settle: creation failures ${charges.failed + transfers.failed}; e.g. ${[...charges.sampleFailures, ...transfers.sampleFailures][0]}`);
      if (advance.error) notes.push(`settle: the advance: ${advance.error}`);
      return {
        id: this.id,
        title: this.title,
        rows: [
          {
            measure: `settle rate after a burst of ${acknowledged.toLocaleString('en')}`,
            railyard: fmt(perSec, 'ops/s'),
            baseline: 'n/a',
            ratio: 'n/a',
            target: `≥ ${MIN_OPS_PER_SEC.toLocaleString('en')} ops/s`,
            met: ok,
          },
        ],
        raw: { acknowledged, settled, before, after, pendingJobs, advance, opsPerSec: round(perSec, 1), charges, transfers, delivered: stats.delivered, memoryAfter: server.memory() },
        notes,
      };
    } finally {
      agent.destroy();
      await server?.stop();
      await receiver.close();
    }
  },
};
