import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { ChildServer, freePort, REPO_ROOT } from './launch.ts';
import type { ReceiverStats } from './webhook-receiver-server.ts';

export type { ReceiverStats };

export interface ReceiverOptions {
  dir: string;
  label: string;
  /** Event type whose arrival times are recorded (default charge.success). */
  track?: string;
  /** Share of events answered 500 `failTimes` times before a 2xx (by a hash of the event id). */
  failFraction?: number;
  failTimes?: number;
  /** Share of events answered 500 on every attempt. */
  alwaysFailFraction?: number;
}

export interface WebhookReceiver {
  url: string;
  /** The counts so far; `reset` starts afresh after reading them. */
  stats(reset?: boolean): Promise<ReceiverStats>;
  close(): Promise<void>;
}

/** Starts bench/webhook-receiver-server.ts in its own Node 24 process, talking over IPC. */
export async function startWebhookReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const port = await freePort();
  const logFile = join(options.dir, `${options.label}.log`);
  const logFd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', 'webhook-receiver-server.ts')], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', logFd, logFd, 'ipc'],
    env: {
      ...process.env,
      BENCH_RECEIVER_PORT: String(port),
      BENCH_RECEIVER_TRACK: options.track ?? 'charge.success',
      BENCH_RECEIVER_FAIL_FRACTION: String(options.failFraction ?? 0),
      BENCH_RECEIVER_FAIL_TIMES: String(options.failTimes ?? 0),
      BENCH_RECEIVER_ALWAYS_FAIL_FRACTION: String(options.alwaysFailFraction ?? 0),
    },
  });
  const server = new ChildServer(options.label, port, logFile, child, logFd);
  await server.waitReady('/', 30_000);
  return {
    url: `${server.baseUrl}/webhooks`,
    stats: (reset = false) =>
      new Promise<ReceiverStats>((done, fail) => {
        const timer = setTimeout(() => fail(new Error('the webhook receiver did not answer a stats request within 10 s')), 10_000);
        const onMessage = (message: { type?: string; stats?: ReceiverStats }) => {
          if (message?.type !== 'stats' || !message.stats) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          done(message.stats);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats', reset });
      }),
    close: async () => {
      if (child.connected) child.disconnect();
      await server.stop();
    },
  };
}
