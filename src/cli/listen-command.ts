// railyard listen: forward the sandbox's events to a local URL, signed, like `stripe listen`.
//
//   railyard listen --forward-to http://localhost:3000/webhooks
//                   [--api http://localhost:4010]   the sandbox (default $RAILYARD_API or http://localhost:4010)
//                   [--key sk_test_…]               the API key (default $RAILYARD_KEY or the sandbox key)
//                   [--events charge.success,…]     only these event types (default: all)
//                   [--print-secret]                print the signing secret and exit
//
// It reads GET /api/v1/events/stream (server-sent events) and POSTs each event's JSON to the
// forward URL, signed per Standard Webhooks (webhook-id = the event id, webhook-timestamp = now,
// webhook-signature = v1,<HMAC>) with a secret derived from the API key, so it is the same on
// every run: verify with it as with an endpoint's secret. Output:
//
//   Ready! Forwarding http://localhost:4010 events to http://localhost:3000/webhooks. Your webhook signing secret is whsec_… (^C to quit)
//   2026-01-01T00:00:00.000Z  --> charge.pending [evt_…]
//   2026-01-01T00:00:00.050Z  <-- [200] POST http://localhost:3000/webhooks [evt_…]
//   2026-01-01T00:00:10.050Z  <-- [ERR] POST http://localhost:3000/webhooks [evt_…] timed out after 10 s
//
// A dropped stream is reconnected with backoff (1 s doubling to 30 s); events emitted while it
// is down are not replayed (GET /api/v1/events lists them). ^C or SIGTERM stops it.

import { createHmac } from 'node:crypto';
import { webhookHeaders } from '../webhooks/webhook-signer.ts';
import { EVENT_TYPES } from '../webhooks/webhook.schemas.ts';

export const DEFAULT_API = 'http://localhost:4010';
export const DEFAULT_KEY = 'sk_test_railyard_sandbox_0000000000000000';
export const FORWARD_TIMEOUT_MS = 10_000;
/** The server sends a heartbeat comment every 15 s; silence for this long means a dead stream. */
export const STREAM_IDLE_MS = 45_000;
const BACKOFF_START_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  signal?: AbortSignal;
}

export interface ListenOptions {
  forwardTo?: string;
  api?: string;
  key?: string;
  /** Comma-separated event types. */
  events?: string;
  printSecret?: boolean;
}

/** Exit codes: 0 stopped (or --print-secret), 1 the API refused the stream, 2 bad options. */
export type ExitCode = 0 | 1 | 2;

/** whsec_ + base64 of the first 24 bytes of HMAC-SHA256(key, 'railyard-listen'): stable per key. */
export function listenSecret(apiKey: string): string {
  return `whsec_${createHmac('sha256', apiKey).update('railyard-listen').digest().subarray(0, 24).toString('base64')}`;
}

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * An incremental parser for text/event-stream (the WHATWG rules): lines end in CRLF, LF or CR,
 * which may be split across chunks; `:` lines are comments; a blank line dispatches the event
 * (data lines joined with LF); an event with no data is dropped.
 */
export class SseParser {
  private buffer = '';
  private pendingCr = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  push(chunk: Uint8Array | string): void {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr) {
      // The previous chunk ended in CR, which already ended its line: a LF right after it is
      // the second half of a CRLF.
      if (text.startsWith('\n')) text = text.slice(1);
      this.pendingCr = false;
    }
    this.buffer += text;
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.buffer);
      if (!match) break;
      const line = this.buffer.slice(0, match.index);
      let rest = this.buffer.slice(match.index + match[0].length);
      if (match[0] === '\r' && rest.length === 0) this.pendingCr = true;
      else if (match[0] === '\r' && rest.startsWith('\n')) rest = rest.slice(1);
      this.buffer = rest;
      this.line(line);
    }
  }

  /** The last `id:` seen (the stream's Last-Event-ID). */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break; // retry and unknown fields: ignored
    }
  }

  private dispatch(): void {
    const data = this.data;
    const type = this.eventType;
    this.data = [];
    this.eventType = '';
    if (data.length === 0) return;
    this.onEvent({ id: this.lastId, event: type || 'message', data: data.join('\n') });
  }
}

interface Resolved {
  api: string;
  forwardTo: string;
  key: string;
  types: string[] | null;
}

function httpUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function resolveOptions(options: ListenOptions, env: NodeJS.ProcessEnv): Resolved | string {
  const key = options.key ?? env.RAILYARD_KEY ?? DEFAULT_KEY;
  if (!/^sk_(test|live)_\S+$/.test(key)) return `--key must be an API key (sk_test_… or sk_live_…), got "${key}"`;
  const api = options.api ?? env.RAILYARD_API ?? DEFAULT_API;
  if (!httpUrl(api)) return `--api must be an http(s) URL such as ${DEFAULT_API}, got "${api}"`;
  let types: string[] | null = null;
  if (options.events !== undefined) {
    types = options.events
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (types.length === 0 || unknown.length) {
      return `--events: unknown event type(s) ${unknown.join(', ') || '(none given)'}; valid: ${EVENT_TYPES.join(', ')}`;
    }
  }
  if (options.printSecret) return { api: api.replace(/\/+$/, ''), forwardTo: '', key, types };
  if (options.forwardTo === undefined || options.forwardTo === '') {
    return '--forward-to <url> is required: where to POST each event, e.g. --forward-to http://localhost:3000/webhooks';
  }
  if (!httpUrl(options.forwardTo)) return `--forward-to must be an absolute http(s) URL, got "${options.forwardTo}"`;
  return { api: api.replace(/\/+$/, ''), forwardTo: options.forwardTo, key, types };
}

function errorReason(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    if (err.name === 'TimeoutError') return `timed out after ${FORWARD_TIMEOUT_MS / 1000} s`;
    if (cause instanceof Error) {
      const code = (cause as Error & { code?: string }).code;
      return code && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
    }
    return err.message;
  }
  return String(err);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) return done();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}

class FatalStreamError extends Error {}

/**
 * Runs `railyard listen` until `io.signal` aborts (resolves 0), the API refuses the key or the
 * filter (1), or the options are bad (2, with a message on stderr).
 */
export async function runListen(options: ListenOptions, io: CommandIo, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  const resolved = resolveOptions(options, env);
  if (typeof resolved === 'string') {
    io.stderr.write(`railyard listen: ${resolved}\n`);
    return 2;
  }
  const secret = listenSecret(resolved.key);
  if (options.printSecret) {
    io.stdout.write(`${secret}\n`);
    return 0;
  }
  const signal = io.signal ?? new AbortController().signal;
  const { api, forwardTo, key, types } = resolved;
  const streamUrl = `${api}/api/v1/events/stream${types ? `?types=${encodeURIComponent(types.join(','))}` : ''}`;
  const now = () => new Date().toISOString();

  // Deliveries go out one at a time, in the order the stream gave them.
  let queue: Promise<void> = Promise.resolve();
  const forward = (event: SseEvent) => {
    queue = queue.then(() => deliver(event));
  };
  const deliver = async (event: SseEvent): Promise<void> => {
    if (signal.aborted) return;
    let id = event.id;
    let type = event.event;
    try {
      const parsed = JSON.parse(event.data) as { id?: unknown; type?: unknown };
      if (typeof parsed.id === 'string') id = parsed.id;
      if (typeof parsed.type === 'string') type = parsed.type;
    } catch {
      // Not JSON: forwarded as it came.
    }
    id ??= `msg_${Date.now()}`;
    io.stdout.write(`${now()}  --> ${type} [${id}]\n`);
    const body = event.data;
    const headers = { ...webhookHeaders([secret], id, Math.floor(Date.now() / 1000), body), 'user-agent': 'railyard-listen/1' };
    try {
      const res = await fetch(forwardTo, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      io.stdout.write(`${now()}  <-- [${res.status}] POST ${forwardTo} [${id}]\n`);
    } catch (err) {
      if (signal.aborted) return;
      io.stdout.write(`${now()}  <-- [ERR] POST ${forwardTo} [${id}] ${errorReason(err)}\n`);
    }
  };

  let announced = false;
  let backoff = BACKOFF_START_MS;
  while (!signal.aborted) {
    let connected = false;
    let reason: string;
    try {
      await streamOnce(
        streamUrl,
        key,
        signal,
        () => {
          connected = true;
          backoff = BACKOFF_START_MS;
          if (!announced) {
            announced = true;
            io.stdout.write(`Ready! Forwarding ${api} events to ${forwardTo}. Your webhook signing secret is ${secret} (^C to quit)\n`);
          } else {
            io.stdout.write(`${now()}  reconnected to ${api}\n`);
          }
        },
        forward,
      );
      reason = 'the server closed the stream';
    } catch (err) {
      if (signal.aborted) break;
      if (err instanceof FatalStreamError) {
        io.stderr.write(`railyard listen: ${err.message}\n`);
        await queue;
        return 1;
      }
      reason = errorReason(err);
    }
    if (signal.aborted) break;
    const wait = backoff;
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    io.stdout.write(connected || announced ? `${now()}  stream dropped (${reason}); reconnecting in ${wait / 1000} s\n` : `${now()}  cannot reach ${api} (${reason}); retrying in ${wait / 1000} s\n`);
    await sleep(wait, signal);
  }
  await queue;
  return 0;
}

/** One connection to the stream: resolves when the server ends it, throws when it breaks. */
async function streamOnce(url: string, key: string, signal: AbortSignal, onOpen: () => void, onEvent: (event: SseEvent) => void): Promise<void> {
  const connection = new AbortController();
  const stop = () => connection.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  let idle: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => connection.abort(new Error(`no data for ${STREAM_IDLE_MS / 1000} s`)), STREAM_IDLE_MS);
  };
  try {
    touch();
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'user-agent': 'railyard-listen/1' },
      signal: connection.signal,
    });
    if (res.status !== 200) {
      const text = await res.text().catch(() => '');
      let message = text.slice(0, 300);
      try {
        const body = JSON.parse(text) as { message?: string; error?: { code?: string } };
        if (body.message) message = `${body.error?.code ?? 'error'}: ${body.message}`;
      } catch {
        // not the envelope
      }
      const refusal = `the API answered ${res.status} to GET ${new URL(url).pathname}: ${message}`;
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new FatalStreamError(refusal);
      throw new Error(refusal);
    }
    if (!res.body) throw new Error('the stream has no body');
    onOpen();
    const parser = new SseParser(onEvent);
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        touch();
        parser.push(value);
      }
    } finally {
      reader.releaseLock();
    }
  } catch (err) {
    // An idle timeout aborts with its own reason; surface that instead of a bare AbortError.
    if (connection.signal.aborted && !signal.aborted && connection.signal.reason instanceof Error) throw connection.signal.reason;
    throw err;
  } finally {
    clearTimeout(idle);
    signal.removeEventListener('abort', stop);
    if (!connection.signal.aborted) connection.abort();
  }
}
