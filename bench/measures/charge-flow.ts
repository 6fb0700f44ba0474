import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarise } from '../compare-throughput.ts';
import { requestJson } from '../http-json.ts';
import { launchBaseline, RailyardProcess, sleep } from '../launch.ts';
import { load, type LoadResult } from '../load.ts';
import { fmt, interleave, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { advanceClock, auth, expectOk, waitUntilNothingDue } from '../railyard-client.ts';
import { median, percentile, round } from '../stats.ts';
import { uniqueIdempotencyKeys } from '../unique-keys.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../webhook-receiver.ts';
import { CHARGE_BODY } from './charge-initiate.ts';

const PATH = '/api/v1/charges';
const MIN_RATIO = 0.25;
/** The success number's callback comes 5 s (business time) after acceptance (scenarios/sandbox.yaml). */
const CALLBACK_SECONDS = 5;
const ADVANCE_PAUSE_MS = 20;
const MAX_ADVANCES = 100_000;
/** System clock: load this long before the window opens, so the pipeline is full (callback + deliveries). */
const LEAD_SECONDS = CALLBACK_SECONDS + 1;

type Clock = 'virtual' | 'system';

interface FlowRound {
  /**
   * The round's complete flows ÷ the time from the first charge to the last charge.success
   * webhook: every flow started under load, finished. The figure reported against the target.
   */
  flowsPerSec: number;
  /** charge.success webhooks received per second inside the load window alone. */
  inWindowFlowsPerSec: number;
  successInWindow: number;
  load: LoadResult;
  advances: number;
  advanceP50Ms: number;
  advanceMaxMs: number;
  advanceFailures: number;
  jobsRun: number;
  /** From the window's end until the last webhook of the round came in (after the load). */
  drainSeconds: number;
  drainedQuiet: boolean;
  /** charge.success received in the whole round, drain included: should equal the 2xx charges. */
  successAfterDrain: number;
  deliveries: Record<string, number>;
}

/** Advances the virtual clock CALLBACK_SECONDS at a time until told to stop; bounded by count and time. */
async function advanceWhile(baseUrl: string, stopAt: number, stop: { now: boolean }) {
  const times: number[] = [];
  let failures = 0;
  let jobsRun = 0;
  while (!stop.now && performance.now() < stopAt && times.length < MAX_ADVANCES) {
    const res = await advanceClock(baseUrl, CALLBACK_SECONDS, 120_000).catch((err: unknown) => ({ status: 0, ms: NaN, json: undefined, text: String(err) }));
    if (res.status === 200) {
      times.push(res.ms);
      jobsRun += Number(res.json?.data?.jobs_run ?? 0);
    } else failures++;
    await sleep(ADVANCE_PAUSE_MS);
  }
  return { advances: times.length, advanceP50Ms: round(percentile(times, 50)), advanceMaxMs: round(Math.max(0, ...times)), advanceFailures: failures, jobsRun };
}

const epochNow = () => performance.timeOrigin + performance.now();

async function flowRound(ctx: BenchContext, clock: Clock, server: RailyardProcess, receiver: WebhookReceiver, durationSec: number): Promise<FlowRound> {
  await receiver.stats(true); // start counting afresh
  const lead = clock === 'system' ? LEAD_SECONDS : 0;
  const t0 = epochNow();
  const stop = { now: false };
  const advancing = clock === 'virtual' ? advanceWhile(server.baseUrl, performance.now() + (durationSec + 30) * 1_000, stop) : null;
  const loaded = await load({
    baseUrl: server.baseUrl,
    method: 'POST',
    path: PATH,
    headers: auth,
    body: CHARGE_BODY,
    setupRequest: uniqueIdempotencyKeys(`bench-flow-${clock}`),
    connections: ctx.connections,
    durationSec: lead + durationSec,
  });
  stop.now = true;
  const advanced = advancing ? await advancing : { advances: 0, advanceP50Ms: NaN, advanceMaxMs: NaN, advanceFailures: 0, jobsRun: 0 };
  const windowStart = t0 + lead * 1_000;
  const windowEnd = windowStart + durationSec * 1_000;
  // Drain: every callback of this round falls due and its webhooks go out before the next
  // baseline round, so none of railyard's work lands in a baseline's window.
  if (clock === 'virtual') await advanceClock(server.baseUrl, 310, 300_000).catch(() => undefined);
  const drainDeadline = Date.now() + 120_000;
  let stats = await receiver.stats();
  while ((stats.delivered['charge.success'] ?? 0) < loaded.ok2xx && Date.now() < drainDeadline) {
    await sleep(250);
    stats = await receiver.stats();
  }
  const quiet = await waitUntilNothingDue(server.baseUrl, 60);
  stats = await receiver.stats();
  const successInWindow = stats.arrivals.filter((t) => t >= windowStart && t <= windowEnd).length;
  const lastArrival = Math.max(windowEnd, ...stats.arrivals);
  const all = stats.delivered['charge.success'] ?? 0;
  return {
    // On the system clock each flow waits 5 s for its callback by design: latency, not work.
    flowsPerSec: round(all / ((lastArrival - t0) / 1_000 - (clock === 'system' ? CALLBACK_SECONDS : 0)), 1),
    inWindowFlowsPerSec: round(successInWindow / durationSec, 1),
    successInWindow,
    load: loaded,
    ...advanced,
    drainSeconds: round((lastArrival - windowEnd) / 1_000),
    drainedQuiet: quiet.quiet,
    successAfterDrain: all,
    deliveries: stats.delivered,
  };
}

/**
 * P2: complete charge flows per second: initiate, MTN mock over HTTP, callback, ledger, outbox,
 * and the charge.success webhook received by a local endpoint (its own process).
 * `virtual`: the clock is advanced 5 s at a time while loading (the callbacks come due at each
 * step). `system`: the sandbox's own clock, callbacks 5 s after acceptance in real time; the
 * window opens once the first callbacks are coming in.
 */
function chargeFlowOn(clock: Clock): Measure {
  return {
    id: clock === 'virtual' ? 'flow' : 'flow-system',
    aliases: clock === 'virtual' ? ['p2', 'charge-flow'] : ['p2'],
    title: `P2 full charge flow (${clock} clock)`,
    async run(ctx: BenchContext): Promise<MeasureResult> {
      const receiver = await startWebhookReceiver({ dir: ctx.runDir, label: `receiver-flow-${clock}`, track: 'charge.success' });
      let server: RailyardProcess | undefined;
      try {
        server = await RailyardProcess.start({
          dir: ctx.runDir,
          label: `flow-${clock}`,
          db: join(ctx.runDir, `flow-${clock}.sqlite`),
          clock,
          env: { RAILYARD_WEBHOOK_URL: receiver.url },
        });
        const s = server;
        const probe = await expectOk(requestJson(s.baseUrl, 'POST', PATH, { headers: { ...auth, 'idempotency-key': `bench-flow-${clock}-probe` }, body: CHARGE_BODY }), 'charge probe');
        const baseline = await launchBaseline({ dir: ctx.runDir, label: `baseline-flow-${clock}`, method: 'post', path: PATH, status: probe.status, body: probe.text });
        try {
          const baselineRun = (durationSec: number) =>
            load({
              baseUrl: baseline.baseUrl,
              method: 'POST',
              path: PATH,
              headers: auth,
              body: CHARGE_BODY,
              setupRequest: uniqueIdempotencyKeys('bench-flow-baseline'),
              connections: ctx.connections,
              durationSec,
            });
          const label = `flow-${clock}`;
          ctx.log(`  ${label}: warm-up`);
          const warmup = { baseline: await baselineRun(ctx.warmupSec), railyard: await flowRound(ctx, clock, s, receiver, ctx.warmupSec) };
          const pairs = await interleave(
            ctx,
            label,
            () => baselineRun(ctx.durationSec),
            () => flowRound(ctx, clock, s, receiver, ctx.durationSec),
          );
          const b = summarise(pairs.map((p) => p.baseline));
          const flows = median(pairs.map((p) => p.railyard.flowsPerSec));
          const ratio = flows / b.okPerSec;
          const inWindow = median(pairs.map((p) => p.railyard.inWindowFlowsPerSec));
          const r = summarise(pairs.map((p) => p.railyard.load));
          const lost = pairs.map((p) => p.railyard.load.ok2xx - p.railyard.successAfterDrain);
          const valid = r.invalidRounds === 0 && lost.every((n) => n <= 0);
          const rounds = (f: (p: FlowRound) => unknown) => pairs.map((p) => f(p.railyard)).join(', ');
          const notes = [
            clock === 'virtual'
              ? `P2 (virtual): clock advanced ${CALLBACK_SECONDS} s at a time (pause ${ADVANCE_PAUSE_MS} ms) while ${ctx.connections} connections POST charges to 0551234987 for ${ctx.durationSec} s. Per round: charges 2xx/s ${rounds((x) => x.load.okPerSec)}; flows/s (load start → last webhook) ${rounds((x) => x.flowsPerSec)}; inside the load window ${rounds((x) => x.inWindowFlowsPerSec)}; advances ${rounds((x) => x.advances)} (p50 ${rounds((x) => x.advanceP50Ms)} ms, max ${rounds((x) => x.advanceMaxMs)} ms); the last webhook came ${rounds((x) => x.drainSeconds)} s after the load stopped`
              : `P2 (system): ${ctx.connections} connections POST charges to 0551234987 for ${LEAD_SECONDS} s + a ${ctx.durationSec} s window; callbacks come 5 s after acceptance in real time. Per round: charges 2xx/s ${rounds((x) => x.load.okPerSec)}; flows/s (load start → last webhook, less the 5 s callback delay) ${rounds((x) => x.flowsPerSec)}; inside the window ${rounds((x) => x.inWindowFlowsPerSec)}; the last webhook came ${rounds((x) => x.drainSeconds)} s after the load stopped`,
          ];
          if (lost.some((n) => n > 0)) notes.push(`P2 (${clock}): charges answered 2xx without a charge.success webhook after the drain, per round: ${lost.join(', ')}`);
          if (r.invalidRounds)
            notes.push(`P2 (${clock}): railyard rounds with >1% non-2xx or errors: ${r.invalidRounds}; statuses ${JSON.stringify(r.statusCodes)}; e.g. ${r.sampleFailures[0] ?? ''}`);
          return {
            id: this.id,
            title: this.title,
            rows: [
              {
                measure: `P2 charge flows/s to webhook, ${clock} clock`,
                railyard: fmt(flows),
                baseline: fmt(b.okPerSec),
                ratio: ratioText(ratio),
                target: `≥ ${MIN_RATIO.toFixed(2)}×`,
                met: valid && ratio >= MIN_RATIO,
              },
              {
                measure: `P2 … of which inside the load window, ${clock} clock`,
                railyard: fmt(inWindow),
                baseline: fmt(b.okPerSec),
                ratio: ratioText(inWindow / b.okPerSec),
                target: 'report',
                met: null,
              },
            ],
            raw: { clock, pairs, warmup, baseline: b, railyardLoad: r, flowsPerSec: flows, inWindowFlowsPerSec: inWindow, ratio, memoryAfter: s.memory() },
            notes,
          };
        } finally {
          await baseline.stop();
        }
      } finally {
        await server?.stop();
        await receiver.close();
      }
    },
  };
}

export const chargeFlow = chargeFlowOn('virtual');
export const chargeFlowSystemClock = chargeFlowOn('system');
