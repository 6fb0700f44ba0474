import { join } from 'node:path';
import { encodeCursor } from '../../src/http/pagination.ts';
import { launchBaseline, readMemory, RailyardProcess, sleep, type Memory } from '../launch.ts';
import { fmt, ratioText, type BenchContext, type Measure, type MeasureResult } from '../measure.ts';
import { auth } from '../railyard-client.ts';
import { sampleLatency } from '../sample-latency.ts';

const MAX_IDLE_MB = 150;
const MAX_LOADED_MB = 300;
const mb = (kb: number) => kb / 1024;

/** P6: resident memory of the server process itself (not npm's or tsx's wrapper), idle and after serving the 1M-row database. */
export const memory: Measure = {
  id: 'memory',
  aliases: ['p6', 'rss'],
  title: 'P6 RSS',
  async run(ctx: BenchContext): Promise<MeasureResult> {
    const settleMs = ctx.quick ? 1_000 : 3_000;
    // Idle: a fresh start as a user makes it (system clock), left alone for a moment.
    const idleServer = await RailyardProcess.start({ dir: ctx.runDir, label: 'memory-idle', db: join(ctx.runDir, 'memory-idle.sqlite'), clock: 'system' });
    let idle: Memory;
    let runtime: ReturnType<RailyardProcess['runtime']>;
    try {
      await sleep(settleMs);
      idle = idleServer.memory();
      runtime = idleServer.runtime();
    } finally {
      await idleServer.stop();
    }
    const express = await launchBaseline({ dir: ctx.runDir, label: 'memory-express', method: 'get', path: '/x', status: 200, body: '{}' });
    let expressIdle: Memory;
    try {
      await sleep(settleMs);
      expressIdle = readMemory(express.pgid); // spawned directly: the group leader is the node process
    } finally {
      await express.stop();
    }

    // Loaded: the large list database, pages from all over it (each cursor a different seek).
    const large = await ctx.databases.get(ctx.scale.largeRows);
    const server = await RailyardProcess.start({ dir: ctx.runDir, label: 'memory-large', db: large.path, clock: 'virtual' });
    let afterStart: Memory;
    let loaded: Memory;
    let traffic: Awaited<ReturnType<typeof sampleLatency>>;
    try {
      await sleep(settleMs);
      afterStart = server.memory();
      const rows = ctx.scale.largeRows;
      const paths = ['/api/v1/transactions?page_size=100'];
      for (let i = 1; i <= 200; i++) paths.push(`/api/v1/transactions?page_size=100&cursor=${encodeCursor(Math.floor((rows * i) / 201))}`);
      traffic = await sampleLatency({ baseUrl: server.baseUrl, paths, headers: auth, connections: 4, maxRequests: ctx.quick ? 500 : 4_000, maxSeconds: ctx.quick ? 3 : 15 });
      await sleep(settleMs);
      loaded = server.memory();
    } finally {
      await server.stop();
    }
    const notes = [
      `P6: server process ${runtime.exe} (${runtime.node}): \`${runtime.cmdline}\`; idle ${fmt(mb(idle.rssKb), 'MB')} (peak ${fmt(mb(idle.hwmKb), 'MB')}); on the ${ctx.scale.largeRows.toLocaleString('en')}-row database: ${fmt(mb(afterStart.rssKb), 'MB')} after start, ${fmt(mb(loaded.rssKb), 'MB')} after ${traffic.requests} list requests of 100 items (peak ${fmt(mb(loaded.hwmKb), 'MB')}); bare express idle ${fmt(mb(expressIdle.rssKb), 'MB')}`,
    ];
    if (traffic.invalid) notes.push(`P6 list traffic had non-2xx or errors: ${JSON.stringify(traffic.statusCodes)} ${traffic.sampleFailures[0] ?? ''}`);
    const largeLabel = ctx.scale.largeRows >= 1_000_000 ? `${ctx.scale.largeRows / 1_000_000}M` : `${ctx.scale.largeRows / 1_000}k`;
    return {
      id: this.id,
      title: this.title,
      rows: [
        {
          measure: 'P6 RSS idle',
          railyard: fmt(mb(idle.rssKb), 'MB'),
          baseline: fmt(mb(expressIdle.rssKb), 'MB'),
          ratio: ratioText(idle.rssKb / expressIdle.rssKb),
          target: `< ${MAX_IDLE_MB} MB`,
          met: mb(idle.rssKb) < MAX_IDLE_MB,
        },
        {
          measure: `P6 RSS after ${largeLabel} rows + list traffic`,
          railyard: fmt(mb(loaded.rssKb), 'MB'),
          baseline: fmt(mb(expressIdle.rssKb), 'MB'),
          ratio: ratioText(loaded.rssKb / expressIdle.rssKb),
          target: `< ${MAX_LOADED_MB} MB`,
          met: !traffic.invalid && mb(loaded.rssKb) < MAX_LOADED_MB,
        },
      ],
      raw: { idle, expressIdle, runtime, large: { afterStart, loaded, traffic } },
      notes,
    };
  },
};
