import { request as httpRequest } from 'node:http';

// Every request the harness makes is written down before it is sent (method, path, every header,
// the raw body) so that a retry after a crash is byte-identical: same timestamp, same signature,
// same Idempotency-Key. node:http is used instead of fetch because fetch adds headers of its own.

/** The only host the harness ever talks to. */
export const LOOPBACK = '127.0.0.1';

export interface RecordedRequest {
  method: 'GET' | 'POST';
  /** Path and query, exactly as signed. */
  path: string;
  /** Every header sent, in order, with its case; nothing else is added on the wire. */
  headers: Record<string, string>;
  body: string;
}

export interface HttpAnswer {
  ok: true;
  status: number;
  /** The raw response body, for byte-for-byte comparison of replays. */
  body: string;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
}

export interface NoAnswer {
  ok: false;
  /** ECONNREFUSED, ECONNRESET, timeout, ... */
  error: string;
  ms: number;
}

export type Outcome = HttpAnswer | NoAnswer;

/** Builds a request with explicit Host, Connection and Content-Length, so the wire bytes are all ours. */
export function recordRequest(port: number, method: 'GET' | 'POST', path: string, body: string | undefined, extra: Record<string, string>): RecordedRequest {
  const headers: Record<string, string> = { Host: `${LOOPBACK}:${port}`, ...extra };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  // One connection per request: a kept-alive socket that dies with the server would turn an
  // unsent request into an "unanswered" one for reasons that have nothing to do with the server.
  headers.Connection = 'close';
  return { method, path, headers, body: body ?? '' };
}

/** Sends a recorded request to 127.0.0.1:port; never throws, never waits longer than timeoutMs. */
export function sendRecorded(port: number, req: RecordedRequest, timeoutMs: number): Promise<Outcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const client = httpRequest({ host: LOOPBACK, port, method: req.method, path: req.path, headers: req.headers, agent: false, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers, ms: ms() }));
      // A response cut off mid-body is no answer: the client cannot know what it said.
      res.on('aborted', () => finish({ ok: false, error: 'response aborted', ms: ms() }));
      res.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: err.code ?? err.message, ms: ms() }));
    });
    const timer = setTimeout(() => {
      client.destroy(new Error('client timeout'));
      finish({ ok: false, error: `timeout after ${timeoutMs} ms`, ms: ms() });
    }, timeoutMs);
    client.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: err.code ?? err.message, ms: ms() }));
    client.end(req.body === '' ? undefined : req.body);
  });
}

/** A plain JSON call for the harness's own bookkeeping (fund, advance, reads). */
export async function apiCall(port: number, key: string, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 60_000): Promise<{ status: number; json: any; raw: string }> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const outcome = await sendRecorded(port, recordRequest(port, method, path, raw, { Authorization: `Bearer ${key}` }), timeoutMs);
  if (!outcome.ok) throw new Error(`${method} ${path}: no answer (${outcome.error})`);
  let json: any = null;
  try {
    json = JSON.parse(outcome.body);
  } catch {
    // Leave json null; callers look at the status and raw text.
  }
  return { status: outcome.status, json, raw: outcome.body };
}
