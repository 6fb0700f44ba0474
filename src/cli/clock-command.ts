// railyard clock advance <duration>: move a running sandbox's virtual clock forward and watch the
// jobs that fall due run.
//
//   railyard clock advance 24h [--api http://localhost:4010] [--key sk_test_…]
//
// The duration is a number with a unit, or several (90s, 15m, 24h, 1d, 1h30m; a bare number is
// seconds). The advance runs in the background on the server (POST /api/v1/sandbox/clock/advance
// with "async": true) and is followed at GET /api/v1/sandbox/clock/advances/{id}: on a terminal,
// as a progress bar redrawn in place; otherwise (a pipe, CI) as plain lines, at most one a second.
// No ANSI colour when the output is not a terminal or NO_COLOR is set.
//
// Exit codes: 0 the advance succeeded, 1 the API refused it or it failed, 2 bad arguments.

import { parseCommandArgs, stopSignal } from './cli-support.ts';
import { DEFAULT_API, DEFAULT_KEY, type ExitCode } from './listen-command.ts';
import { ApiClient } from '../kernel/api-client.ts';

export interface ClockIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown };
  signal?: AbortSignal;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Seconds in a duration such as 90s, 15m, 24h, 1d, 1h30m or 45 (seconds); null when it is not one. */
export function parseDuration(text: string): number | null {
  const t = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(t)) return null;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms / 1000;
}

interface AdvanceView {
  id: string;
  state: 'running' | 'succeeded' | 'failed';
  from: string;
  to: string;
  jobs_done: number;
  jobs_total: number;
  error: string | null;
}

interface Envelope<T> {
  message?: string;
  data?: T;
  error?: { code?: string };
}

/** Draws the progress: a bar redrawn in place on a terminal, plain lines (one a second at most) elsewhere. */
export class AdvanceProgressView {
  private lastLineAt = -Infinity;
  private lastDone = -1;
  private readonly tty: boolean;
  private readonly colour: boolean;

  constructor(
    private readonly out: ClockIo['stdout'],
    env: NodeJS.ProcessEnv,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tty = out.isTTY === true;
    this.colour = this.tty && !env.NO_COLOR;
  }

  update(a: AdvanceView): void {
    const total = Math.max(a.jobs_total, a.jobs_done);
    const pct = total === 0 ? 100 : Math.floor((a.jobs_done / total) * 100);
    const counts = `${a.jobs_done}/${total} job(s)`;
    if (this.tty) {
      const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 40));
      const filled = Math.round((width * pct) / 100);
      const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
      const shown = this.colour ? `\x1b[32m${bar.slice(0, filled)}\x1b[2m${bar.slice(filled)}\x1b[0m` : bar;
      this.out.write(`\r[${shown}] ${String(pct).padStart(3)}% ${counts}  `);
      return;
    }
    const t = this.now();
    if (a.state === 'running' && (a.jobs_done === this.lastDone || t - this.lastLineAt < 1000)) return;
    this.lastLineAt = t;
    this.lastDone = a.jobs_done;
    this.out.write(`${a.state === 'running' ? 'advancing' : a.state}: ${counts} (${pct}%)\n`);
  }

  /** Ends the bar's line on a terminal. */
  end(): void {
    if (this.tty) this.out.write('\n');
  }
}

async function call<T>(method: 'GET' | 'POST', url: string, key: string, body: unknown, signal: AbortSignal | undefined): Promise<{ status: number; body: Envelope<T>; location: string | null }> {
  const target = new URL(url);
  // An older server answers the advance only when it is done: allow it the time.
  const client = new ApiClient({ baseUrl: target.origin, key, timeoutMs: 10 * 60_000, headers: { 'user-agent': 'railyard-clock/1' } });
  const res = await client.request({ method, path: target.pathname + target.search, body, signal });
  const parsed = res.json !== null && typeof res.json === 'object' ? (res.json as Envelope<T>) : { message: res.text.slice(0, 200) };
  const location = res.headers.location;
  return { status: res.status, body: parsed, location: typeof location === 'string' ? location : null };
}

export interface ClockAdvanceOptions {
  api?: string;
  key?: string;
  /** Real milliseconds between two looks at the advance (default 250). */
  pollMs?: number;
}

/** Runs `railyard clock advance <duration>`. */
export async function runClockAdvance(duration: string | undefined, options: ClockAdvanceOptions, io: ClockIo, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  const seconds = duration === undefined ? null : parseDuration(duration);
  if (seconds === null) {
    io.stderr.write(`railyard clock advance: give a duration such as 90s, 15m, 24h or 1d${duration === undefined ? '' : `, got "${duration}"`}\n`);
    return 2;
  }
  const key = options.key ?? env.RAILYARD_KEY ?? DEFAULT_KEY;
  const api = (options.api ?? env.RAILYARD_API ?? DEFAULT_API).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(api) || !URL.canParse(api)) {
    io.stderr.write(`railyard clock advance: --api must be an http(s) URL such as ${DEFAULT_API}, got "${api}"\n`);
    return 2;
  }
  if (!/^sk_test_\S+$/.test(key)) {
    io.stderr.write('railyard clock advance: --key must be a test key (sk_test_…): live keys cannot reach the sandbox clock\n');
    return 2;
  }
  const view = new AdvanceProgressView(io.stdout, env);
  try {
    const started = await call<AdvanceView & { now?: string; jobs_run?: number }>('POST', `${api}/api/v1/sandbox/clock/advance`, key, { seconds, async: true }, io.signal);
    if (started.status === 200) {
      // A server older than background advances: it answered when done.
      io.stdout.write(`Advanced ${seconds} s to ${started.body.data?.now ?? '?'}; ran ${started.body.data?.jobs_run ?? '?'} job(s)\n`);
      return 0;
    }
    if (started.status !== 202 || !started.body.data) {
      const refusal = `railyard clock advance: the API refused: ${started.status} ${started.body.error?.code ?? ''} ${started.body.message ?? ''}`;
      io.stderr.write(`${refusal.trimEnd()}\n`);
      return 1;
    }
    let advance = started.body.data;
    const location = started.location ?? `/api/v1/sandbox/clock/advances/${advance.id}`;
    io.stdout.write(`Advancing ${seconds} s: ${advance.from} -> ${advance.to} (${advance.id})\n`);
    view.update(advance);
    while (advance.state === 'running') {
      await new Promise((done) => setTimeout(done, options.pollMs ?? 250));
      if (io.signal?.aborted) {
        view.end();
        io.stderr.write(`railyard clock advance: stopped watching; the advance goes on at ${api}${location}\n`);
        return 1;
      }
      const polled = await call<AdvanceView>('GET', `${api}${location}`, key, undefined, io.signal);
      if (polled.status !== 200 || !polled.body.data) {
        view.end();
        const failure = `railyard clock advance: could not follow ${location}: ${polled.status} ${polled.body.message ?? ''}`;
        io.stderr.write(`${failure.trimEnd()}\n`);
        return 1;
      }
      advance = polled.body.data;
      view.update(advance);
    }
    view.end();
    if (advance.state === 'failed') {
      io.stderr.write(`railyard clock advance: the advance failed after ${advance.jobs_done} job(s): ${advance.error ?? 'unknown error'}\n`);
      return 1;
    }
    io.stdout.write(`Advanced ${seconds} s to ${advance.to}; ran ${advance.jobs_done} job(s)\n`);
    return 0;
  } catch (err) {
    view.end();
    if (io.signal?.aborted) return 1;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    io.stderr.write(`railyard clock advance: ${api} failed: ${cause}. Is railyard running there (railyard serve)?\n`);
    return 1;
  }
}

const CLOCK_USAGE = 'railyard clock advance <duration> [--api <url>] [--key <sk_test_…>]';

/** `railyard clock …` from main.ts: the exit code. */
export async function clockMain(args: string[], usage: string): Promise<number> {
  const parsed = parseCommandArgs('clock', usage, {
    args,
    strict: true,
    allowPositionals: true,
    options: { api: { type: 'string' }, base: { type: 'string' }, key: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  const [sub, duration, ...extra] = positionals;
  if (sub !== 'advance' || extra.length) {
    process.stderr.write(`railyard clock: usage: ${CLOCK_USAGE}\n`);
    return 2;
  }
  return runClockAdvance(duration, { api: values.api ?? values.base, key: values.key }, { stdout: process.stdout, stderr: process.stderr, signal: stopSignal() });
}
