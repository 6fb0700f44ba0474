import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOOPBACK, sendRecorded, recordRequest } from './recorded-request.ts';
import { freePort, groupAlive, signalGroup } from './process-group.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const SANDBOX_KEY = 'sk_test_railyard_sandbox_0000000000000000';
export const SANDBOX_SECRET = 'sig_test_railyard_sandbox_signing_secret';

export interface ServerOptions {
  port: number;
  dbPath: string;
  seed: number;
  logFile: string;
  /** Real-time provider timeout: the timeout numbers hold a request this long per provider. */
  railTimeoutMs: number;
  scenarios: string;
  startTimeoutMs?: number;
  /** RAILYARD_BASE_URL; this server's own loopback URL when not given. */
  baseUrl?: string;
  /** Written before each start, so several servers can share one log file and stay apart. */
  name?: string;
  /**
   * RAILYARD_CLOCK (default virtual). On the system clock callbacks come in real time, a server on
   * a SQLite file runs its jobs on a thread of their own (the served sandbox's job thread), and
   * railyard.chaos.system-clock.yaml polls the providers seconds after acceptance, not minutes.
   */
  clock?: 'virtual' | 'system';
}

export { freePort };

/** Every process group this harness started and has not yet seen die, so a crash of the harness can end them. */
const live = new Set<number>();
export function killAllStarted(): void {
  for (const pgid of live) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  live.clear();
}

/**
 * One `railyard serve` on 127.0.0.1: src/main.ts on this harness's Node with tsx as a loader in
 * the same process, not the tsx wrapper. The wrapper relays a signal to its child and, when the
 * child is slow to acknowledge it (30 ms, twice: a busy machine), SIGKILLs it and exits 143, which
 * turned graceful stops into kills. The server is still started as a process group of its own and
 * signalled as a group, so nothing it might start outlives it.
 */
export class RailyardProcess {
  readonly port: number;
  readonly pgid: number;
  private readonly child: ChildProcess;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly logFd: number;

  private constructor(readonly options: ServerOptions) {
    this.port = options.port;
    this.logFd = openSync(options.logFile, 'a');
    writeSync(this.logFd, `\n===== chaos: starting railyard serve${options.name ? ` ${options.name}` : ''} on port ${options.port} at ${new Date().toISOString()} =====\n`);
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', this.logFd, this.logFd],
      env: {
        ...process.env,
        PORT: String(options.port),
        HOST: LOOPBACK,
        RAILYARD_BASE_URL: options.baseUrl ?? `http://${LOOPBACK}:${options.port}`,
        RAILYARD_DB: options.dbPath,
        RAILYARD_CLOCK: options.clock ?? 'virtual',
        RAILYARD_SEED: String(options.seed),
        RAILYARD_LOG_REQUESTS: 'true',
        RAILYARD_RAIL_TIMEOUT_MS: String(options.railTimeoutMs),
        RAILYARD_SCENARIOS: options.scenarios,
        RAILYARD_SANDBOX_KEY: SANDBOX_KEY,
        RAILYARD_SANDBOX_SIGNING_SECRET: SANDBOX_SECRET,
        // A railyard.yaml in the repo must not change what the harness tests.
        RAILYARD_CONFIG: join(REPO_ROOT, 'chaos', options.clock === 'system' ? 'railyard.chaos.system-clock.yaml' : 'railyard.chaos.yaml'),
      },
    });
    this.pgid = this.child.pid!;
    live.add(this.pgid);
    this.exited = new Promise((done) => this.child.once('exit', (code, signal) => done({ code, signal })));
  }

  /** Starts the server and resolves once GET /healthz answers 200. */
  static async start(options: ServerOptions): Promise<RailyardProcess> {
    const server = new RailyardProcess(options);
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    void server.exited.then((e) => (exited = e));
    while (Date.now() < deadline) {
      if (exited) break;
      const outcome = await sendRecorded(server.port, recordRequest(server.port, 'GET', '/healthz', undefined, {}), 2_000);
      if (outcome.ok && outcome.status === 200) return server;
      await sleep(100);
    }
    await server.kill('SIGKILL');
    const why = exited ? `it exited (${JSON.stringify(exited)})` : 'GET /healthz never answered 200';
    throw new Error(`railyard serve did not start on port ${options.port}: ${why}\n--- log tail ---\n${tail(options.logFile, 40)}`);
  }

  /** Signals the whole process group and waits until no process of it is left. */
  async kill(signal: 'SIGKILL' | 'SIGTERM', graceMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; escalated: boolean }> {
    signalGroup(this.pgid, signal);
    let escalated = false;
    const result = await Promise.race([this.exited, sleep(graceMs).then(() => null)]);
    if (!result || groupAlive(this.pgid)) {
      // The wrapper may be gone while its child lingers, or a graceful stop hung: finish it.
      const deadline = Date.now() + graceMs;
      while (groupAlive(this.pgid) && Date.now() < deadline) await sleep(50);
      if (groupAlive(this.pgid)) {
        escalated = true;
        signalGroup(this.pgid, 'SIGKILL');
        while (groupAlive(this.pgid)) await sleep(50);
      }
    }
    live.delete(this.pgid);
    const final = await this.exited;
    closeSync(this.logFd);
    return { ...final, escalated };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
