import { Agent } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { requestJson } from '../http-json.ts';
import { RailyardProcess, sleep } from '../launch.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { mainThreadCpuMs, treeCpuMs } from '../process-cpu.ts';
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

/** Where a charge.success webhook's lag was spent, in ms, from the database's own timestamps. */
interface Stages {
  /** The mock callback's due time to the charge.success event (the settle job ran and settled the charge). */
  settle: number;
  /** The event to its delivery row (the outbox fanned out). */
  fanOut: number;
  /** The delivery row to its first attempt being sent (the delivery job started). */
  queued: number;
  /** The first attempt's HTTP exchange with the receiver. */
  http: number;
}

/**
 * Each charge's stages (by charge id): its charge.success event, that event's delivery and the
 * delivery's first attempt, each found by index from the event; the due time comes from `dueOf`.
 */
function stagesOf(db: DatabaseSync, dueOf: Map<string, number>): Map<string, Stages> {
  const rows = db
    .prepare(
      `SELECT o.object_id AS charge, o.created_at AS event, d.created_at AS fanned, a.at AS answered, a.latency_ms AS http
         FROM outbox_events o
         JOIN webhook_deliveries d ON d.event_id = o.id
         JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
        WHERE o.type = 'charge.success'`,
    )
    .all() as { charge: string; event: number; fanned: number; answered: number; http: number }[];
  const stages = new Map<string, Stages>();
  for (const r of rows) {
    const due = dueOf.get(r.charge);
    if (due !== undefined) stages.set(r.charge, { settle: r.event - due, fanOut: r.fanned - r.event, queued: r.answered - r.http - r.fanned, http: r.http });
  }
  return stages;
}

/** p50/p99 of each stage, for the notes. */
function describeStages(stages: Stages[]): string {
  const of = (name: keyof Stages, label: string) => {
    const values = stages.map((s) => s[name]);
    return `${label} p50 ${fmt(percentile(values, 50), 'ms')}, p99 ${fmt(percentile(values, 99), 'ms')}`;
  };
  return [of('settle', 'settle job (due → event)'), of('fanOut', 'fan-out (event → delivery)'), of('queued', 'delivery queued (delivery → sent)'), of('http', 'HTTP to the receiver')].join('; ');
}

/** The lag's p99 per window of `seconds` of due time: where in the load the lag built up. */
function p99ByWindow(points: { due: number; lag: number }[], seconds: number): string {
  if (points.length === 0) return 'none';
  const first = points.reduce((min, p) => Math.min(min, p.due), Number.POSITIVE_INFINITY);
  const windows: number[][] = [];
  for (const p of points) {
    const window = Math.floor((p.due - first) / (seconds * 1_000));
    windows[window] ??= [];
    windows[window].push(p.lag);
  }
  return Array.from(windows, (w, i) => `${i * seconds}-${(i + 1) * seconds} s ${w ? fmt(percentile(w, 99), 'ms') : '—'}`).join(', ');
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
    /** Main-thread CPU per initiated charge at capacity: what the half-capacity load is half of. */
    let initiateUs: number;
    try {
      const run = (durationSec: number, tag: string) => chargeLoad(capacityServer.baseUrl, ctx.connections, durationSec, `bench-lag-cap-${tag}`);
      await run(ctx.warmupSec, 'warm');
      const cpuBefore = mainThreadCpuMs(capacityServer.serverPid());
      const measured = await run(ctx.durationSec, 'measure');
      initiateUs = ((mainThreadCpuMs(capacityServer.serverPid()) - cpuBefore) * 1_000) / measured.ok2xx;
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
      const pid = server.serverPid();
      const cpuAtLoad = mainThreadCpuMs(pid);
      const processCpuAtLoad = treeCpuMs(pid);
      const load = await sustain(server.baseUrl, rate, seconds, 'bench-lag');
      const loadBusy = (mainThreadCpuMs(pid) - cpuAtLoad) / (load.seconds * 1_000);
      const created = load.sent.filter((s) => s.status === 201 && s.id);
      ctx.log(`  lag: ${created.length} of ${load.sent.length} charges created in ${load.seconds.toFixed(1)} s; waiting for their charge.success webhooks`);
      const drainSeconds = await drain(created);
      // Every flow's work, the drain's included: initiation, callback, settlement and both webhooks.
      const flowUs = ((mainThreadCpuMs(pid) - cpuAtLoad) * 1_000) / created.length;
      /** Every thread of the process: the job thread's, the delivery sender's, the checkpointer's, the garbage collector's. */
      const processFlowUs = ((treeCpuMs(pid) - processCpuAtLoad) * 1_000) / created.length;
      const stats = await receiver.stats();
      await server.stop();
      server = undefined;

      // 3. Each charge's callback due time (its mock settle job's run_at), against its webhook's arrival.
      const sqlite = new DatabaseSync(db, { readOnly: true });
      let dueOf: Map<string, number>;
      let stagesByCharge: Map<string, Stages>;
      try {
        const due = sqlite.prepare("SELECT json_extract(payload, '$.transaction.externalId') AS charge, run_at FROM jobs WHERE kind = 'mock.mtn-momo.settle'").all() as {
          charge: string;
          run_at: number;
        }[];
        dueOf = new Map(due.map((d) => [d.charge, d.run_at]));
        stagesByCharge = stagesOf(sqlite, dueOf);
      } finally {
        sqlite.close();
      }
      const lagsOf = (charges: SentCharge[]) => {
        const lags: number[] = [];
        const points: { due: number; lag: number }[] = [];
        let missing = 0;
        for (const c of charges) {
          const arrived = stats.arrivalsByObject[c.id!];
          const at = dueOf.get(c.id!);
          if (arrived === undefined || at === undefined) missing++;
          else {
            lags.push(arrived - at);
            points.push({ due: at, lag: arrived - at });
          }
        }
        return { lags, points, missing };
      };
      const { lags, points, missing } = lagsOf(created);
      const stages = created.flatMap((c) => stagesByCharge.get(c.id!) ?? []);
      const p50 = percentile(lags, 50);
      const p99 = percentile(lags, 99);
      const max = Math.max(...lags);
      const cold = lagsOf(warm).lags;
      const ok = missing === 0 && created.length > 0 && p99 < MAX_P99_MS;
      const notes = [
        `lag: initiate capacity ${fmt(capacity)} 2xx/s (virtual clock, ${ctx.connections} connections, ${ctx.durationSec} s); then ${rate} charges/s open loop for ${seconds} s on the system clock (${load.sent.length} sent, ${created.length} created, ${load.late} ticks more than 50 requests behind); the lag runs from each charge's mock callback due time (mock.mtn-momo.settle run_at) to its charge.success webhook at the receiver`,
        `lag: a warm-up of ${ctx.warmupSec} s at the same rate on the fresh process first (${warm.length} charges, their webhooks awaited): its lag (settled after its load stopped) p50 ${fmt(percentile(cold, 50), 'ms')}, p99 ${fmt(percentile(cold, 99), 'ms')}, max ${fmt(Math.max(...cold), 'ms')}`,
        `lag: p50 ${fmt(p50, 'ms')}, p99 ${fmt(p99, 'ms')}, max ${fmt(max, 'ms')}; ${missing} charge(s) without a webhook after a ${drainSeconds.toFixed(1)} s drain (limit ${DRAIN_SECONDS} s); deliveries by type ${JSON.stringify(stats.delivered)}`,
        `lag: p99 by 5 s of due time: ${p99ByWindow(points, 5)}`,
        `lag: where it was spent: ${describeStages(stages)}`,
        `lag: railyard's request thread (the API and its writes; the served sandbox runs the jobs on a thread of their own) used ${fmt(flowUs, 'µs')} per complete flow, ${ratioText(flowUs / initiateUs)} the ${fmt(initiateUs, 'µs')} an initiation costs it at capacity, so half of capacity asks for about ${fmt((100 * flowUs) / initiateUs / 2, '%')} of it; it was busy ${fmt(100 * loadBusy, '%')} of the load's seconds; the whole process, every thread, used ${fmt(processFlowUs, 'µs')} per flow`,
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
          mainThread: { initiateUs: round(initiateUs, 1), flowUs: round(flowUs, 1), busyDuringLoad: round(loadBusy, 3) },
          processFlowUs: round(processFlowUs, 1),
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
