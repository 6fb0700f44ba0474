import { Agent } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { requestJson } from '../http-json.ts';
import { launchBaseline, RailyardProcess } from '../launch.ts';
import { fmt, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { advanceClock, auth, clockState, fundWallet, waitUntilNothingDue, type ClockState } from '../railyard-client.ts';
import { runPool, type PoolResult } from '../run-pool.ts';
import { sampleLatency } from '../sample-latency.ts';
import { round } from '../stats.ts';
import { startWebhookReceiver, type ReceiverStats } from '../webhook-receiver.ts';
import { signedTransferHeaders } from './signed-transfer.ts';

const DAY_SECONDS = 86_400;
const MAX_DAY_SECONDS = 2;
/** The client gives an advance this long before it reports "timed out" (railyard carries on). */
export const ADVANCE_TIMEOUT_MS = 300_000;
export const CREATE_CONCURRENCY = 32;
/**
 * Shorter real-time provider timeouts than the 5 s default: the timeout number holds a request
 * until the adapter gives up, and the creation phase should not wait 5 s for each. Not shorter
 * than 1 s: under the creation load an in-process mock call can take a few hundred ms, and a
 * 250 ms limit failed success-number charges with 502 provider_unavailable.
 */
export const P4_CONFIG = { rails: { timeout_ms: 1_000, max_hold_ms: 3_000 } };

const NUMBERS = ['0551234987', '0551234987', '0551234987', '0551234987', '0551234987', '0551234987', '0551234988', '0551234988', '0551234989', '0551234989'];

export interface AdvanceOutcome {
  seconds: number;
  timedOut: boolean;
  status: number;
  jobsRun: number | null;
  error?: string;
}

/**
 * Context for the absolute P4 targets: one bare express round trip at one connection. An advance
 * runs its jobs one at a time, and most of them make an HTTP call (a callback to railyard, a
 * webhook to the receiver), so this is a floor under the time per job.
 */
export async function expressRoundTripMs(ctx: BenchContext): Promise<number> {
  const express = await launchBaseline({ dir: ctx.runDir, label: 'baseline-rtt', method: 'post', path: '/webhooks', status: 200, body: '{}' });
  try {
    await sampleLatency({ baseUrl: express.baseUrl, paths: ['/healthz'], connections: 1, maxRequests: 200, maxSeconds: 2 });
    return (await sampleLatency({ baseUrl: express.baseUrl, paths: ['/healthz'], connections: 1, maxRequests: 1_000, maxSeconds: 3 })).p50Ms;
  } finally {
    await express.stop();
  }
}

/** One timed POST /sandbox/clock/advance, capped. */
export async function timedAdvance(baseUrl: string, seconds: number): Promise<AdvanceOutcome> {
  const started = performance.now();
  try {
    const res = await advanceClock(baseUrl, seconds, ADVANCE_TIMEOUT_MS);
    return {
      seconds: round((performance.now() - started) / 1_000, 3),
      timedOut: false,
      status: res.status,
      jobsRun: res.json?.data?.jobs_run ?? null,
      ...(res.status !== 200 ? { error: res.text.slice(0, 300) } : {}),
    };
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return { seconds: round((performance.now() - started) / 1_000, 3), timedOut, status: 0, jobsRun: null, error: String(err) };
  }
}

/** Creates `count` charges, the i-th to numbers[i % numbers.length]; a 200 or 201 counts as created. */
export function createCharges(baseUrl: string, agent: Agent, count: number, prefix: string, numbers: string[]): Promise<PoolResult> {
  return runPool(count, CREATE_CONCURRENCY, 600, async (i) => {
    const body = JSON.stringify({ amount: 10_000 + (i % 100), currency: 'GHS', channel: 'momo', msisdn: numbers[i % numbers.length] });
    const res = await requestJson(baseUrl, 'POST', '/api/v1/charges', { headers: { ...auth, 'idempotency-key': `${prefix}-${i}` }, body, agent, timeoutMs: 60_000 });
    return res.status === 201 || res.status === 200 || `${res.status} ${res.text.slice(0, 200)}`;
  });
}

function createTransfers(baseUrl: string, agent: Agent, count: number, prefix: string): Promise<PoolResult> {
  return runPool(count, CREATE_CONCURRENCY, 600, async (i) => {
    const body = JSON.stringify({ amount: 1_000 + (i % 100), currency: 'GHS', channel: 'momo', msisdn: NUMBERS[i % NUMBERS.length] });
    const res = await requestJson(baseUrl, 'POST', '/api/v1/transfers', { headers: { ...auth, ...signedTransferHeaders(`${prefix}-${i}`, body) }, body, agent, timeoutMs: 60_000 });
    return res.status === 201 || res.status === 200 || `${res.status} ${res.text.slice(0, 200)}`;
  });
}

function createQuotes(baseUrl: string, agent: Agent, count: number): Promise<PoolResult> {
  return runPool(count, CREATE_CONCURRENCY, 600, async (i) => {
    const body = { side: i % 2 ? 'sell' : 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 50_000 + i };
    const res = await requestJson(baseUrl, 'POST', '/api/v1/trades/quote', { headers: auth, body, agent, timeoutMs: 60_000 });
    return (res.status >= 200 && res.status < 300) || `${res.status} ${res.text.slice(0, 200)}`;
  });
}

function deliveries(stats: ReceiverStats) {
  return { requests: stats.requests, failuresSent: stats.failuresSent, delivered: stats.delivered };
}

/** P4a: one merchant's charges, transfers and quotes, then one advance of 24 h on the virtual clock, timed. */
export const simulatedDay: Measure = {
  id: 'day',
  aliases: ['p4', 'simulated-day'],
  title: 'P4 simulated day',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    // 10% of events fail twice, then succeed; 2% fail every time (eight attempts, the last after the day).
    const receiver = await startWebhookReceiver({ dir: ctx.runDir, label: 'receiver-day', failFraction: 0.1, failTimes: 2, alwaysFailFraction: 0.02 });
    let server: RailyardProcess | undefined;
    const agent = new Agent({ keepAlive: true, maxSockets: CREATE_CONCURRENCY });
    try {
      server = await RailyardProcess.start({
        dir: ctx.runDir,
        label: 'day',
        db: join(ctx.runDir, 'day.sqlite'),
        clock: 'virtual',
        config: P4_CONFIG,
        env: { RAILYARD_WEBHOOK_URL: receiver.url },
      });
      await fundWallet(server.baseUrl, 100_000_000_000);
      const half = Math.floor(ctx.scale.dayObjects / 2);
      ctx.log(`  day: creating ${half} charges, ${ctx.scale.dayObjects - half} transfers and ${Math.floor(ctx.scale.dayObjects / 10)} quotes (not timed)`);
      const created = performance.now();
      const charges = await createCharges(server.baseUrl, agent, half, 'bench-day-charge', NUMBERS);
      const transfers = await createTransfers(server.baseUrl, agent, ctx.scale.dayObjects - half, 'bench-day-transfer');
      const quotes = await createQuotes(server.baseUrl, agent, Math.floor(ctx.scale.dayObjects / 10));
      const creationSeconds = round((performance.now() - created) / 1_000);
      ctx.log(`  day: created in ${creationSeconds} s; waiting for the deliveries due now`);
      const settle = await waitUntilNothingDue(server.baseUrl, 600);
      const before: ClockState = await clockState(server.baseUrl);
      const deliveriesBefore = deliveries(await receiver.stats());
      ctx.log(`  day: advancing ${DAY_SECONDS} s (${before.pending_jobs} pending jobs)`);
      const advance = await timedAdvance(server.baseUrl, DAY_SECONDS);
      ctx.log(`  day: advance took ${advance.seconds} s${advance.timedOut ? ' (timed out)' : ''}`);
      const after = advance.timedOut ? null : await clockState(server.baseUrl).catch(() => null);
      const deliveriesAfter = deliveries(await receiver.stats());
      const ok = !advance.timedOut && advance.status === 200;
      const rtt = await expressRoundTripMs(ctx);
      const perJob = advance.jobsRun ? (advance.seconds * 1_000) / advance.jobsRun : NaN;
      const notes = [
        `P4a: ${fmt(perJob, 'ms', 2)} per job run by the advance; a bare express round trip (1 connection) takes ${fmt(rtt, 'ms', 3)}`,
        `P4a: ${charges.done} charges, ${transfers.done} transfers, ${quotes.done} quotes created in ${creationSeconds} s (not timed; rails.timeout_ms ${P4_CONFIG.rails.timeout_ms}); ${before.pending_jobs} jobs pending before the advance, ${advance.jobsRun ?? '?'} run by it, ${after?.pending_jobs ?? '?'} left after; webhook requests during the day ${deliveriesAfter.requests - deliveriesBefore.requests} (${deliveriesAfter.failuresSent - deliveriesBefore.failuresSent} answered 500 on purpose)`,
      ];
      if (!ok) notes.push(`P4a: the advance ${advance.timedOut ? `had no answer within ${ADVANCE_TIMEOUT_MS / 1_000} s` : `answered ${advance.status}`}: ${advance.error ?? ''}`);
      if (charges.failed || transfers.failed || quotes.failed)
        notes.push(
          `P4a creation failures: charges ${charges.failed}, transfers ${transfers.failed}, quotes ${quotes.failed}; e.g. ${[...charges.sampleFailures, ...transfers.sampleFailures, ...quotes.sampleFailures][0]}`,
        );
      return {
        id: this.id,
        title: this.title,
        rows: [
          {
            measure: `P4 simulated day (${ctx.scale.dayObjects.toLocaleString('en')} objects) advance`,
            railyard: advance.timedOut ? `timed out (>${ADVANCE_TIMEOUT_MS / 1_000} s)` : fmt(advance.seconds, 's', 2),
            baseline: 'n/a',
            ratio: 'n/a',
            target: `< ${MAX_DAY_SECONDS} s`,
            met: ok && advance.seconds < MAX_DAY_SECONDS,
          },
        ],
        raw: {
          creation: { charges, transfers, quotes, seconds: creationSeconds },
          settle,
          before,
          advance,
          after,
          msPerJob: perJob,
          expressRoundTripMs: rtt,
          deliveriesBefore,
          deliveriesAfter,
          memoryAfter: server.memory(),
        },
        notes,
      };
    } finally {
      agent.destroy();
      await server?.stop();
      await receiver.close();
    }
  },
};
