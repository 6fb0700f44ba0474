import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync, writeSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { requestJson } from './http-json.ts';
import { freePort, groupAlive, signalGroup } from '../chaos/process-group.ts';
import { processTree } from '../test/support/process-tree.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const LOOPBACK = '127.0.0.1';
export const SANDBOX_KEY = 'sk_test_railyard_sandbox_0000000000000000';
export const SANDBOX_SECRET = 'sig_test_railyard_sandbox_signing_secret';

/**
 * How railyard is started. `npm` runs `npm start` itself, as a user does, so the bench follows
 * whatever the start script becomes (tsx today, a compiled dist/ later). `script` runs the start
 * script's command line with node_modules/.bin on PATH, as npm would, minus npm's own start-up:
 * used only to tell npm's share of the cold start apart.
 */
export type LaunchMode = 'npm' | 'script';

export { freePort };

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** The start script as package.json says today (read at each launch, never cached). */
export function startScript(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start;
  if (!script) throw new Error('package.json has no "start" script');
  return script;
}

// Process groups this bench started and has not yet seen die: a crash or ^C of the bench ends them.
const live = new Set<number>();

/** Ends every process group still running; synchronous, so it can run from an exit handler. */
export function killAllStarted(): void {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
  live.clear();
}

/** The inherited environment without npm's lifecycle variables or a user's RAILYARD_* settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) || name.startsWith('RAILYARD_')) continue;
    env[name] = value;
  }
  return env;
}

export interface Memory {
  pid: number;
  rssKb: number;
  hwmKb: number;
}

/** VmRSS and VmHWM (peak RSS) of one process, from /proc. */
export function readMemory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { pid, rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
}

/** Inodes of sockets listening on this TCP port (IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      if (cols[1]!.endsWith(`:${hexPort}`) && cols[3] === '0A') inodes.add(cols[9]!);
    }
  }
  return inodes;
}

/**
 * The process that holds the listening socket: the server itself, not npm, sh or tsx's wrapper
 * above it, whatever the start script is.
 */
export function listenerPid(root: number, port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const pid of processTree(root)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match && inodes.has(match[1]!)) return pid;
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return undefined;
}

/** A child started in its own process group, logging to a file. */
export class ChildServer {
  readonly pgid: number;
  readonly baseUrl: string;
  /** performance.now() when spawned, and when it first answered its readiness probe. */
  readonly spawnedAt: number;
  readyAt = 0;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly label: string,
    readonly port: number,
    readonly logFile: string,
    child: ChildProcess,
    private readonly logFd: number,
    spawnedAt = performance.now(),
  ) {
    child.on('error', () => undefined); // a failed spawn shows as a missing pid, below
    if (child.pid === undefined) throw new Error(`${label} could not be spawned`);
    this.pgid = child.pid;
    this.baseUrl = `http://${LOOPBACK}:${port}`;
    this.spawnedAt = spawnedAt;
    live.add(this.pgid);
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        done({ code, signal });
      }),
    );
  }

  get hasExited(): boolean {
    return this.exitInfo !== null;
  }

  /** Polls `path` until it answers 200: the time from spawn to then is the cold start. */
  async waitReady(path: string, timeoutMs: number, intervalMs = 10): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !this.exitInfo) {
      const res = await requestJson(this.baseUrl, 'GET', path, { timeoutMs: 1_000 }).catch(() => null);
      if (res?.status === 200) {
        this.readyAt = performance.now();
        return this.readyAt - this.spawnedAt;
      }
      await sleep(intervalMs);
    }
    const why = this.exitInfo ? `it exited (${JSON.stringify(this.exitInfo)})` : `GET ${path} never answered 200 within ${timeoutMs} ms`;
    await this.stop();
    throw new Error(`${this.label} did not start on port ${this.port}: ${why}\n--- log tail (${this.logFile}) ---\n${tail(this.logFile, 30)}`);
  }

  /** SIGTERM to the whole group, SIGKILL after a grace period; resolves when none of it is left. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!live.has(this.pgid)) return;
    signalGroup(this.pgid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (groupAlive(this.pgid) && Date.now() < deadline) await sleep(25);
    if (groupAlive(this.pgid)) {
      signalGroup(this.pgid, 'SIGKILL');
      const hardDeadline = Date.now() + 5_000;
      while (groupAlive(this.pgid) && Date.now() < hardDeadline) await sleep(25);
    }
    live.delete(this.pgid);
    await Promise.race([this.exited, sleep(1_000)]);
    try {
      closeSync(this.logFd);
    } catch {
      // already closed
    }
  }
}

export interface RailyardLaunch {
  /** Directory for the log (and a generated railyard.yaml). */
  dir: string;
  label: string;
  db: string;
  clock: 'system' | 'virtual';
  /** Extra railyard.yaml settings (RAILYARD_CONFIG), so a railyard.yaml in the repo never changes a run. */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  mode?: LaunchMode;
  startTimeoutMs?: number;
  /** Readiness poll interval: small for the cold-start measure. */
  pollMs?: number;
}

/** railyard as a user starts it, on a free loopback port. */
export class RailyardProcess extends ChildServer {
  /** ms from spawn to the first GET /healthz 200. */
  coldStartMs = 0;
  private pid: number | undefined;

  static async start(options: RailyardLaunch): Promise<RailyardProcess> {
    const port = await freePort();
    const logFile = join(options.dir, `${options.label}.log`);
    const configFile = join(options.dir, `${options.label}.railyard.yaml`);
    // JSON is YAML: the generated file needs no YAML writer.
    writeFileSync(configFile, `${JSON.stringify({ log_requests: false, ...(options.config ?? {}) }, null, 2)}\n`);
    const logFd = openSync(logFile, 'a');
    const mode = options.mode ?? 'npm';
    const script = startScript();
    writeSync(logFd, `===== bench: ${mode === 'npm' ? 'npm start' : script} on port ${port} at ${new Date().toISOString()} =====\n`);
    const env: NodeJS.ProcessEnv = {
      ...cleanEnv(),
      PORT: String(port),
      HOST: LOOPBACK,
      RAILYARD_BASE_URL: `http://${LOOPBACK}:${port}`,
      RAILYARD_DB: options.db,
      RAILYARD_CLOCK: options.clock,
      RAILYARD_CONFIG: configFile,
      RAILYARD_SCENARIOS: join(REPO_ROOT, 'scenarios'),
      RAILYARD_SANDBOX_KEY: SANDBOX_KEY,
      RAILYARD_SANDBOX_SIGNING_SECRET: SANDBOX_SECRET,
      RAILYARD_LOG_REQUESTS: 'false',
      ...(options.env ?? {}),
    };
    let child: ChildProcess;
    const spawnedAt = performance.now();
    if (mode === 'npm') {
      child = spawn('npm', ['start'], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', logFd, logFd], env });
    } else {
      // What npm does for a script: sh -c with the package's bin directory first on PATH.
      env.PATH = [join(REPO_ROOT, 'node_modules', '.bin'), env.PATH ?? ''].join(delimiter);
      child = spawn('sh', ['-c', script], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', logFd, logFd], env });
    }
    const server = new RailyardProcess(options.label, port, logFile, child, logFd, spawnedAt);
    server.coldStartMs = await server.waitReady('/healthz', options.startTimeoutMs ?? 60_000, options.pollMs ?? 25);
    return server;
  }

  /** The node process that listens (found once; a child of npm, sh and tsx's wrapper). */
  serverPid(): number {
    this.pid ??= listenerPid(this.pgid, this.port);
    if (this.pid === undefined) throw new Error(`no process of group ${this.pgid} listens on port ${this.port}`);
    return this.pid;
  }

  memory(): Memory {
    return readMemory(this.serverPid());
  }

  /** The version of the node binary the server runs on, and its command line. */
  runtime(): { node: string; exe: string; cmdline: string } {
    const pid = this.serverPid();
    const exe = readlinkSync(`/proc/${pid}/exe`);
    const version = spawnSync(exe, ['--version'], { encoding: 'utf8' }).stdout.trim();
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { node: version, exe, cmdline };
  }
}

export interface BaselineLaunch {
  dir: string;
  label: string;
  method: 'get' | 'post';
  path: string;
  status: number;
  /** The exact bytes railyard answered, so both servers send the same JSON. */
  body: string;
}

/** The bare express endpoint (bench/baseline-server.ts) in its own Node 24 process. */
export async function launchBaseline(options: BaselineLaunch): Promise<ChildServer> {
  const port = await freePort();
  const logFile = join(options.dir, `${options.label}.log`);
  const bodyFile = join(options.dir, `${options.label}.body.json`);
  writeFileSync(bodyFile, options.body);
  const logFd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', 'baseline-server.ts')], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: {
      ...cleanEnv(),
      BENCH_BASELINE_PORT: String(port),
      BENCH_BASELINE_METHOD: options.method,
      BENCH_BASELINE_PATH: options.path,
      BENCH_BASELINE_STATUS: String(options.status),
      BENCH_BASELINE_BODY_FILE: bodyFile,
    },
  });
  const server = new ChildServer(options.label, port, logFile, child, logFd);
  await server.waitReady('/healthz', 30_000);
  return server;
}

export function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
