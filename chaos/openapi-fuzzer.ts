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
 * Signed operations are those whose OpenAPI entry requires the X-Service-Signature header
 * (src/http/openapi.ts documents it, with X-Service-Timestamp, exactly where a route is signed);
 * they are signed with signRequest from src/auth/request-signature.ts, which covers the
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
import { createHash } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { signRequest } from '../src/kernel/sign-request.ts';
import { HTTP_STATUS } from '../src/http/error-mapper.ts';
import type { Db } from '../src/store/db.ts';

// ajv and ajv-formats are CommonJS with `exports.default`.
type Ajv2020Class = typeof import('ajv/dist/2020.js').default;
type AddFormats = typeof import('ajv-formats').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

type Json = Record<string, any>;

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

export interface WireRequest {
  method: string;
  /** Path and query exactly as sent (the request target). */
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export type Check = 'server_error' | 'not_envelope' | 'status_mismatch' | 'error_details' | 'state_changed' | 'undocumented_status' | 'response_schema' | 'no_response';

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
  const transport = base.protocol === 'https:' ? { request: httpsRequest, agent: new HttpsAgent({ keepAlive: true, maxSockets: 1 }) } : { request: httpRequest, agent: new HttpAgent({ keepAlive: true, maxSockets: 1 }) };
  const send = (w: WireRequest) => sendRequest(transport, base, w, options.timeoutMs ?? 15_000);
  const document = options.document ?? JSON.parse((await send({ method: 'GET', path: '/openapi.json', headers: {} })).text);
  const operations = operationsOf(document);
  const validator = responseValidator(document);
  const state: FuzzState = { pools: new Map(), cursors: [], identities: [{ key: options.key, secret: options.secret, label: 'the sandbox key' }], idempotent: [], fresh: null };

  const report: FuzzReport = { seed, sent: 0, byStatus: {}, byOperation: {}, unconfirmed: 0, findings: [] };
  const distinct = new Map<string, Finding>();
  try {
    for (let index = 0; index < total && distinct.size < maxFindings; index++) {
      const rng = new Rng(mix(seed, index));
      const draft = draftRequest(rng, operations, state, options);
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
      const perOp = (report.byOperation[opKey] ??= {});
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

/** A finding as text a person can replay: the seed, the request and what came back. */
export function formatFinding(f: Finding): string {
  const clip = (s: string | undefined, n = 2_000) => (s === undefined ? '(none)' : s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
  return [
    `[${f.check}] ${f.detail} (seen ${f.count}x; seed ${f.seed}, request #${f.index}, ${f.operationId ?? 'no documented operation'})`,
    `  mutations: ${f.mutations.join('; ') || 'none (a valid-looking request)'}`,
    `  request:   ${f.request.method} ${clip(f.request.path, 500)}`,
    `  headers:   ${clip(JSON.stringify(f.request.headers), 1_000)}`,
    `  body:      ${clip(f.request.body === undefined ? undefined : JSON.stringify(f.request.body))}`,
    `  response:  ${f.response ? `${f.response.status} ${clip(f.response.text)}` : '(no response)'}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// State digest
// ---------------------------------------------------------------------------------------------

/**
 * Rows a refused request may still write, each with why; every other row of every table
 * (sqlite_sequence included: a refused request's transaction rolls its AUTOINCREMENT counters
 * back too) must stay byte-identical across a 4xx.
 */
export const DIGEST_EXCLUSIONS: Readonly<Record<string, { where: string; reason: string }>> = {
  rail_attempts: {
    where: "ref_type = 'name_enquiry'",
    reason:
      'A name enquiry moves nothing but really calls a provider, and the router logs every upstream call whatever it answers: ' +
      'a 404 enquiry is the provider saying "no such account", logged as the request log line is.',
  },
  sqlite_sequence: { where: "name = 'rail_attempts'", reason: 'the AUTOINCREMENT counter those log rows advance' },
};

/**
 * A digest of every row of every table (row count and SHA-256 of the rows in rowid order),
 * for FuzzOptions.digest. SQLite spells each row out itself (quote() of every column), so a
 * digest costs one query per table; and its change counters (total_changes() for this
 * connection, data_version for the others) say when nothing was written since the last digest,
 * which then stands: most refused requests cost two cheap queries, not a scan.
 */
export function storeDigest(db: Pick<Db, 'all' | 'get'>, exclusions: Readonly<Record<string, { where: string }>> = DIGEST_EXCLUSIONS): () => Promise<string> {
  let last: { marker: string; digest: string } | undefined;
  const rowText = new Map<string, string>();
  const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
  return async () => {
    const changes = await db.get<{ n: number }>('SELECT total_changes() AS n');
    const version = await db.get<{ data_version: number }>('PRAGMA data_version');
    const marker = `${changes?.n}:${version?.data_version}`;
    if (last?.marker === marker) return last.digest;
    const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    const lines: string[] = [];
    for (const { name } of tables) {
      let row = rowText.get(name);
      if (!row) {
        const columns = await db.all<{ name: string }>(`PRAGMA table_info(${ident(name)})`);
        row = columns.map((c) => `quote(${ident(c.name)})`).join(" || ',' || ");
        rowText.set(name, row);
      }
      const skip = Object.hasOwn(exclusions, name) ? ` WHERE NOT (${exclusions[name]!.where})` : '';
      const all = await db.get<{ n: number; rows: string | null }>(`SELECT count(*) AS n, group_concat(${row}, char(10) ORDER BY rowid) AS rows FROM ${ident(name)}${skip}`);
      lines.push(`${name}: ${all?.n ?? 0} rows, ${createHash('sha256').update(all?.rows ?? '').digest('hex').slice(0, 16)}`);
    }
    last = { marker, digest: lines.join('\n') };
    return last.digest;
  };
}

// ---------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------

export interface Param {
  name: string;
  required: boolean;
  schema: Json;
}

export interface Operation {
  operationId: string;
  method: string;
  /** OpenAPI template: /api/v1/charges/{id} */
  path: string;
  pathParams: Param[];
  queryParams: Param[];
  body: Json | undefined;
  idempotent: boolean;
  /** Marked by its required X-Service-Signature header parameter. */
  signed: boolean;
  statuses: Set<number>;
  /** Success statuses documented with a body that is not JSON (a CSV export), with their media type. */
  textStatuses: Map<number, string>;
  /** Id prefixes it takes, in its path or body (`qt` for executeTrade): what to follow a creation with. */
  consumes: Set<string>;
}

export function operationsOf(document: Json): Operation[] {
  const resolve = (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let hops = 0; n && typeof n.$ref === 'string' && hops < 10; hops++) {
      n = (n.$ref as string).replace(/^#\//, '').split('/').reduce<any>((at, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return n;
  };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
      const params = ((op.parameters ?? []) as Json[]).map((p) => resolve(p)!).filter(Boolean);
      const param = (p: Json): Param => ({ name: p.name, required: Boolean(p.required), schema: resolve(p.schema) ?? {} });
      const headers = params.filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase());
      operations.push({
        operationId: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map(param),
        queryParams: params.filter((p) => p.in === 'query').map(param),
        body: resolve(resolve(op.requestBody)?.content?.['application/json']?.schema),
        idempotent: headers.includes('idempotency-key'),
        signed: headers.includes('x-service-signature'),
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
        textStatuses: new Map(
          Object.entries<Json>(op.responses ?? {}).flatMap(([status, response]) => {
            const media = Object.keys(resolve(response)?.content ?? {});
            return media.length && !media.includes('application/json') ? [[Number(status), media[0]!.split(';')[0]!] as const] : [];
          }),
        ),
        consumes: new Set([...params.filter((p) => p.in === 'path').map((p) => resolve(p.schema)?.examples?.[0]), ...patternsIn(resolve(resolve(op.requestBody)?.content?.['application/json']?.schema))].flatMap((s) => (typeof s === 'string' && ID_PATTERN.test(s) ? [ID_PATTERN.exec(s)![1]!] : /^\^([a-z]+)_\[0-9a-z\]\{20\}\$$/.exec(String(s))?.slice(1) ?? []))),
      });
    }
  }
  return operations;
}

function patternsIn(schema: unknown, depth = 0): string[] {
  if (!schema || typeof schema !== 'object' || depth > 6) return [];
  return Object.entries(schema).flatMap(([k, v]) => (k === 'pattern' && typeof v === 'string' ? [v] : patternsIn(v, depth + 1)));
}

type ResponseValidator = (op: Operation, status: number, body: unknown) => string | null;

function responseValidator(document: Json): ResponseValidator {
  const id = 'https://railyard.local/openapi.json';
  const ajv = new Ajv2020({ strict: false, allErrors: false, logger: false });
  addFormats(ajv);
  try {
    ajv.addSchema({ ...document, $id: id });
  } catch {
    return () => null; // a document ajv cannot read: the other checks still run
  }
  const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  return (op, status, body) => {
    let validate;
    try {
      validate = ajv.getSchema(id + pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'));
    } catch {
      return null;
    }
    if (!validate || validate(body)) return null;
    return ajv.errorsText(validate.errors);
  };
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

const ERROR_CODES = new Set(Object.keys(HTTP_STATUS));

function checkResponse(draft: Draft, res: WireResponse, validate: ResponseValidator, before: string | undefined, after: string | undefined): { check: Check; detail: string }[] {
  const problems: { check: Check; detail: string }[] = [];
  const body = parseJson(res.text) as Json | undefined;
  const code: unknown = body?.error?.code;
  if (res.status >= 500 && !(res.status === 502 && code === 'provider_unavailable')) {
    problems.push({ check: 'server_error', detail: `${res.status} ${typeof code === 'string' ? code : 'without an error code'}` });
  }
  if (res.status >= 400) {
    const shape = envelopeProblem(res, body);
    if (shape) problems.push({ check: 'not_envelope', detail: shape });
    else if (HTTP_STATUS[code as keyof typeof HTTP_STATUS] !== res.status) {
      problems.push({ check: 'status_mismatch', detail: `${code} is ${HTTP_STATUS[code as keyof typeof HTTP_STATUS]} in the decisions table, answered ${res.status}` });
    } else {
      const details = detailsProblem(draft, body!);
      if (details) problems.push({ check: 'error_details', detail: details });
    }
  }
  // A buy parked for compliance review is refused (403 compliance_block) yet creates its
  // trade, under_review, by design (spec): the one refusal that changes state.
  const stateChanged = before !== after;
  const parked = code === 'compliance_block' && body?.error?.details?.order_reference !== undefined;
  if (stateChanged && !parked) problems.push({ check: 'state_changed', detail: `answered ${res.status} ${String(code)} but the state changed: ${changedLines(before!, after!)}` });
  if (draft.op && draft.documented) {
    if (!draft.op.statuses.has(res.status)) {
      problems.push({ check: 'undocumented_status', detail: `${res.status}${typeof code === 'string' ? ` ${code}` : ''} is not among the documented ${[...draft.op.statuses].join(', ')}` });
    } else if (res.status < 300 && draft.op.textStatuses.has(res.status)) {
      const media = draft.op.textStatuses.get(res.status)!;
      const got = String(res.headers['content-type'] ?? '(none)');
      if (got.split(';')[0]!.trim() !== media) problems.push({ check: 'response_schema', detail: `content-type ${got}, not the documented ${media}` });
    } else if (res.status < 300) {
      const invalid = body === undefined ? 'the body is not JSON' : validate(draft.op, res.status, body);
      if (invalid) problems.push({ check: 'response_schema', detail: invalid });
    }
  }
  return problems;
}

/**
 * What the decisions table promises in details: validation_error names each offending field;
 * a 404 from an operation with a path id names that id (Stripe's `No such charge: 'chg_x'`).
 */
function detailsProblem(draft: Draft, body: Json): string | null {
  const { code, details } = body.error;
  if (code === 'validation_error') {
    const fields = details?.fields;
    const named = Array.isArray(fields) && fields.length > 0 && fields.every((f) => typeof f?.field === 'string' && typeof f?.message === 'string');
    if (!named) return 'validation_error without details.fields naming the offending fields';
  }
  if (code === 'not_found' && draft.op && draft.documented && draft.op.pathParams.length) {
    const ids = Object.values(draft.pathParams).map((p) => (p.raw ? p.value : Buffer.from(p.value, 'utf8').toString('utf8')));
    if (!ids.includes(details?.id)) return `not_found from ${draft.op.operationId} without details.id naming the id in the path`;
    if (!String(body.message).startsWith('No such ')) return `not_found from ${draft.op.operationId} worded ${JSON.stringify(body.message.slice(0, 80))}, not "No such <object>: '<id>'"`;
  }
  return null;
}

/** Digests are lines (storeDigest: one per table); a change names the lines that differ. */
function changedLines(before: string, after: string): string {
  const old = new Set(before.split('\n'));
  const changed = after.split('\n').filter((line) => !old.has(line));
  return changed.length ? changed.join('; ') : 'the digest differs';
}

function envelopeProblem(res: WireResponse, body: Json | undefined): string | null {
  if (!/^application\/json\b/.test(String(res.headers['content-type'] ?? ''))) return `content-type ${res.headers['content-type'] ?? '(none)'}, not application/json`;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object';
  const extra = Object.keys(body).filter((k) => !['status', 'message', 'error'].includes(k));
  if (extra.length) return `unexpected top-level fields ${extra.join(', ')}`;
  if (body.status !== false) return 'status is not false';
  if (typeof body.message !== 'string' || body.message.length === 0) return 'message is not a non-empty string';
  const error = body.error;
  if (!error || typeof error !== 'object' || Array.isArray(error)) return 'error is not an object';
  if (Object.keys(error).some((k) => k !== 'code' && k !== 'details')) return `error has fields besides code and details: ${Object.keys(error).join(', ')}`;
  if (typeof error.code !== 'string' || !ERROR_CODES.has(error.code)) return `error.code ${JSON.stringify(error.code)} is not an ErrorCode`;
  if ('details' in error && (error.details === null || typeof error.details !== 'object' || Array.isArray(error.details))) return 'error.details is not an object';
  return null;
}

// ---------------------------------------------------------------------------------------------
// What the run has learned: ids to point at, cursors, keys
// ---------------------------------------------------------------------------------------------

interface Harvested {
  id: string;
  /** The object the id was found in (a quote's network and side, say). */
  object: Json;
}

interface Identity {
  key: string;
  secret: string;
  label: string;
}

interface FuzzState {
  /** By id prefix: chg, trf, qt, trd, we, evt, wd... */
  pools: Map<string, Harvested[]>;
  cursors: string[];
  identities: Identity[];
  /** Idempotency-Keys sent to idempotent operations, for reuse. */
  idempotent: { operationId: string; key: string; body: string | undefined }[];
  /** The prefix of the object the last request created, if it did: the next may well use it. */
  fresh: string | null;
}

const ID_PATTERN = /^([a-z]+)_[0-9a-z]{20}$/;
const POOL_SIZE = 200;

function remember<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > POOL_SIZE) list.splice(0, list.length - POOL_SIZE);
}

function harvest(state: FuzzState, draft: Draft, wire: WireRequest, res: WireResponse): void {
  if (draft.op?.idempotent && draft.idempotencyKey !== null && typeof draft.idempotencyKey === 'string' && draft.idempotencyKey.length > 0) {
    remember(state.idempotent, { operationId: draft.op.operationId, key: draft.idempotencyKey, body: wire.body });
  }
  state.fresh = null;
  if (res.status >= 300) return;
  const body = parseJson(res.text) as Json | undefined;
  if (!body) return;
  const created = ID_PATTERN.exec(String(body.data?.reference ?? body.data?.id ?? ''));
  if (created && wire.method !== 'GET') state.fresh = created[1]!;
  if (typeof body.meta?.next_cursor === 'string') remember(state.cursors, body.meta.next_cursor);
  const data = body.data;
  if (draft.op?.operationId === 'sandboxCreateKey' && typeof data?.key === 'string' && typeof data?.signing_secret === 'string') {
    remember(state.identities, { key: data.key, secret: data.signing_secret, label: `a harvested ${data.environment} key (${(data.scopes ?? []).join(' ')})` });
  }
  const walk = (node: unknown, depth: number): void => {
    if (depth > 4 || !node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.slice(0, 50).forEach((n) => walk(n, depth + 1));
    for (const value of Object.values(node as Json)) {
      const match = typeof value === 'string' ? ID_PATTERN.exec(value) : null;
      if (match) {
        const pool = state.pools.get(match[1]!) ?? [];
        if (!pool.some((h) => h.id === value)) remember(pool, { id: value as string, object: node as Json });
        state.pools.set(match[1]!, pool);
      } else walk(value, depth + 1);
    }
  };
  walk(data, 0);
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/** JSON text written as-is: -0, 1e400, 9007199254740993 and other numbers JSON.stringify cannot spell. */
class RawJson {
  constructor(readonly text: string) {}
}

type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string };
type SignMode = 'valid' | 'uppercase' | 'missing' | 'wrong' | 'stale' | 'future' | 'millis' | 'garbage-timestamp' | 'other-body' | 'other-path' | 'other-key' | 'empty';

interface Draft {
  op: Operation | null;
  /** Whether the method and path are the operation's own (not swapped for an undocumented one). */
  documented: boolean;
  method: string;
  path: string;
  pathParams: Record<string, { value: string; raw?: boolean }>;
  query: [string, string][];
  rawQuery: string | null;
  headers: Record<string, string | string[]>;
  body: Body;
  contentType: string | null;
  identity: Identity | null;
  authorization: string | null;
  idempotencyKey: string | string[] | null;
  sign: SignMode | null;
  labels: string[];
}

function draftRequest(rng: Rng, operations: Operation[], state: FuzzState, options: FuzzOptions): Draft {
  // Often follow a creation with an operation on what it created: execute a fresh quote,
  // review a fresh trade, rotate a fresh endpoint's secret.
  const followers = state.fresh ? operations.filter((o) => o.consumes.has(state.fresh!)) : [];
  const following = followers.length > 0 && rng.chance(0.5);
  const op = following ? rng.pick(followers) : rng.pick(operations);
  const gen: Gen = { rng, state };
  const draft: Draft = {
    op,
    documented: true,
    method: op.method,
    path: op.path,
    pathParams: Object.fromEntries(op.pathParams.map((p) => [p.name, { value: validPathValue(gen, p) }])),
    query: validQuery(gen, op),
    rawQuery: null,
    headers: {},
    body: op.body ? { kind: 'json', value: validValue(gen, op.body, '', undefined) } : { kind: 'none' },
    contentType: op.body ? 'application/json' : null,
    identity: state.identities[0]!,
    authorization: null,
    idempotencyKey: op.idempotent ? `fz-${options.seed ?? 1}-${rng.int(2 ** 31).toString(36)}-${rng.int(2 ** 31).toString(36)}` : null,
    sign: op.signed ? 'valid' : null,
    labels: [],
  };
  // A quarter valid-looking (most follow-ups, so that objects get further along their life);
  // the rest break one to three things.
  const roll = rng.next();
  const count = roll < (following ? 0.6 : 0.25) ? 0 : roll < 0.75 ? 1 : roll < 0.93 ? 2 : 3;
  for (let i = 0; i < count; i++) {
    const applicable = MUTATORS.filter((m) => m.applies(draft));
    rng.weighted(applicable.map((m) => [m, m.weight] as const)).apply(draft, gen);
  }
  // Half the requests to signed operations carry a bad signature, the other half a good one.
  if (op.signed && draft.sign === 'valid' && rng.chance(0.5)) {
    // 'uppercase' is a good signature in upper-case hex, which the server must accept.
    draft.sign = rng.pick(['missing', 'wrong', 'stale', 'future', 'millis', 'garbage-timestamp', 'other-body', 'other-path', 'other-key', 'empty', 'uppercase'] as const);
    draft.labels.push(`signature: ${draft.sign}`);
  }
  return draft;
}

function toWire(d: Draft, now: () => number): WireRequest {
  let path = d.path.replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) => {
    const p = d.pathParams[name];
    return p ? (p.raw ? p.value : percentEncode(p.value)) : '';
  });
  const query = d.query.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`);
  if (d.rawQuery !== null) query.push(d.rawQuery);
  if (query.length) path += `?${query.join('&')}`;

  const rawBody = d.body.kind === 'none' ? undefined : d.body.kind === 'raw' ? d.body.text : jsonText(d.body.value);
  const headers: Record<string, string | string[]> = {};
  const authorization = d.authorization ?? (d.identity ? `Bearer ${d.identity.key}` : null);
  if (authorization !== null) headers.authorization = headerSafe(authorization);
  if (d.contentType !== null && rawBody !== undefined) headers['content-type'] = headerSafe(d.contentType);
  let idempotencyKey: string | undefined;
  if (d.idempotencyKey !== null) {
    const values = Array.isArray(d.idempotencyKey) ? d.idempotencyKey.map(headerSafe) : headerSafe(d.idempotencyKey);
    headers['idempotency-key'] = values;
    // What the server reads: node joins a repeated header with ", ".
    idempotencyKey = Array.isArray(values) ? values.join(', ') : values;
  }
  for (const [name, value] of Object.entries(d.headers)) headers[name] = Array.isArray(value) ? value.map(headerSafe) : headerSafe(value);
  if (d.sign !== null && d.sign !== 'missing') {
    const secret = d.sign === 'other-key' ? 'whsec_not_the_signing_secret' : (d.identity?.secret ?? '');
    const seconds = Math.floor(now() / 1000);
    const timestamp =
      d.sign === 'stale' ? String(seconds - 301)
      : d.sign === 'future' ? String(seconds + 301)
      : d.sign === 'millis' ? String(seconds * 1000)
      : d.sign === 'garbage-timestamp' ? '1.7e9'
      : d.sign === 'empty' ? ''
      : String(seconds);
    // The body as the server reads it back from UTF-8 (a lone surrogate arrives as U+FFFD).
    const received = Buffer.from(rawBody ?? '', 'utf8').toString('utf8');
    const signed = {
      method: d.method,
      pathAndQuery: d.sign === 'other-path' ? `${path}x` : path,
      idempotencyKey,
      rawBody: d.sign === 'other-body' ? `${received} ` : received,
    };
    const signature = d.sign === 'wrong' ? 'ab'.repeat(32) : d.sign === 'empty' ? '' : signRequest(secret, timestamp, signed);
    headers['x-service-timestamp'] = timestamp;
    headers['x-service-signature'] = d.sign === 'uppercase' ? signature.toUpperCase() : signature;
  }
  return { method: d.method, path, headers, ...(rawBody === undefined ? {} : { body: rawBody }) };
}

interface Mutator {
  name: string;
  weight: number;
  applies(d: Draft): boolean;
  apply(d: Draft, g: Gen): void;
}

const hasJsonBody = (d: Draft) => d.body.kind === 'json' && isObject(d.body.value);

const MUTATORS: Mutator[] = [
  {
    name: 'field',
    weight: 30,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const schema = d.op?.body ?? {};
      const names = [...new Set([...Object.keys(body.value), ...Object.keys(propertiesOf(schema, body.value))])];
      if (!names.length) return extraField(d, g);
      const name = g.rng.pick(names);
      const hostile = hostileValue(g, propertiesOf(schema, body.value)[name] ?? {}, name);
      body.value = withEntry(body.value, name, hostile.value);
      d.labels.push(`${name}: ${hostile.label}`);
    },
  },
  {
    name: 'missing',
    weight: 8,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const names = Object.keys(body.value);
      if (!names.length) return extraField(d, g);
      if (g.rng.chance(0.2)) {
        body.value = Object.create(null);
        d.labels.push('every field missing');
        return;
      }
      const name = g.rng.pick(names);
      const next = Object.assign(Object.create(null), body.value);
      delete next[name];
      body.value = next;
      d.labels.push(`${name} missing`);
    },
  },
  { name: 'extra', weight: 8, applies: hasJsonBody, apply: (d, g) => extraField(d, g) },
  {
    name: 'duplicate key',
    weight: 3,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const names = Object.keys(body.value);
      const name = names.length ? g.rng.pick(names) : 'amount';
      const hostile = hostileValue(g, {});
      const text = jsonText(body.value);
      const dup = `${JSON.stringify(name)}:${jsonText(hostile.value)}`;
      d.body = { kind: 'raw', text: text === '{}' ? `{${dup},${dup}}` : g.rng.chance(0.5) ? text.replace(/}$/, `,${dup}}`) : text.replace(/^{/, `{${dup},`) };
      d.labels.push(`${name} given twice, once as ${hostile.label}`);
    },
  },
  {
    name: 'body shape',
    weight: 8,
    applies: (d) => d.op?.body !== undefined,
    apply(d, g) {
      const valid = d.body.kind === 'json' ? d.body.value : {};
      const [label, text] = g.rng.pick<[string, () => string]>([
        ['null', () => 'null'],
        ['an empty array', () => '[]'],
        ['an array holding the body', () => `[${jsonText(valid)}]`],
        ['a string', () => JSON.stringify(jsonText(valid))],
        ['a number', () => '42'],
        ['true', () => 'true'],
        ['an empty object', () => '{}'],
        ['an empty body', () => ''],
        ['whitespace', () => ' \n\t '],
        ['a byte-order mark then the body', () => `\ufeff${jsonText(valid)}`],
        ['the body nested 5 000 arrays deep', () => `${'['.repeat(5_000)}${jsonText(valid)}${']'.repeat(5_000)}`],
        ['an object nested 3 000 deep', () => `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`],
        ['a 150 kB body', () => jsonText(withEntry(valid as Json, 'padding', 'x'.repeat(150_000)))],
        ['a 99 kB body', () => jsonText(withEntry(valid as Json, 'padding', 'x'.repeat(99_000)))],
        ['a body of 20 000 fields', () => `{${Array.from({ length: 20_000 }, (_, i) => `"f${i}":${i}`).join(',')}}`],
      ]);
      d.body = { kind: 'raw', text: text() };
      d.labels.push(`body: ${label}`);
    },
  },
  {
    name: 'truncated',
    weight: 5,
    applies: (d) => d.body.kind !== 'none',
    apply(d, g) {
      const text = d.body.kind === 'raw' ? d.body.text : jsonText((d.body as { value: unknown }).value);
      if (text.length < 2) return;
      const cut = 1 + g.rng.int(text.length - 1);
      d.body = { kind: 'raw', text: text.slice(0, cut) };
      d.labels.push(`body truncated to ${cut} of ${text.length} characters`);
    },
  },
  {
    name: 'not json',
    weight: 5,
    applies: (d) => d.op?.body !== undefined,
    apply(d, g) {
      const [label, text] = g.rng.pick<[string, () => string]>([
        ['form-encoded text', () => 'amount=1000&currency=GHS&__proto__[admin]=1'],
        ['XML', () => '<?xml version="1.0"?><charge><amount>1000</amount></charge>'],
        ['a JavaScript object literal', () => "{amount: 1000, currency: 'GHS'}"],
        ['JSON with a trailing comma', () => '{"amount": 1000,}'],
        ['JSON with single quotes', () => "{'amount': 1000}"],
        ['JSON with a comment', () => '{"amount": 1000 /* pesewas */}'],
        ['NaN', () => '{"amount": NaN}'],
        ['Infinity', () => '{"amount": Infinity}'],
        ['random unicode', () => sample(g.rng, fc.string({ unit: 'grapheme', maxLength: 200 }))],
        ['control characters', () => '\u0000\u0001\u0002{"a":1}'],
        ['a lone surrogate', () => '{"amount":"\ud800"}'],
        ['an escaped lone surrogate', () => '{"amount":"\\ud800"}'],
      ]);
      d.body = { kind: 'raw', text: text() };
      d.labels.push(`body: ${label}`);
    },
  },
  {
    name: 'content type',
    weight: 6,
    applies: (d) => d.body.kind !== 'none' || d.op?.body !== undefined,
    apply(d, g) {
      if (d.body.kind === 'none') d.body = { kind: 'json', value: {} };
      const choice = g.rng.pick<[string, string | null, ((d: Draft) => void)?]>([
        ['none', null],
        ['text/plain', 'text/plain'],
        ['form-urlencoded with a form body', 'application/x-www-form-urlencoded', (x) => (x.body = { kind: 'raw', text: formText(x.body) })],
        ['form-urlencoded with the JSON body', 'application/x-www-form-urlencoded'],
        ['multipart', 'multipart/form-data; boundary=XyZ', (x) => (x.body = { kind: 'raw', text: '--XyZ\r\nContent-Disposition: form-data; name="amount"\r\n\r\n1000\r\n--XyZ--\r\n' })],
        ['application/xml', 'application/xml'],
        ['charset utf-16', 'application/json; charset=utf-16'],
        ['charset latin1', 'application/json; charset=latin1'],
        ['an unknown charset', 'application/json; charset=klingon'],
        ['application/vnd.api+json', 'application/vnd.api+json'],
        ['a garbage content type', ';;;=/'],
        ['a non-ASCII content type', 'application/jsön'],
        ['a 4 kB content type', `application/json; x=${'a'.repeat(4_000)}`],
      ]);
      d.contentType = choice[1];
      choice[2]?.(d);
      d.labels.push(`content-type: ${choice[0]}`);
    },
  },
  {
    name: 'content encoding',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      const [label, value] = g.rng.pick<[string, string]>([
        ['gzip that is not gzip', 'gzip'],
        ['deflate that is not deflate', 'deflate'],
        ['br', 'br'],
        ['an unknown encoding', 'x-unknown'],
        ['identity', 'identity'],
        ['gzip twice', 'gzip, gzip'],
      ]);
      d.headers['content-encoding'] = value;
      if (d.body.kind === 'none') d.body = { kind: 'raw', text: 'this is not compressed' };
      d.labels.push(`content-encoding: ${label}`);
    },
  },
  {
    name: 'path id',
    weight: 12,
    applies: (d) => Object.keys(d.pathParams).length > 0,
    apply(d, g) {
      const name = g.rng.pick(Object.keys(d.pathParams));
      if (g.rng.chance(0.15)) {
        const [label, raw] = g.rng.pick<[string, string]>([
          ['a lone %', '%'],
          ['%zz', '%zz'],
          ['a truncated UTF-8 escape', '%E0%A4%A'],
          ['an overlong UTF-8 slash', '%C0%AF'],
          ['an encoded lone surrogate', '%ED%A0%80'],
        ]);
        d.pathParams[name] = { value: raw, raw: true };
        d.labels.push(`path ${name}: ${label}`);
        return;
      }
      const odd = oddId(g, d.pathParams[name]!.value);
      d.pathParams[name] = { value: odd.value };
      d.labels.push(`path ${name}: ${odd.label}`);
    },
  },
  {
    name: 'query',
    weight: 10,
    applies: (d) => d.method === 'GET',
    apply(d, g) {
      const params = d.op?.queryParams ?? [];
      const name = params.length && g.rng.chance(0.8) ? g.rng.pick(params).name : g.rng.pick(['limit', 'offset', '__proto__', 'constructor', 'type[]', 'page_size[]', 'cursor[a]', 'status[$ne]', 'x'.repeat(500)]);
      const [label, apply] = g.rng.pick<[string, () => void]>([
        ['garbage', () => setQuery(d, name, queryGarbage(g, name))],
        ['repeated', () => d.query.push([name, queryGarbage(g, name)], [name, queryGarbage(g, name)])],
        ['as an array (name[]=)', () => d.query.push([`${name}[]`, '1'])],
        ['nested (name[a]=)', () => d.query.push([`${name}[a]`, '1'])],
        ['empty', () => setQuery(d, name, '')],
        ['without a value', () => (d.rawQuery = percentEncode(name))],
        ['undecodable', () => (d.rawQuery = `${percentEncode(name)}=${g.rng.pick(['%', '%zz', '%E0%A4%A', '%ED%A0%80'])}`)],
        ['a lone &', () => (d.rawQuery = '&&=&')],
      ]);
      apply();
      d.labels.push(`query ${name.slice(0, 40)}: ${label}`);
    },
  },
  {
    name: 'idempotency key',
    weight: 8,
    applies: (d) => d.op?.idempotent === true,
    apply(d, g) {
      const reuse = g.state.idempotent.filter((k) => k.operationId === d.op!.operationId);
      const options: [string, () => void][] = [
        ['missing', () => (d.idempotencyKey = null)],
        ['empty', () => (d.idempotencyKey = '')],
        ['256 characters', () => (d.idempotencyKey = 'k'.repeat(256))],
        ['4 000 characters', () => (d.idempotencyKey = 'k'.repeat(4_000))],
        ['non-ASCII', () => (d.idempotencyKey = `clé-${g.rng.int(1e9)}`)],
        ['an emoji', () => (d.idempotencyKey = `🔑-${g.rng.int(1e9)}`)],
        ['with a space', () => (d.idempotencyKey = `my key ${g.rng.int(1e9)}`)],
        ['with a tab', () => (d.idempotencyKey = `my\tkey`)],
        ['sent twice', () => (d.idempotencyKey = [`a-${g.rng.int(1e9)}`, `b-${g.rng.int(1e9)}`])],
        ['__proto__', () => (d.idempotencyKey = '__proto__')],
      ];
      if (reuse.length) {
        const old = g.rng.pick(reuse);
        options.push(
          ['reused with this request', () => (d.idempotencyKey = old.key)],
          ['reused with its first request, byte for byte', () => ((d.idempotencyKey = old.key), (d.body = old.body === undefined ? { kind: 'none' } : { kind: 'raw', text: old.body }))],
        );
      }
      const elsewhere = g.state.idempotent.filter((k) => k.operationId !== d.op!.operationId);
      if (elsewhere.length) {
        const old = g.rng.pick(elsewhere);
        options.push([`first used on ${old.operationId}`, () => (d.idempotencyKey = old.key)]);
      }
      const [label, apply] = g.rng.pick(options);
      apply();
      d.labels.push(`Idempotency-Key ${label}`);
    },
  },
  {
    name: 'authorization',
    weight: 5,
    applies: () => true,
    apply(d, g) {
      const harvested = g.state.identities.slice(1);
      const options: [string, () => void][] = [
        ['missing', () => ((d.identity = null), (d.authorization = null))],
        ['Basic', () => (d.authorization = 'Basic dXNlcjpwYXNz')],
        ['Bearer with no key', () => (d.authorization = 'Bearer ')],
        ['lower-case bearer', () => (d.authorization = `bearer ${d.identity?.key ?? ''}`)],
        ['a key of the wrong shape', () => (d.authorization = 'Bearer sk_test_short')],
        ['an unknown key', () => (d.authorization = `Bearer sk_test_${'0'.repeat(28)}`)],
        ['an unknown live key', () => (d.authorization = `Bearer sk_live_${'0'.repeat(28)}`)],
        ['a 6 kB key', () => (d.authorization = `Bearer sk_test_${'a'.repeat(6_000)}`)],
        ['a non-ASCII key', () => (d.authorization = 'Bearer sk_test_ключ')],
        ['the key twice', () => (d.authorization = `Bearer ${d.identity?.key} ${d.identity?.key}`)],
      ];
      if (harvested.length) options.push(['a harvested key', () => (d.identity = g.rng.pick(harvested))], ['a harvested key', () => (d.identity = g.rng.pick(harvested))]);
      const [label, apply] = g.rng.pick(options);
      apply();
      d.labels.push(`Authorization: ${label === 'a harvested key' ? d.identity!.label : label}`);
    },
  },
  {
    name: 'method',
    weight: 3,
    applies: () => true,
    apply(d, g) {
      d.method = g.rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => m !== d.method));
      d.documented = false;
      d.labels.push(`method ${d.method}`);
    },
  },
  {
    name: 'unknown path',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      d.path = g.rng.pick(['/api/v1', '/api/v1/', '/api/v2/charges', '/api/v1/charges/', '/api/v1//charges', '/api/v1/CHARGES', '/api/v1/charges/a/b', '/api/v1/__proto__', '/api/v1/constructor', '/api/v1/%2e%2e/openapi.json', '/api/v1/wallet.json', '/%F0%9F%92%B8']);
      d.pathParams = {};
      d.documented = false;
      d.labels.push(`path ${d.path}`);
    },
  },
  {
    name: 'body on a body-less operation',
    weight: 3,
    applies: (d) => d.op?.body === undefined && d.body.kind === 'none',
    apply(d, g) {
      const [label, text] = g.rng.pick<[string, string]>([
        ['malformed JSON', '{"amount":'],
        ['a JSON object', '{"amount":1000}'],
        ['__proto__', '{"__proto__":{"admin":true}}'],
        ['a 150 kB body', JSON.stringify({ padding: 'x'.repeat(150_000) })],
      ]);
      d.body = { kind: 'raw', text };
      d.contentType = 'application/json';
      d.labels.push(`a body on ${d.method}: ${label}`);
    },
  },
  {
    name: 'header junk',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      const [label, name, value] = g.rng.pick<[string, string, string]>([
        ['a 4 kB X-Request-Id', 'x-request-id', 'r'.repeat(4_000)],
        ['X-HTTP-Method-Override', 'x-http-method-override', 'DELETE'],
        ['X-Forwarded-For garbage', 'x-forwarded-for', '::1, 999.999.999.999, ü'],
        ['Accept: text/html only', 'accept', 'text/html'],
        ['Accept-Charset: utf-16', 'accept-charset', 'utf-16'],
        ['Expect: 100-continue', 'expect', '100-continue'],
      ]);
      d.headers[name] = value;
      d.labels.push(label);
    },
  },
];

function extraField(d: Draft, g: Gen): void {
  const body = d.body as { kind: 'json'; value: Json };
  const [name, value, label] = g.rng.pick<[string, unknown, string]>([
    ['__proto__', obj({ admin: true, status: 'success' }), '__proto__ holding an object'],
    ['__proto__', null, '__proto__: null'],
    ['constructor', obj({ prototype: obj({ admin: true }) }), 'constructor.prototype'],
    ['prototype', obj({ admin: true }), 'prototype'],
    ['toString', 'boom', 'toString'],
    ['hasOwnProperty', 1, 'hasOwnProperty'],
    ['surprise', 1, 'an unknown field'],
    ['id', 'chg_0000000000aaaaaaaaaa', 'an id'],
    ['status', 'success', 'status: success'],
    ['livemode', true, 'livemode'],
    ['merchant_id', 'mch_other', 'merchant_id'],
    ['', 1, 'an empty name'],
    ['💸', 1, 'an emoji name'],
    ['x'.repeat(5_000), 1, 'a 5 000-character name'],
  ]);
  if (g.rng.chance(0.2) && Object.keys(body.value).length) {
    // One level down: inside an object or array a field holds.
    const parent = g.rng.pick(Object.keys(body.value));
    body.value = withEntry(body.value, parent, withEntry(obj({}), name, value));
    d.labels.push(`${parent} replaced by an object holding ${label}`);
    return;
  }
  body.value = withEntry(body.value, name, value);
  d.labels.push(`extra field ${label}`);
}

function setQuery(d: Draft, name: string, value: string): void {
  d.query = d.query.filter(([k]) => k !== name);
  d.query.push([name, value]);
}

function queryGarbage(g: Gen, name: string): string {
  if (name === 'cursor' && g.state.cursors.length && g.rng.chance(0.3)) {
    const cursor = g.rng.pick(g.state.cursors);
    return g.rng.pick([`${cursor}x`, cursor.slice(1), cursor.toUpperCase(), Buffer.from('v1:-1').toString('base64url'), Buffer.from('v1:99999999999999999999').toString('base64url'), Buffer.from('v2:1').toString('base64url')]);
  }
  return g.rng.pick([
    '1e3', '-1', '0', '1.5', '0x10', ' 5', '5 ', '٥', '1_000', 'NaN', 'Infinity', '9'.repeat(400), '101', '100', '1',
    'null', 'true', '[]', '{}', '__proto__', "' OR 1=1 --", '💸', 'a'.repeat(5_000), '\u0000', '%', 'v1:1', 'djE6MQ', 'djE6LTE',
    '2026-13-45T25:61:61Z', '2026-01-01', '1970-01-01T00:00:00Z', '+275760-09-13T00:00:00Z',
  ]);
}

function formText(body: Body): string {
  if (body.kind !== 'json' || !isObject(body.value)) return 'a=1';
  return Object.entries(body.value as Json).map(([k, v]) => `${percentEncode(k)}=${percentEncode(typeof v === 'string' ? v : jsonText(v))}`).join('&');
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

interface Gen {
  rng: Rng;
  state: FuzzState;
}

const OMIT = Symbol('omit');

/**
 * Values the document cannot give (a Ghana mobile number is a refinement, not a pattern) or
 * should not (a webhook URL the sandbox would really call), by property name. The rest comes
 * from the schemas alone.
 */
const HINTS: Record<string, (g: Gen, siblings: Json, schema: Json) => unknown> = {
  msisdn: (g) => g.rng.weighted([['0551234987', 12], ['233551234987', 2], ['+233551234987', 2], ['0241234567', 2], ['0201234567', 2], ['0271234567', 1], ['0551234988', 2], ['0551234989', 0.3]]),
  // A quote's chain must be one its asset trades on; a charge's mobile network is an override.
  network: (g, siblings) =>
    siblings.asset === 'USDT' ? g.rng.pick(['TRC20', 'ERC20'])
    : siblings.asset === 'USDC' ? g.rng.pick(['ERC20', 'SOL'])
    : g.rng.chance(0.8) ? OMIT
    : g.rng.pick(['MTN', 'TELECEL', 'AT']),
  account_number: (g) => g.rng.weighted([['1000000001', 6], ['1000000002', 2], ['1000000003', 2], [String(1_000_000_000 + g.rng.int(1e9)), 1]]),
  bank_code: () => '040100',
  bank_account_name: (g) => g.rng.pick(['Ama Owusu', 'Kwame Mensah', 'Efua Asante-Boateng']),
  amount: (g) => 100 + g.rng.int(20_000),
  fiat_amount: (g) => 10_000 + g.rng.int(500_000),
  asset_amount: (g) => 1_000_000 + g.rng.int(50_000_000),
  // Port 9 (discard) refuses at once: deliveries fail fast instead of waiting on a real host.
  url: (g) => `http://127.0.0.1:9/hooks/${g.rng.int(1e6)}`,
  delivery_address: (g, siblings) => {
    const quote = g.state.pools.get('qt')?.find((q) => q.id === siblings.quote_reference)?.object;
    if (quote?.side === 'sell') return OMIT;
    const network = quote?.network ?? g.rng.pick(['TRC20', 'ERC20', 'SOL']);
    return network === 'TRC20' ? 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' : network === 'ERC20' ? `0x${'a1'.repeat(20)}` : '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
  },
  price: (g) => g.rng.pick(['1', '1.0003', '0.9998', '1.00010000']),
  rate: (g) => g.rng.pick(['15.5', '15.25', '16']),
  as_of: () => OMIT,
  // Small steps: settle charges and transfers without expiring every quote on the way.
  seconds: (g) => g.rng.weighted([[1, 6], [5, 4], [30, 2], [120, 0.5], [3_600, 0.1]]),
  stage: (g) => g.rng.weighted([['sandbox', 10], ['live', 1], ['requested', 1], ['none', 1]]),
  down: (g) => g.rng.chance(0.15),
  environment: (g) => (g.rng.chance(0.8) ? 'test' : 'live'),
  // Few live endpoints, each for one event type: every event fans out to each matching
  // endpoint and retries, and a long run would spend its time failing to deliver to hundreds.
  enabled: (g) => g.rng.chance(0.05),
  event_types: (g, _siblings, schema) => (g.rng.chance(0.1) || !Array.isArray(schema.items?.enum) ? OMIT : [g.rng.pick(schema.items.enum)]),
  page_size: (g) => String(1 + g.rng.int(100)),
};

function validValue(g: Gen, schema: Json, name: string, siblings: Json | undefined): unknown {
  const hint = name && Object.hasOwn(HINTS, name) ? HINTS[name] : undefined;
  if (hint) return hint(g, siblings ?? {}, schema);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return g.rng.pick(schema.enum);
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches)) return validValue(g, g.rng.pick(branches), name, siblings);
  const type = Array.isArray(schema.type) ? g.rng.pick(schema.type.filter((t: string) => t !== 'null')) : schema.type;
  switch (type) {
    case 'object': {
      const out = obj({});
      const required = new Set<string>(schema.required ?? []);
      for (const [prop, propSchema] of Object.entries<Json>(schema.properties ?? {})) {
        // A hint decides for itself whether an optional field is sent (OMIT).
        if (!required.has(prop) && !Object.hasOwn(HINTS, prop) && g.rng.chance(0.5)) continue;
        const v = validValue(g, propSchema, prop, out);
        if (v !== OMIT) out[prop] = v;
      }
      // Quotes: exactly one of fiat_amount and asset_amount.
      if ('fiat_amount' in out && 'asset_amount' in out) delete out[g.rng.chance(0.5) ? 'fiat_amount' : 'asset_amount'];
      return out;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const n = min + g.rng.int(Math.max(1, Math.min(schema.maxItems ?? 3, 3) - min + 1));
      return Array.from({ length: n }, () => validValue(g, schema.items ?? {}, '', undefined));
    }
    case 'integer':
    case 'number': {
      const lo = schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? 0);
      const hi = Math.min(schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : (schema.maximum ?? 1e6), lo + 1e6);
      return lo + g.rng.int(Math.max(1, hi - lo + 1));
    }
    case 'boolean':
      return g.rng.chance(0.5);
    case 'string':
      return validString(g, schema);
    default:
      return 'x';
  }
}

function validString(g: Gen, schema: Json): string {
  if (schema.format === 'date-time') return new Date(Date.UTC(2025, 0, 1) + g.rng.int(3e10)).toISOString();
  if (schema.format === 'uri') return `http://127.0.0.1:9/${g.rng.int(1e6)}`;
  if (typeof schema.pattern === 'string') {
    const prefix = /^\^([a-z]+)_\[0-9a-z\]\{20\}\$$/.exec(schema.pattern)?.[1];
    const pool = prefix ? g.state.pools.get(prefix) : undefined;
    if (pool?.length && g.rng.chance(0.85)) return pickRecent(g.rng, pool).id;
    const fromPattern = stringMatching(g.rng, schema.pattern);
    if (fromPattern !== null) return fromPattern;
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return String(g.rng.pick(schema.examples));
  const min = schema.minLength ?? 1;
  const max = Math.min(schema.maxLength ?? 24, min + 24);
  return randomText(g.rng, min + g.rng.int(max - min + 1), 'abcdefghijklmnopqrstuvwxyz0123456789');
}

function validPathValue(g: Gen, p: Param): string {
  if (Array.isArray(p.schema.enum) && p.schema.enum.length) return String(g.rng.pick(p.schema.enum));
  const example = Array.isArray(p.schema.examples) ? String(p.schema.examples[0] ?? 'x') : 'x';
  const prefix = ID_PATTERN.exec(example)?.[1];
  const pool = prefix ? g.state.pools.get(prefix) : undefined;
  if (pool?.length && g.rng.chance(0.85)) return pickRecent(g.rng, pool).id;
  return example;
}

function validQuery(g: Gen, op: Operation): [string, string][] {
  const query: [string, string][] = [];
  for (const p of op.queryParams) {
    if (!p.required && g.rng.chance(0.7)) continue;
    if (p.name === 'cursor') {
      if (g.state.cursors.length) query.push([p.name, g.rng.pick(g.state.cursors)]);
      continue;
    }
    const value = validValue(g, p.schema, p.name, undefined);
    if (value !== OMIT) query.push([p.name, String(value)]);
  }
  return query;
}

const HOSTILE_STRINGS: [string, string][] = [
  ['an empty string', ''],
  ['a space', ' '],
  ['"null"', 'null'],
  ['"undefined"', 'undefined'],
  ['"NaN"', 'NaN'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['prototype', 'prototype'],
  ['toString', 'toString'],
  ['SQL', "' OR '1'='1' --"],
  ['HTML', '<script>alert(1)</script>'],
  ['a template', '${7*7}{{7*7}}'],
  ['a path', '../../../etc/passwd'],
  ['a NUL byte', 'a\u0000b'],
  ['CR LF', 'a\r\nX-Injected: 1'],
  ['a right-to-left override', 'abc\u202edef'],
  ['zero-width characters', '\u200b\u200c\u200d\ufeff'],
  ['Twi', 'Ɛyɛ adeɛ a ɛyɛ fɛ'],
  ['emoji', '🇬🇭💸🔥👩🏾‍💻'],
  ['a lone surrogate', '\ud800'],
  ['Arabic-Indic digits', '٠٥٥١٢٣٤٩٨٧'],
  ['fullwidth digits', '０５５１２３４９８７'],
  ['a number as text', '1000'],
  ['a decimal as text', '10.50'],
  ['scientific notation as text', '1e3'],
];

/** A value that breaks `schema`: wrong type, out of range, odd text, or a structure for a scalar. */
function hostileValue(g: Gen, schema: Json, name = ''): { value: unknown; label: string } {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const numeric = type === 'integer' || type === 'number';
  const pools: (() => { value: unknown; label: string })[] = [
    () => {
      const [label, value] = g.rng.pick(HOSTILE_STRINGS);
      return { value, label };
    },
    () => g.rng.pick([
      { value: null, label: 'null' },
      { value: true, label: 'true' },
      { value: false, label: 'false' },
      { value: [], label: 'an empty array' },
      { value: obj({}), label: 'an empty object' },
      { value: [validValue(g, schema, name, undefined)], label: 'a valid value in an array' },
      { value: obj({ value: validValue(g, schema, name, undefined) }), label: 'a valid value in an object' },
      { value: obj({ __proto__: obj({ admin: true }) }), label: 'an object holding __proto__' },
      { value: obj({ constructor: obj({ prototype: obj({ admin: true }) }) }), label: 'an object holding constructor.prototype' },
    ]),
    () => g.rng.pick([
      { value: 0, label: '0' },
      { value: -1, label: '-1' },
      { value: -1_000_000, label: '-1 000 000' },
      { value: 1.5, label: '1.5' },
      { value: 0.001, label: '0.001' },
      { value: 1e21, label: '1e21' },
      { value: -1e21, label: '-1e21' },
      { value: 2 ** 31, label: '2^31' },
      { value: Number.MAX_SAFE_INTEGER + 2, label: 'MAX_SAFE_INTEGER + 2' },
      { value: Number.MAX_VALUE, label: 'Number.MAX_VALUE' },
      { value: Number.MIN_VALUE, label: 'Number.MIN_VALUE' },
      { value: new RawJson('-0'), label: '-0' },
      { value: new RawJson('1e400'), label: '1e400' },
      { value: new RawJson('-1e400'), label: '-1e400' },
      { value: new RawJson('9007199254740993'), label: '9007199254740993 written out' },
      { value: new RawJson('1.0'), label: '1.0' },
      { value: new RawJson('100e-2'), label: '100e-2' },
      { value: new RawJson(`1${'0'.repeat(400)}`), label: 'a 401-digit integer' },
      { value: new RawJson(`0.${'0'.repeat(400)}1`), label: 'a 400-decimal fraction' },
    ]),
    () => ({ value: sample(g.rng, fc.double()), label: 'an arbitrary double' }),
    () => ({ value: sample(g.rng, fc.integer({ min: -(2 ** 53), max: 2 ** 53 })), label: 'an arbitrary integer' }),
    () => ({ value: sample(g.rng, fc.string({ unit: 'grapheme', maxLength: 64 })), label: 'arbitrary unicode' }),
    () => ({ value: sample(g.rng, fc.string({ unit: 'binary', maxLength: 64 })), label: 'arbitrary code points' }),
    () => ({ value: sample(g.rng, fc.jsonValue({ maxDepth: 3 })), label: 'arbitrary JSON' }),
    () => ({ value: 'x'.repeat(g.rng.pick([101, 256, 1_000, 10_000, 90_000])), label: 'a very long string' }),
    () => ({ value: Array.from({ length: g.rng.pick([100, 10_000]) }, () => validValue(g, schema.items ?? {}, '', undefined)), label: 'a long array' }),
    () => ({ value: `${'['.repeat(2_000)}${']'.repeat(2_000)}`, label: 'brackets as text' }),
    () => ({ value: new RawJson(`${'['.repeat(2_000)}${']'.repeat(2_000)}`), label: 'an array nested 2 000 deep' }),
  ];
  if (numeric) {
    const lo = schema.exclusiveMinimum ?? schema.minimum;
    const hi = schema.exclusiveMaximum ?? schema.maximum;
    pools.push(
      () => ({ value: typeof lo === 'number' ? lo - (schema.exclusiveMinimum !== undefined ? 0 : 1) : -1, label: 'just below the minimum' }),
      () => ({ value: typeof hi === 'number' ? hi + (schema.exclusiveMaximum !== undefined ? 0 : 1) : 1e16, label: 'just above the maximum' }),
      () => ({ value: String(validValue(g, schema, name, undefined)), label: 'a valid number as a string' }),
      () => ({ value: Number(validValue(g, schema, name, undefined)) + 0.5, label: 'a valid number plus 0.5' }),
    );
  }
  if (type === 'string' && typeof schema.maxLength === 'number') pools.push(() => ({ value: 'x'.repeat(schema.maxLength + 1), label: 'one character too long' }));
  if (Array.isArray(schema.enum)) {
    pools.push(
      () => ({ value: String(g.rng.pick(schema.enum)).toUpperCase(), label: 'an upper-case enum value' }),
      () => ({ value: ` ${g.rng.pick(schema.enum)}`, label: 'an enum value with a leading space' }),
    );
  }
  return g.rng.pick(pools)();
}

function oddId(g: Gen, valid: string): { value: string; label: string } {
  const pick = g.rng.pick<[string, () => string]>([
    ['a wrong prefix', () => valid.replace(/^[a-z]+_/, 'qt_')],
    ['upper case', () => valid.toUpperCase()],
    ['one character more', () => `${valid}a`],
    ['one character less', () => valid.slice(0, -1)],
    ['no prefix', () => valid.replace(/^[a-z]+_/, '')],
    ['an emoji', () => `${valid}💸`],
    ['Twi', () => 'Ɛyɛ-adeɛ'],
    ['a NUL byte', () => `${valid}\u0000`],
    ['a slash', () => `${valid}/x`],
    ['a dot', () => '.'],
    ['dot dot', () => '..'],
    ['a space', () => ' '],
    ['SQL', () => `${valid}' OR '1'='1`],
    ['__proto__', () => '__proto__'],
    ['constructor', () => 'constructor'],
    ['toString', () => 'toString'],
    ['4 000 characters', () => `${valid}${'a'.repeat(4_000)}`],
    ['a number', () => '1e3'],
    ['a lone surrogate', () => '\ud800'],
    ['arbitrary unicode', () => sample(g.rng, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }))],
  ]);
  let value = pick[1]();
  // '' has no route; GET /api/v1/events/stream is a server-sent event stream, served before
  // /events/{id}, that never ends: it would hang the fuzzer, not test the route.
  if (value === '' || value === 'stream') value = 'x';
  return { value, label: pick[0] };
}

// ---------------------------------------------------------------------------------------------
// Wire
// ---------------------------------------------------------------------------------------------

function sendRequest(transport: { request: typeof httpRequest; agent: HttpAgent }, base: URL, w: WireRequest, timeoutMs: number): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const body = w.body === undefined ? undefined : Buffer.from(w.body, 'utf8');
    const headers: Record<string, string | string[] | number> = { ...w.headers };
    if (body) headers['content-length'] = body.length;
    let answered = false;
    const req = transport.request({ host: base.hostname, port: base.port, method: w.method, path: w.path, headers, agent: transport.agent }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    // The server may answer (a body too large, say) before it has read all of ours; what it
    // answered is the result, not the broken pipe that follows.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    // A Buffer body keeps node from writing the headers in the body's encoding.
    req.end(body);
  });
}

/** Header values are bytes: non-ASCII text goes as UTF-8, which the server reads back as latin1. */
function headerSafe(value: string): string {
  const latin1 = Buffer.from(value, 'utf8').toString('latin1');
  // CR, LF, NUL and other controls cannot be sent at all: node refuses them client-side.
  return latin1.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

function percentEncode(text: string): string {
  // Buffer turns a lone surrogate into U+FFFD, where encodeURIComponent would throw.
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Json)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${jsonText((value as Json)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/** A prototype-free object, so `__proto__` is an own field like any other. */
function obj(fields: Json): Json {
  const out = Object.create(null) as Json;
  for (const key of Reflect.ownKeys(fields)) if (typeof key === 'string') out[key] = fields[key];
  // `{ __proto__: x }` in a literal sets the prototype instead of a field.
  const proto = Object.getPrototypeOf(fields);
  if (proto !== Object.prototype && proto !== null) out.__proto__ = proto;
  return out;
}

function withEntry(target: Json, name: string, value: unknown): Json {
  const out = Object.assign(Object.create(null) as Json, isObject(target) ? target : {});
  out[name] = value;
  return out;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);
}

/** The properties a body schema allows, from the oneOf branch that fits the body best. */
function propertiesOf(schema: Json, body: Json): Record<string, Json> {
  const branches: Json[] = schema.oneOf ?? schema.anyOf ?? [schema];
  const fits = branches.find((b) => Object.entries<Json>(b.properties ?? {}).every(([k, s]) => !('const' in s) || !(k in body) || body[k] === s.const));
  return (fits ?? branches[0] ?? {}).properties ?? {};
}

/** Recent objects are the live ones (an unexpired quote, a pending trade); older ones test the rest. */
function pickRecent<T>(rng: Rng, pool: readonly T[]): T {
  return rng.chance(0.6) ? pool[pool.length - 1 - rng.int(Math.min(3, pool.length))]! : rng.pick(pool);
}

function randomText(rng: Rng, length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[rng.int(alphabet.length)];
  return out;
}

function sample<T>(rng: Rng, arbitrary: fc.Arbitrary<T>): T {
  return fc.sample(arbitrary, { seed: rng.int(2 ** 31), numRuns: 1 })[0]!;
}

/** The seed of request `index`: distinct seeds give unrelated sequences, not shifted ones. */
function mix(seed: number, index: number): number {
  return fmix32((fmix32(seed >>> 0) + Math.imul(index + 1, 0x9e3779b9)) >>> 0);
}

/** MurmurHash3's finaliser. */
function fmix32(x: number): number {
  let h = x;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** mulberry32: small, fast and seeded; every choice of a request comes from one. */
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let r = this.next() * items.reduce((sum, [, w]) => sum + w, 0);
    for (const [item, w] of items) if ((r -= w) < 0) return item;
    return items[items.length - 1]![0];
  }
}

/**
 * A string matching a simple regular expression (literals, classes, \d \w, groups,
 * alternation, ? * + {m,n}); null for anything fancier, such as lookarounds.
 */
function stringMatching(rng: Rng, pattern: string): string | null {
  let i = 0;
  const DIGITS = '0123456789';
  const WORD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
  type Node = (out: string[]) => void;
  const fail = (): never => {
    throw new Error('unsupported');
  };
  const escape = (): string => {
    const c = pattern[i++] ?? fail();
    return c === 'd' ? DIGITS : c === 'w' ? WORD : c === 's' ? ' ' : /[DWSbB]/.test(c) ? fail() : c;
  };
  const charClass = (): string => {
    if (pattern[i] === '^') fail();
    let set = '';
    while (pattern[i] !== ']') {
      if (i >= pattern.length) fail();
      let c = pattern[i++]!;
      if (c === '\\') {
        const e = escape();
        if (e.length > 1) {
          set += e;
          continue;
        }
        c = e;
      }
      if (pattern[i] === '-' && pattern[i + 1] !== ']') {
        i++;
        let end = pattern[i++]!;
        if (end === '\\') end = escape();
        for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code++) set += String.fromCharCode(code);
      } else set += c;
    }
    i++;
    return set;
  };
  const alternation = (): Node => {
    const options: Node[] = [sequence()];
    while (pattern[i] === '|') {
      i++;
      options.push(sequence());
    }
    return (out) => rng.pick(options)(out);
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      const c = pattern[i++]!;
      let atom: Node;
      if (c === '^' || c === '$') continue;
      if (c === '(') {
        if (pattern[i] === '?') {
          if (pattern[i + 1] !== ':') fail();
          i += 2;
        }
        atom = alternation();
        if (pattern[i++] !== ')') fail();
      } else if (c === '[') {
        const set = charClass();
        atom = (out) => out.push(set[rng.int(set.length)]!);
      } else if (c === '\\') {
        const set = escape();
        atom = (out) => out.push(set[rng.int(set.length)]!);
      } else if (c === '.') {
        atom = (out) => out.push(WORD[rng.int(WORD.length)]!);
      } else {
        atom = (out) => out.push(c);
      }
      let min = 1;
      let max = 1;
      const q = pattern[i];
      if (q === '?' || q === '*' || q === '+') {
        i++;
        [min, max] = q === '?' ? [0, 1] : q === '*' ? [0, 4] : [1, 4];
      } else if (q === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i)) ?? fail();
        i += m[0].length;
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] ? Number(m[3]) : min + 4;
      }
      const lo = min;
      const hi = max;
      items.push((out) => {
        const n = lo + rng.int(hi - lo + 1);
        for (let k = 0; k < n; k++) atom(out);
      });
    }
    return (out) => items.forEach((item) => item(out));
  };
  try {
    const root = alternation();
    if (i < pattern.length) return null;
    const out: string[] = [];
    root(out);
    return out.join('');
  } catch {
    return null;
  }
}
