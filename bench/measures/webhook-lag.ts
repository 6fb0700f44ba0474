import { Agent } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { requestJson } from '../http-json.ts';
import { RailyardProcess, sleep } from '../launch.ts';
import { fmt, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth, expectOk } from '../railyard-client.ts';
import { percentile, round } from '../stats.ts';
import { startWebhookReceiver } from '../webhook-receiver.ts';
import { CHARGE_BODY, chargeLoad } from './charge-initiate.ts';

// Webhook lag: on the system clock, charges to the success number arrive at half of what
// railyard can initiate (measured first, in the same run, on a virtual clock where nothing
// falls due), for a sustained period, with a merchant's webhook receiver. Each charge's mock
// callback is a job due 5 s after acceptance; the lag is from that due time to the arrival of
// the charge's charge.success webhook at the receiver. A sandbox that keeps up with its own
// traffic delivers within a second of the due time (target p99 < 1 s).
//
// As every load measure here, it warms up first: the same rate for --warmup seconds, and that
// load's webhooks awaited, so the measured seconds see a process whose initiation, settlement and
// delivery paths are compiled. The warm-up's own lag is in the notes.

const MAX_P99_MS = 1_000;
/** How long after the load the receiver may still be waiting for webhooks before the measure gives up on them. */
const DRAIN_SECONDS = 180;
/** Requests are sent on a 10 ms tick, as many as the rate owes by then. */
const TICK_MS = 10;

interface SentCharge {
  status: number;
  id: string | null;
}

/** Sends charges at `rate` per second for `seconds`, open loop (not waiting for answers to send more). */
async function sustain(baseUrl: string, rate: number, seconds: number, keyPrefix: string): Promise<{ sent: SentCharge[]; seconds: number; late: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const sent: Promise<SentCharge>[] = [];
  const started = performance.now();
  const end = started + seconds * 1_000;
  let late = 0;
  try {
    while (performance.now() < end) {
      const owed = Math.floor(((performance.now() - started) / 1_000) * rate) - sent.length;
      if (owed > 50) late++;
      for (let i = 0; i < owed; i++) {
        const n = sent.length;
        sent.push(
          requestJson(baseUrl, 'POST', '/api/v1/charges', { headers: { ...auth, 'idempotency-key': `${keyPrefix}-${n}` }, body: CHARGE_BODY, agent, timeoutMs: 60_000 }).then(
            (res) => ({ status: res.status, id: typeof res.json?.data?.id === 'string' ? res.json.data.id : null }),
            () => ({ status: 0, id: null }),
          ),
        );
      }
      await sleep(TICK_MS);
    }
    return { sent: await Promise.all(sent), seconds: (performance.now() - started) / 1_000, late };
  } finally {
    agent.destroy();
  }
}

export const webhookLag: Measure = {
  id: 'lag',
  aliases: ['webhook-lag'],
  title: 'webhook lag at half of initiate capacity (system clock)',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    // 1. Capacity: charge initiate 2xx/s where nothing falls due (virtual clock).
    const capacityServer = await RailyardProcess.start({ dir: ctx.runDir, label: 'lag-capacity', db: join(ctx.runDir, 'lag-capacity.sqlite'), clock: 'virtual' });
    let capacity: number;
    try {
      const run = (durationSec: number, tag: string) => chargeLoad(capacityServer.baseUrl, ctx.connections, durationSec, `bench-lag-cap-${tag}`);
      await run(ctx.warmupSec, 'warm');
      const measured = await run(ctx.durationSec, 'measure');
      capacity = measured.okPerSec;
    } finally {
      await capacityServer.stop();
    }
    const rate = Math.max(1, Math.floor(capacity / 2));
    const seconds = ctx.scale.lagSeconds;
    ctx.log(`  lag: initiate capacity ${fmt(capacity)} charges/s; sustaining ${rate}/s for ${seconds} s on the system clock`);

    // 2. The sustained load on the system clock, with a receiver.
    const receiver = await startWebhookReceiver({ dir: ctx.runDir, label: 'receiver-lag' });
    const db = join(ctx.runDir, 'lag.sqlite');
    let server: RailyardProcess | undefined;
    try {
      server = await RailyardProcess.start({ dir: ctx.runDir, label: 'lag', db, clock: 'system', env: { RAILYARD_WEBHOOK_URL: receiver.url } });
      await expectOk(requestJson(server.baseUrl, 'GET', '/api/v1/sandbox/clock', { headers: auth }), 'GET clock');
      /** Waits until every created charge's webhook came in (or the drain's limit); the seconds it took. */
      const drain = async (charges: SentCharge[]) => {
        const drainStart = performance.now();
        let stats = await receiver.stats();
        while (charges.some((c) => stats.arrivalsByObject[c.id!] === undefined) && performance.now() - drainStart < DRAIN_SECONDS * 1_000) {
          await sleep(500);
          stats = await receiver.stats();
        }
        return (performance.now() - drainStart) / 1_000;
      };
      const warm = (await sustain(server.baseUrl, rate, ctx.warmupSec, 'bench-lag-warm')).sent.filter((s) => s.status === 201 && s.id);
      ctx.log(`  lag: warm-up of ${ctx.warmupSec} s, ${warm.length} charges; waiting for their webhooks`);
      await drain(warm);
      const load = await sustain(server.baseUrl, rate, seconds, 'bench-lag');
      const created = load.sent.filter((s) => s.status === 201 && s.id);
      ctx.log(`  lag: ${created.length} of ${load.sent.length} charges created in ${load.seconds.toFixed(1)} s; waiting for their charge.success webhooks`);
      const drainSeconds = await drain(created);
      const stats = await receiver.stats();
      await server.stop();
      server = undefined;

      // 3. Each charge's callback due time (its mock settle job's run_at), against its webhook's arrival.
      const sqlite = new DatabaseSync(db, { readOnly: true });
      let due: { charge: string; run_at: number }[];
      try {
        due = sqlite.prepare("SELECT json_extract(payload, '$.transaction.externalId') AS charge, run_at FROM jobs WHERE kind = 'mock.mtn-momo.settle'").all() as typeof due;
      } finally {
        sqlite.close();
      }
      const dueOf = new Map(due.map((d) => [d.charge, d.run_at]));
      const lagsOf = (charges: SentCharge[]) => {
        const lags: number[] = [];
        let missing = 0;
        for (const c of charges) {
          const arrived = stats.arrivalsByObject[c.id!];
          const at = dueOf.get(c.id!);
          if (arrived === undefined || at === undefined) missing++;
          else lags.push(arrived - at);
        }
        return { lags, missing };
      };
      const { lags, missing } = lagsOf(created);
      const p50 = percentile(lags, 50);
      const p99 = percentile(lags, 99);
      const max = Math.max(...lags);
      const cold = lagsOf(warm).lags;
      const ok = missing === 0 && created.length > 0 && p99 < MAX_P99_MS;
      const notes = [
        `lag: initiate capacity ${fmt(capacity)} 2xx/s (virtual clock, ${ctx.connections} connections, ${ctx.durationSec} s); then ${rate} charges/s open loop for ${seconds} s on the system clock (${load.sent.length} sent, ${created.length} created, ${load.late} ticks more than 50 requests behind); the lag runs from each charge's mock callback due time (mock.mtn-momo.settle run_at) to its charge.success webhook at the receiver`,
        `lag: a warm-up of ${ctx.warmupSec} s at the same rate on the fresh process first (${warm.length} charges, their webhooks awaited): its lag (settled after its load stopped) p50 ${fmt(percentile(cold, 50), 'ms')}, p99 ${fmt(percentile(cold, 99), 'ms')}, max ${fmt(Math.max(...cold), 'ms')}`,
        `lag: p50 ${fmt(p50, 'ms')}, p99 ${fmt(p99, 'ms')}, max ${fmt(max, 'ms')}; ${missing} charge(s) without a webhook after a ${drainSeconds.toFixed(1)} s drain (limit ${DRAIN_SECONDS} s); deliveries by type ${JSON.stringify(stats.delivered)}`,
      ];
      return {
        id: this.id,
        title: this.title,
        rows: [
          { measure: `webhook lag p50 at ${rate} charges/s (½ capacity)`, railyard: fmt(p50, 'ms'), baseline: 'n/a', ratio: 'n/a', target: 'report', met: null },
          { measure: `webhook lag p99 at ${rate} charges/s (½ capacity)`, railyard: fmt(p99, 'ms'), baseline: 'n/a', ratio: 'n/a', target: `< ${MAX_P99_MS / 1_000} s`, met: ok },
        ],
        raw: {
          capacity,
          rate,
          seconds,
          sent: load.sent.length,
          created: created.length,
          missing,
          p50,
          p99,
          max,
          drainSeconds,
          warmup: { seconds: ctx.warmupSec, created: warm.length, lagsMs: cold.map((l) => round(l, 1)) },
          lagsMs: lags.map((l) => round(l, 1)),
          delivered: stats.delivered,
        },
        notes,
      };
    } finally {
      await server?.stop();
      await receiver.close();
    }
  },
};
