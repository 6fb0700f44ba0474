// railyard faults: switch faults on railyard's own merchant API on and off in a running sandbox,
// without editing a scenario file (POST, GET and DELETE /api/v1/sandbox/faults).
//
//   railyard faults on lost-responses --route 'POST /api/v1/transfers' --probability 0.2
//   railyard faults on rate-limit --requests 25 --per-seconds 1
//   railyard faults list
//   railyard faults off [flt_1]
//
// Exit codes: 0 done, 1 the API refused or could not be reached, 2 bad arguments.

import { parseCommandArgs } from './cli-support.ts';
import { DEFAULT_API, DEFAULT_KEY } from './listen-command.ts';
import { ApiClient } from '../kernel/api-client.ts';

export interface FaultsIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const FAULTS_USAGE = `railyard faults on <profile> [--route 'METHOD /path'] [--probability P] [--every N] [--times N]
                    [--after-commit] [--latency-ms N] [--requests N] [--per-seconds N]
railyard faults list
railyard faults off [<id>]
  profiles: lost-responses, cut-connections, server-errors, slow-responses, rate-limit
  each takes [--api <url>] [--key <sk_test_…>]`;

interface FaultView {
  id: string | null;
  file: string | null;
  name: string;
  action: string;
  matched: number;
  fired: number;
}

interface Envelope<T> {
  message?: string;
  data?: T;
  error?: { code?: string; details?: { fields?: { field: string; message: string }[] } };
}

/** One line per fault: where it came from, its name, what it does and its counts. */
export function formatFaults(faults: readonly FaultView[]): string {
  if (!faults.length) return 'no faults in force\n';
  return faults.map((f) => `${(f.id ?? f.file ?? '').padEnd(12)}  ${f.action.padEnd(10)}  ${f.name}  (matched ${f.matched}, fired ${f.fired})\n`).join('');
}

function numberOption(text: string | undefined, integer: boolean): number | undefined | null {
  if (text === undefined) return undefined;
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : null;
}

export async function runFaults(args: string[], io: FaultsIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseCommandArgs('faults', `${FAULTS_USAGE}\n`, {
    args,
    strict: true,
    allowPositionals: true,
    options: {
      api: { type: 'string' },
      key: { type: 'string' },
      route: { type: 'string' },
      probability: { type: 'string' },
      every: { type: 'string' },
      times: { type: 'string' },
      'after-commit': { type: 'boolean' },
      'latency-ms': { type: 'string' },
      requests: { type: 'string' },
      'per-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${FAULTS_USAGE}\n`);
    return 0;
  }
  const [sub, arg, ...extra] = positionals;
  const usage = (why: string) => {
    io.stderr.write(`railyard faults: ${why}\nusage: ${FAULTS_USAGE}\n`);
    return 2;
  };
  const key = values.key ?? env.RAILYARD_KEY ?? DEFAULT_KEY;
  const api = (values.api ?? env.RAILYARD_API ?? DEFAULT_API).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(api) || !URL.canParse(api)) return usage(`--api must be an http(s) URL such as ${DEFAULT_API}, got "${api}"`);
  if (!/^sk_test_\S+$/.test(key)) return usage('--key must be a test key (sk_test_…): live keys never meet faults');
  if (extra.length) return usage(`unexpected ${extra.join(' ')}`);

  let method: 'GET' | 'POST' | 'DELETE';
  let path = '/api/v1/sandbox/faults';
  let body: Record<string, unknown> | undefined;
  if (sub === 'on') {
    if (!arg) return usage('name a profile');
    body = { profile: arg };
    if (values.route !== undefined) body.route = values.route;
    if (values['after-commit']) body.after_commit = true;
    for (const [option, field, integer] of [
      ['probability', 'probability', false],
      ['every', 'every', true],
      ['times', 'times', true],
      ['latency-ms', 'latency_ms', true],
      ['requests', 'requests', true],
      ['per-seconds', 'per_seconds', true],
    ] as const) {
      const n = numberOption(values[option], integer);
      if (n === null) return usage(`--${option} must be ${integer ? 'a whole number' : 'a number'}, got "${values[option]}"`);
      if (n !== undefined) body[field] = n;
    }
    method = 'POST';
  } else if (sub === 'off') {
    method = 'DELETE';
    if (arg) path += `/${encodeURIComponent(arg)}`;
  } else if (sub === 'list' && !arg) {
    method = 'GET';
  } else {
    return usage(sub ? `unknown subcommand "${sub}"` : 'say on, off or list');
  }

  try {
    const client = new ApiClient({ baseUrl: api, key, headers: { 'user-agent': 'railyard-faults/1' } });
    const res = await client.request({ method, path, body });
    const answer = (res.json ?? {}) as Envelope<unknown>;
    if (res.status >= 300) {
      const fields = answer.error?.details?.fields?.map((f) => `${f.field}: ${f.message}`).join('; ');
      const refusal = `railyard faults: the API refused: ${res.status} ${answer.error?.code ?? ''} ${fields ?? answer.message ?? ''}`;
      io.stderr.write(`${refusal.trimEnd()}\n`);
      return 1;
    }
    if (method === 'GET') io.stdout.write(formatFaults(answer.data as FaultView[]));
    else if (method === 'POST') io.stdout.write(`on: ${formatFaults([answer.data as FaultView])}`);
    else io.stdout.write(`off: ${(answer.data as { removed: number }).removed} fault(s) switched off\n`);
    return 0;
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    io.stderr.write(`railyard faults: ${api} failed: ${cause}. Is railyard running there (railyard serve)?\n`);
    return 1;
  }
}

/** `railyard faults …` from main.ts: the exit code. */
export function faultsMain(args: string[]): Promise<number> {
  return runFaults(args, { stdout: process.stdout, stderr: process.stderr });
}
