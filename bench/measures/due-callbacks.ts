import { Agent } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RailyardProcess } from '../launch.ts';
import { fmt, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { clockState, waitUntilNothingDue } from '../railyard-client.ts';
import { round } from '../stats.ts';
import { startWebhookReceiver } from '../webhook-receiver.ts';
import { ADVANCE_TIMEOUT_MS, CREATE_CONCURRENCY, createCharges, expressRoundTripMs, P4_CONFIG, timedAdvance } from './simulated-day.ts';

const MAX_SECONDS = 5;
/** The success number's callback delay: every callback of the batch falls due at this instant. */
const CALLBACK_SECONDS = 5;

/** P4b: charges created while the virtual clock stands still, so their callbacks fall due together; one advance runs them all. */
export const dueCallbacks: Measure = {
  id: 'callbacks',
  aliases: ['p4', 'due-callbacks'],
  title: 'P4 due callbacks in one advance',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const receiver = await startWebhookReceiver({ dir: ctx.runDir, label: 'receiver-callbacks' });
    let server: RailyardProcess | undefined;
    const agent = new Agent({ keepAlive: true, maxSockets: CREATE_CONCURRENCY });
    try {
      server = await RailyardProcess.start({
        dir: ctx.runDir,
        label: 'callbacks',
        db: join(ctx.runDir, 'callbacks.sqlite'),
        clock: 'virtual',
        config: P4_CONFIG,
        env: { RAILYARD_WEBHOOK_URL: receiver.url },
      });
      const count = ctx.scale.dueCallbacks;
      ctx.log(`  callbacks: creating ${count} charges to 0551234987 (not timed)`);
      const created = performance.now();
      const charges = await createCharges(server.baseUrl, agent, count, 'bench-due', ['0551234987']);
      const creationSeconds = round((performance.now() - created) / 1_000);
      ctx.log(`  callbacks: created ${charges.done} in ${creationSeconds} s; waiting for the deliveries due now`);
      const settle = await waitUntilNothingDue(server.baseUrl, 600);
      const before = await clockState(server.baseUrl);
      const successBefore = (await receiver.stats()).delivered['charge.success'] ?? 0;
      ctx.log(`  callbacks: advancing ${CALLBACK_SECONDS} s (${before.pending_jobs} pending jobs)`);
      const advance = await timedAdvance(server.baseUrl, CALLBACK_SECONDS);
      ctx.log(`  callbacks: advance took ${advance.seconds} s${advance.timedOut ? ' (timed out)' : ''}`);
      const after = advance.timedOut ? null : await clockState(server.baseUrl).catch(() => null);
      const successWebhooks = ((await receiver.stats()).delivered['charge.success'] ?? 0) - successBefore;
      const ok = !advance.timedOut && advance.status === 200;
      const rtt = await expressRoundTripMs(ctx);
      const perJob = advance.jobsRun ? (advance.seconds * 1_000) / advance.jobsRun : NaN;
      const notes = [
        `P4b: ${fmt(perJob, 'ms', 2)} per job run by the advance; a bare express round trip (1 connection) takes ${fmt(rtt, 'ms', 3)}`,
        `P4b: ${charges.done} charges created in ${creationSeconds} s (not timed); the advance ran ${advance.jobsRun ?? '?'} jobs (callbacks, then the charge.success deliveries they caused: ${successWebhooks} received); ${after?.pending_jobs ?? '?'} jobs pending after`,
      ];
      if (!ok) notes.push(`P4b: the advance ${advance.timedOut ? `had no answer within ${ADVANCE_TIMEOUT_MS / 1_000} s` : `answered ${advance.status}`}: ${advance.error ?? ''}`);
      if (charges.failed) notes.push(`P4b creation failures: ${charges.failed}; e.g. ${charges.sampleFailures[0]}`);
      return {
        id: this.id,
        title: this.title,
        rows: [
          {
            measure: `P4 ${count.toLocaleString('en')} due callbacks, one advance`,
            railyard: advance.timedOut ? `timed out (>${ADVANCE_TIMEOUT_MS / 1_000} s)` : fmt(advance.seconds, 's', 2),
            baseline: 'n/a',
            ratio: 'n/a',
            target: `< ${MAX_SECONDS} s`,
            met: ok && charges.done === count && advance.seconds < MAX_SECONDS,
          },
        ],
        raw: { creation: { charges, seconds: creationSeconds }, settle, before, advance, after, msPerJob: perJob, expressRoundTripMs: rtt, successWebhooks, memoryAfter: server.memory() },
        notes,
      };
    } finally {
      agent.destroy();
      await server?.stop();
      await receiver.close();
    }
  },
};
