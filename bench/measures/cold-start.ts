import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { launchBaseline, RailyardProcess, startScript, type LaunchMode } from '../launch.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { median, round } from '../stats.ts';

const MAX_MS = 1_000;

/** P5: spawn to the first GET /healthz 200, `npm start` as a user runs it, on a fresh database. */
export const coldStart: Measure = {
  id: 'cold-start',
  aliases: ['p5'],
  title: 'P5 cold start',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const runs: Record<LaunchMode, number[]> = { npm: [], script: [] };
    const express: number[] = [];
    const bareNode: number[] = [];
    for (let i = 0; i < ctx.scale.coldStarts; i++) {
      // Alternating, like the rounds elsewhere; `script` (the start script without npm) and bare
      // express are context that tells npm's, tsx's and railyard's shares apart.
      for (const mode of ['npm', 'script'] as const) {
        ctx.log(`  cold-start: ${mode} run ${i + 1}/${ctx.scale.coldStarts}`);
        const server = await RailyardProcess.start({
          dir: ctx.runDir,
          label: `cold-${mode}-${i}`,
          db: join(ctx.runDir, `cold-${mode}-${i}.sqlite`),
          clock: 'system',
          mode,
          pollMs: 5,
        });
        runs[mode].push(round(server.coldStartMs, 1));
        await server.stop();
      }
      const baseline = await launchBaseline({ dir: ctx.runDir, label: `cold-express-${i}`, method: 'get', path: '/x', status: 200, body: '{}' });
      express.push(round(baseline.readyAt - baseline.spawnedAt, 1));
      await baseline.stop();
      const t = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      bareNode.push(round(performance.now() - t, 1));
    }
    const npm = median(runs.npm);
    const script = median(runs.script);
    const expressMs = median(express);
    return {
      id: this.id,
      title: this.title,
      rows: [
        {
          measure: `P5 cold start to first 200 (npm start, median of ${ctx.scale.coldStarts})`,
          railyard: fmt(npm, 'ms'),
          baseline: fmt(expressMs, 'ms'),
          ratio: ratioText(npm / expressMs),
          target: `< ${MAX_MS} ms`,
          met: npm < MAX_MS,
        },
      ],
      raw: { startScript: startScript(), npmMs: runs.npm, scriptMs: runs.script, bareExpressMs: express, bareNodeMs: bareNode },
      notes: [
        `P5: npm start ${runs.npm.join(', ')} ms; the start script without npm (\`${startScript()}\`) ${runs.script.join(', ')} ms (median ${fmt(script, 'ms')}); bare express child ${fmt(expressMs, 'ms')}; \`node -e 0\` ${fmt(median(bareNode), 'ms')}. Fresh database each time; /healthz polled every 5 ms`,
      ],
    };
  },
};
