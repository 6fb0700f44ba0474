import { Worker } from 'node:worker_threads';
import type { Railyard } from './app.ts';
import type { JobRunner } from './listen-railyard.ts';
import type { RequestLogEntry } from './inspector/request-log.ts';
import type { Environment } from './kernel/environment.ts';
import type { ProviderStateRow } from './rails/provider-health.ts';
import type { Decision, RailQuery } from './scenarios/scenario-types.ts';
import type { WriteTurn } from './store/write-turn.ts';

// The served sandbox's job thread: on the system clock with a SQLite file, `railyard serve` runs
// its jobs (callbacks, polls, webhook deliveries, expiries) on a worker thread with a connection of
// its own to the same file, beside the thread that answers the API. The two take turns at writing
// (WriteTurn); everything else a job needs is in the database, but for three things the request
// thread keeps, which the job thread asks it for or tells it: scenario decisions (one engine counts
// every call), the requests inspector's entries, and the providers' outages and tuning.

/** What the job thread starts from (workerData). */
export interface JobThreadData {
  config: Railyard['config'];
  writeTurn: SharedArrayBuffer;
  boot: number;
  baseUrl: string;
  providers: ProviderStateRow[];
  pollMs?: number;
}

/** Messages from the job thread. */
export type FromJobThread =
  | { type: 'ready' }
  | { type: 'decide'; id: number; query: RailQuery }
  | { type: 'record'; environment: Environment; merchantId: string | null; entry: Omit<RequestLogEntry, 'id' | 'at'> & { at?: number } }
  | { type: 'stopped' };

/** Messages to the job thread. */
export type ToJobThread = { type: 'decided'; id: number; decision?: Decision; error?: string } | { type: 'providers'; rows: ProviderStateRow[] } | { type: 'stop' };

export interface RunningJobThread {
  /** Lets the running round finish, closes the thread's app and ends the thread. */
  stop(): Promise<void>;
  /** Rejects if the thread ends without being asked to (an error in it): the sandbox has lost its jobs. */
  failed: Promise<never>;
}

/**
 * The module the thread runs, beside this one: compiled (dist/), or the source when railyard runs
 * from it (`node --import tsx src/main.ts`, whose loader the thread inherits with the execArgv).
 */
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './job-thread-worker.ts' : './job-thread-worker.js', import.meta.url);

/**
 * Starts the job thread for `railyard` (which must not run its own scheduler), once it listens at
 * `baseUrl`; resolves when the thread's app is up and its scheduler started.
 */
export async function startJobThread(railyard: Railyard, options: { writeTurn: WriteTurn; baseUrl: string; pollMs?: number }): Promise<RunningJobThread> {
  const data: JobThreadData = {
    config: railyard.config,
    writeTurn: options.writeTurn.buffer,
    boot: railyard.boot,
    baseUrl: options.baseUrl,
    providers: railyard.health.rows(),
    pollMs: options.pollMs,
  };
  const worker = new Worker(WORKER, { workerData: data });
  const send = (message: ToJobThread) => worker.postMessage(message);
  railyard.health.onChange((rows) => send({ type: 'providers', rows }));
  let stopping = false;
  let stopped: () => void = () => undefined;
  let ready: () => void = () => undefined;
  const started = new Promise<void>((done) => (ready = done));
  const failed = new Promise<never>((_, fail) => {
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (stopping) return stopped();
      fail(new Error(`the job thread ended (exit code ${code})`));
    });
  });
  failed.catch(() => undefined); // the caller hears it through `failed` (or start's rejection)
  worker.on('message', (message: FromJobThread) => {
    switch (message.type) {
      case 'ready':
        return ready();
      case 'decide':
        railyard.scenarios.decideShared(message.query).then(
          (decision) => send({ type: 'decided', id: message.id, decision }),
          (error: unknown) => send({ type: 'decided', id: message.id, error: error instanceof Error ? error.message : String(error) }),
        );
        return;
      case 'record':
        railyard.requests.record(message.environment, message.merchantId, message.entry);
        return;
      case 'stopped':
        return;
    }
  });
  await Promise.race([started, failed]);
  return {
    failed,
    stop: () => {
      if (stopping) return Promise.resolve();
      stopping = true;
      const ended = new Promise<void>((done) => (stopped = done));
      send({ type: 'stop' });
      return ended;
    },
  };
}

/** How often, in real time, the request thread looks for work before the job thread has started. */
const LOOK_FOR_WORK_MS = 50;

/**
 * The jobs of `railyard` (a request thread's app), run by a job thread that starts once there is
 * work for it: a job waiting, or an event to fan out into webhooks. Until then the request thread
 * looks every LOOK_FOR_WORK_MS (two indexed reads), so a sandbox left idle holds one V8 isolate,
 * not two. `onFailure` hears the thread end unasked.
 */
export function jobThreadRunner(railyard: Railyard, writeTurn: WriteTurn, onFailure: (error: Error) => void): JobRunner {
  let thread: RunningJobThread | undefined;
  let starting: Promise<void> | undefined;
  let looking: NodeJS.Timeout | undefined;
  let stopped = false;
  const workWaiting = async () => (await railyard.scheduler.hasPending()) || (await railyard.dispatcher.hasUndispatched());
  const startThread = (baseUrl: string) =>
    (starting ??= (async () => {
      if (looking) clearInterval(looking);
      looking = undefined;
      thread = await startJobThread(railyard, { writeTurn, baseUrl });
      thread.failed.catch(onFailure);
    })());
  return {
    async start(baseUrl) {
      if (await workWaiting()) return startThread(baseUrl);
      let busy = false;
      looking = setInterval(() => {
        if (busy || stopped) return;
        busy = true;
        workWaiting()
          .then((waiting) => (waiting && !stopped ? startThread(baseUrl) : undefined))
          .catch((error: unknown) => onFailure(error instanceof Error ? error : new Error(String(error))))
          .finally(() => (busy = false));
      }, LOOK_FOR_WORK_MS);
      looking.unref();
    },
    async stop() {
      stopped = true;
      if (looking) clearInterval(looking);
      await starting;
      await thread?.stop();
    },
  };
}
