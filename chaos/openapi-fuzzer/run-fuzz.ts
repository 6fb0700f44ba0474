/**
 * A fuzzer derived from railyard's own OpenAPI document (GET /openapi.json): for every operation
 * it sends hostile requests (wrong types, huge, negative and fractional numbers, unicode and
 * emoji, very long strings, prototype-pollution keys, null/arrays/objects for scalars, missing
 * and extra fields, duplicate keys, truncated and non-JSON bodies, wrong content types and
 * encodings, odd path ids, cursor and page_size garbage, repeated query params, odd
 * Idempotency-Key, Authorization and signature headers, unknown methods and paths) and some
 * valid-looking ones (which create the charges, quotes, trades and endpoints later requests
 * point at). Importing it has no side effects.
 *
 * The folder, by concern: operations-of (the document's operations), valid-value and
 * hostile-value (values from a schema; string-matching for patterns), mutators (what a request
 * breaks), draft-request and to-wire (a request drafted, then encoded and signed), send-request,
 * fuzz-state (ids, cursors and keys the run harvests), check-response and response-validator
 * (the checks), store-digest, format-finding, and this run loop. Every choice of request `index`
 * comes from indexedRandom(seed, index) (chaos/seeded-random.ts), the generator chaos uses too.
 *
 * Signed operations are those whose OpenAPI entry requires the X-Service-Signature header
 * (src/http/openapi.ts documents it, with X-Service-Timestamp, exactly where a route is signed);
 * they are signed with signRequest from src/kernel/sign-request.ts, which covers the
 * Idempotency-Key as the server reads it.
 *
 *   const report = await runFuzz({ baseUrl, key, secret, requests: 100_000, seed: 42 });
 *   for (const finding of report.findings) console.error(formatFinding(finding));
 *
 * Options of runFuzz (FuzzOptions):
 *   baseUrl      where railyard listens, e.g. http://127.0.0.1:3000
 *   key          an sk_test_ key holding every scope (sandbox helpers accept only test keys)
 *   secret       that key's signing secret: half of the requests to signed operations are
 *                signed correctly (so they reach validation), the other half badly
 *   requests     how many requests to send, one at a time (default 1 000)
 *   seed         the seed of every random choice (default 1); the same seed against the same
 *                starting state sends the same requests
 *   digest       optional: () => Promise<string>, a digest of the service's whole state (see
 *                storeDigest; one line per table, so a finding names the tables that changed);
 *                when given, every request answered 4xx must leave it unchanged
 *   quiet        true when nothing runs between requests (an in-process sandbox whose scheduler
 *                is not started): any change across a refused request is a finding at once.
 *                Default false, for a served railyard, whose scheduler fans webhooks out every
 *                200 ms: such a change counts only if it happens again when the request is
 *                replayed once the state has stood still (report.unconfirmed counts the others)
 *   document     the OpenAPI document; fetched from `${baseUrl}/openapi.json` when absent
 *   now          the merchant's clock for X-Service-Timestamp, in ms (default Date.now)
 *   timeoutMs    a request with no answer after this long is a finding (default 15 000)
 *   maxFindings  stop after this many distinct findings (default 20)
 *   onProgress   called every 500 requests with (sent, distinct findings)
 *   trace        called with every exchange (index, operation, mutations, request, response)
 *
 * Checks on every response: (a) no 5xx but 502 provider_unavailable; (b) every 4xx/5xx is the
 * JSON envelope {status:false, message, error:{code, details?}} with a code of ErrorCode, the
 * HTTP status the decisions table gives that code, details.fields on a validation_error and,
 * from an operation with a path id, `No such <object>: '<id>'` with details.id on a 404;
 * (c) with a digest, a request answered 4xx changes nothing; (d) a documented operation answers
 * only statuses its OpenAPI entry lists, and its success bodies match the documented schema;
 * (e) every request gets an answer.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { indexedRandom } from '../seeded-random.ts';
import { checkResponse, type Check } from './check-response.ts';
import { draftRequest } from './draft-request.ts';
import { harvest, type FuzzState } from './fuzz-state.ts';
import { parseJson, type Json } from './json-text.ts';
import { operationsOf } from './operations-of.ts';
import { responseValidator } from './response-validator.ts';
import { sendRequest, type WireRequest, type WireResponse } from './send-request.ts';
import { toWire } from './to-wire.ts';

export interface FuzzOptions {
  baseUrl: string;
  key: string;
  secret: string;
  requests?: number;
  seed?: number;
  digest?: () => Promise<string>;
  quiet?: boolean;
  document?: Json;
  now?: () => number;
  timeoutMs?: number;
  maxFindings?: number;
  onProgress?: (sent: number, findings: number) => void;
  /** Called with every exchange, for a verbose log. */
  trace?: (exchange: { index: number; operationId: string | null; mutations: string[]; request: WireRequest; response: WireResponse | null }) => void;
}

export interface Finding {
  check: Check;
  detail: string;
  seed: number;
  /** 0-based position of the request in the run. */
  index: number;
  operationId: string | null;
  /** What was broken in the request. */
  mutations: string[];
  request: WireRequest;
  response: WireResponse | null;
  /** How many requests hit the same problem (same check, operation, status and code). */
  count: number;
}

export interface FuzzReport {
  seed: number;
  sent: number;
  byStatus: Record<string, number>;
  /** Requests per operation and status: which operations the run got past validation. */
  byOperation: Record<string, Record<string, number>>;
  /** State changes across a refused request that a replay on a still server did not repeat. */
  unconfirmed: number;
  findings: Finding[];
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const seed = options.seed ?? 1;
  const total = options.requests ?? 1_000;
  const maxFindings = options.maxFindings ?? 20;
  const base = new URL(options.baseUrl);
  const transport =
    base.protocol === 'https:'
      ? { request: httpsRequest, agent: new HttpsAgent({ keepAlive: true, maxSockets: 1 }) }
      : { request: httpRequest, agent: new HttpAgent({ keepAlive: true, maxSockets: 1 }) };
  const send = (w: WireRequest) => sendRequest(transport, base, w, options.timeoutMs ?? 15_000);
  const document = options.document ?? JSON.parse((await send({ method: 'GET', path: '/openapi.json', headers: {} })).text);
  const operations = operationsOf(document);
  const validator = responseValidator(document);
  const state: FuzzState = { pools: new Map(), cursors: [], identities: [{ key: options.key, secret: options.secret, label: 'the sandbox key' }], idempotent: [], fresh: null };

  const report: FuzzReport = { seed, sent: 0, byStatus: {}, byOperation: {}, unconfirmed: 0, findings: [] };
  const distinct = new Map<string, Finding>();
  try {
    for (let index = 0; index < total && distinct.size < maxFindings; index++) {
      const rng = indexedRandom(seed, index);
      const draft = draftRequest(rng, operations, state, seed);
      const wire = toWire(draft, options.now ?? Date.now);
      const digest = options.digest;
      const before = digest ? await digest() : undefined;
      let response: WireResponse | null = null;
      let failure = '';
      try {
        response = await send(wire);
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      let after = before;
      if (digest && response && isRefusal(response.status)) {
        after = await digest();
        if (after !== before && !options.quiet && !(await changesAgain(digest, () => send(toWire(draft, options.now ?? Date.now))))) {
          report.unconfirmed++;
          after = before;
        }
      }
      report.sent++;
      const opKey = draft.op && draft.documented ? draft.op.operationId : `(undocumented ${wire.method})`;
      const status = response ? String(response.status) : 'none';
      report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
      report.byOperation[opKey] ??= {};
      const perOp = report.byOperation[opKey];
      perOp[status] = (perOp[status] ?? 0) + 1;

      const problems = response ? checkResponse(draft, response, validator, before, after) : [{ check: 'no_response' as const, detail: failure }];
      for (const p of problems) {
        const code = response ? (parseJson(response.text) as Json | undefined)?.error?.code : undefined;
        const id = [p.check, opKey, response?.status, code].join(' ');
        const seen = distinct.get(id);
        if (seen) seen.count++;
        else distinct.set(id, { ...p, seed, index, operationId: draft.op?.operationId ?? null, mutations: draft.labels, request: wire, response, count: 1 });
      }
      options.trace?.({ index, operationId: draft.op?.operationId ?? null, mutations: draft.labels, request: wire, response });
      if (response) harvest(state, draft, wire, response);
      if (response) await followAccepted(send, wire, response);
      if ((index + 1) % 500 === 0) options.onProgress?.(index + 1, distinct.size);
    }
  } finally {
    transport.agent.destroy();
  }
  report.findings = [...distinct.values()];
  return report;
}

const isRefusal = (status: number) => status >= 400 && status < 500;

/**
 * Work a 202 started in the background (a clock advance) is followed at its Location until it
 * ends, so that what it changes later is never taken for the doing of a refused request.
 */
async function followAccepted(send: (w: WireRequest) => Promise<WireResponse>, wire: WireRequest, response: WireResponse): Promise<void> {
  const location = response.headers.location;
  if (response.status !== 202 || typeof location !== 'string') return;
  const authorization = Object.entries(wire.headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  for (let polls = 0; polls < 1_200; polls++) {
    const polled = await send({ method: 'GET', path: location, headers: authorization === undefined ? {} : { authorization } }).catch(() => null);
    const state = polled?.status === 200 ? (parseJson(polled.text) as { data?: { state?: unknown } } | undefined)?.data?.state : undefined;
    if (state !== 'running') return;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/**
 * Whether a refused request changes the state again when replayed (re-signed, same
 * Idempotency-Key) once the state has stood still: a change made by background work does not.
 */
async function changesAgain(digest: () => Promise<string>, resend: () => Promise<WireResponse>): Promise<boolean> {
  let last = await digest();
  for (let still = 0, polls = 0; still < 3 && polls < 100; polls++) {
    await new Promise((done) => setTimeout(done, 100));
    const now = await digest();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  const response = await resend().catch(() => null);
  return response !== null && isRefusal(response.status) && (await digest()) !== last;
}
