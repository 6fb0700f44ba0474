// railyard replay: runs a scenario file's script in an isolated, in-process sandbox on a virtual
// clock and checks its expectations.
//
// Each run gets its own sandbox: an in-memory store, a virtual clock, ids seeded by the replay
// seed (--seed, else `replay.seed`, else 1), and only THIS file's rules and wallets: a script
// never sees the rules of other scenario files (nor scenarios/sandbox.yaml, unless it is the
// file being replayed), so a script and the rules it relies on travel together.
//
// Determinism: the same file and seed give a byte-identical timeline and report, ids included.
// Times are business time relative to the virtual start; nothing real-time (latency, wall-clock
// timestamps, ports, secrets) goes into the timeline or the result. Wall-clock time is used only
// where a party checks it against its own clock: request signatures (X-Service-Timestamp).
//
// Steps: a request is sent with the sandbox key, signed when its route is signed, with a fresh
// Idempotency-Key (`replay-step-<n>`) when its route is idempotent unless the step gives one;
// then the jobs due now run (webhooks fan out). With `replay.webhook_receiver`, or any
// expect_webhook step, a local receiver is registered as a webhook endpoint (for every event
// type) before the first step; expect_webhook counts the events it accepted (answered 2xx) with a
// valid signature, each event once however often it was retried. expect_ledger reads the test
// environment; `balanced: false` skips the balance check. expect_provider_calls counts requests
// and status polls railyard made to each provider named (skipping a provider marked down is no
// call). The first failing step ends the script.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAbsolute, relative } from 'node:path';
import { createApp, type Railyard } from '../app.ts';
import { signatureHeaders } from '../auth/request-signature.ts';
import { configSchema, type Config } from '../config/config.ts';
import { VIRTUAL_EPOCH, type Clock } from '../kernel/clock.ts';
import { parseYamlSource, YamlSourceError } from '../kernel/yaml-source.ts';
import type { RouteSpec } from '../http/route.ts';
import { parseScenario } from '../scenarios/scenario-loader.ts';
import type { ScenarioFile } from '../scenarios/scenario-schema.ts';
import type { UpstreamTap } from '../rails/upstream-tap.ts';
import { signWebhook } from '../webhooks/webhook-signer.ts';
import { describeMismatch, interpolate, partialMatch } from './partial-match.ts';
import { formatOffset } from './replay-report.ts';
import type { ScriptStep } from './script-schema.ts';
import { RecordingTimeline, type TimelineEntry } from '../kernel/timeline.ts';

export interface RunOptions {
  /** Overrides the file's `replay.seed` (default 1). */
  seed?: number;
  /** Real-time limit for the whole script (default 60 s); a run over it fails. */
  timeoutMs?: number;
}

/** A timeline entry, `at` relative to the virtual start (`+00:05.000`), `ms` the same in ms. */
export interface ReplayEntry extends TimelineEntry {
  ms: number;
}

export type StepKind = 'request' | 'advance' | 'expect_webhook' | 'expect_ledger' | 'expect_provider_calls';

export interface StepResult {
  /** 1-based, as in the labels: `step 3: …` is script[2] in the file. */
  index: number;
  label: string;
  kind: StepKind;
  /** True when the step checks something (a request with `expect`, an expect_* step). */
  checks: boolean;
  passed: boolean;
  /** Why it failed: what was expected against what was found, at the mismatching path. */
  error?: string;
  /** Business time when the step finished, relative to the start. */
  at: string;
  /** How many timeline entries existed when the step finished (where the report prints it). */
  entries: number;
}

export interface ReplayFailure {
  /** The step's 1-based index; null for a problem outside the steps (setup, an invalid file). */
  index: number | null;
  label: string;
  message: string;
}

export type ReplayStatus = 'passed' | 'failed' | 'skipped' | 'invalid';

export interface ReplayResult {
  file: string;
  name: string | null;
  /** passed / failed: the script ran; skipped: the file has no script; invalid: it does not load. */
  status: ReplayStatus;
  /** Nothing failed: status passed or skipped. */
  passed: boolean;
  seed: number | null;
  steps: StepResult[];
  timeline: ReplayEntry[];
  failures: ReplayFailure[];
  /** Steps after the first failure, which were not run. */
  notRun: number;
}

/** A webhook the local receiver got, verified with the endpoint's secret. */
export interface ReceivedWebhook {
  id: string;
  type: string;
  data: unknown;
  verified: boolean;
  /** What the receiver answered. */
  answered: number;
}

/** A loaded scenario file; `text`, when given, locates configuration problems without reading `path`. */
export interface ScenarioSource {
  path: string;
  scenario: ScenarioFile;
  text?: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

// ---- configuration -----------------------------------------------------------------------------

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key, recursively; anything else (lists included) replaces. */
export function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * The replay's configuration: short real-time rail timeouts, then the file's `replay.config`
 * overrides (deep-merged); the store (in memory), the clock (virtual), request logging (off) and
 * the seed are always the replay's own. Problems name the file, and its line and column when the
 * file can be read.
 */
export function replayConfig(file: ScenarioSource, seed: number): Config {
  const base = {
    log_requests: false,
    rails: { timeout_ms: 500, max_hold_ms: 2_000 },
  };
  const merged = deepMerge(deepMerge(base, file.scenario.replay?.config ?? {}), { db: ':memory:', clock: 'virtual', seed, log_requests: false });
  const parsed = configSchema.safeParse(merged);
  if (parsed.success) return Object.freeze(parsed.data) as Config;
  let locate: ((path: PropertyKey[]) => { line: number; col: number }) | undefined;
  try {
    const source = parseYamlSource(file.text ?? readFileSync(file.path, 'utf8'), file.path);
    locate = (path) => source.locate(path);
  } catch {
    locate = undefined;
  }
  throw new YamlSourceError(
    parsed.error.issues.map((issue) => {
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
      const where = ['replay', 'config', ...path.map(String)].join('.');
      const what = issue.code === 'unrecognized_keys' ? `unknown configuration field ${JSON.stringify(issue.keys[0])}` : issue.message;
      const pos = locate?.(['replay', 'config', ...path]);
      return `${file.path}${pos ? `:${pos.line}:${pos.col}` : ''}: ${where}: ${what}`;
    }),
  );
}

// ---- the local webhook receiver --------------------------------------------------------------

interface Receiver {
  url: string;
  secret: string | null;
  received: ReceivedWebhook[];
  /** The first body received for each event id. */
  payloads: Map<string, unknown>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

/** Records every webhook, checks its Standard Webhooks signature, answers `status` to the first `failFirst`. */
async function startReceiver(failFirst: number, failStatus: number): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: Receiver = { url: '', secret: null, received, payloads: new Map(), close: async () => {} };
  const server = createServer(async (req, res) => {
    const raw = await readBody(req).catch(() => '');
    let payload: { id?: unknown; type?: unknown; data?: unknown } = {};
    try {
      payload = JSON.parse(raw) as typeof payload;
    } catch {
      payload = {};
    }
    const id = String(req.headers['webhook-id'] ?? payload.id ?? '');
    const timestamp = Number(req.headers['webhook-timestamp']);
    const signatures = String(req.headers['webhook-signature'] ?? '').split(' ');
    const verified = receiver.secret !== null && Number.isFinite(timestamp) && signatures.includes(signWebhook(receiver.secret, id, timestamp, raw));
    const answered = received.length < failFirst ? failStatus : 200;
    received.push({ id, type: String(payload.type ?? ''), data: payload.data, verified, answered });
    if (!receiver.payloads.has(id)) receiver.payloads.set(id, payload);
    res.writeHead(answered, { 'content-type': 'application/json' }).end(JSON.stringify({ received: answered < 300 }));
  });
  await listen(server);
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () => closeServer(server);
  return receiver;
}

export function listen(server: Server): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}

// ---- requests ----------------------------------------------------------------------------------

/** The route a method and path (query ignored) reach, for its signed and idempotent flags. */
export function findRoute(routes: readonly RouteSpec[], method: string, pathAndQuery: string): RouteSpec | undefined {
  const path = pathAndQuery.split('?')[0]!;
  return routes.find((r) => {
    if (r.method !== method.toLowerCase()) return false;
    const pattern = r.path
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return new RegExp(`^${pattern}/?$`).test(path);
  });
}


interface Envelope {
  data?: unknown;
  error?: { code?: unknown; details?: { id?: unknown; reference?: unknown } };
}

/** `chg_… pending_provider`, `provider_unavailable chg_…`, `3 items`: what a response says, briefly. */
export function summariseResponse(body: unknown): string {
  if (!isPlainObject(body)) return '';
  const envelope = body as Envelope;
  if (isPlainObject(envelope.error)) {
    const details = envelope.error.details;
    const ref = isPlainObject(details) ? (details.id ?? details.reference) : undefined;
    return [envelope.error.code, typeof ref === 'string' ? ref : undefined].filter((p) => typeof p === 'string').join(' ');
  }
  const data = envelope.data;
  if (Array.isArray(data)) return `${data.length} item${data.length === 1 ? '' : 's'}`;
  if (isPlainObject(data)) {
    const ref = data.id ?? data.reference;
    return [ref, data.status].filter((p) => typeof p === 'string').join(' ');
  }
  return '';
}

// ---- labels ------------------------------------------------------------------------------------

function kindOf(step: ScriptStep): StepKind {
  if ('request' in step) return 'request';
  if ('advance' in step) return 'advance';
  if ('expect_webhook' in step) return 'expect_webhook';
  if ('expect_ledger' in step) return 'expect_ledger';
  return 'expect_provider_calls';
}

function seconds(s: number): string {
  return `${Number.isInteger(s) ? s : Number(s.toFixed(3))}s`;
}

/** The step's name, or a generated one: `step 4: expect_webhook charge.success`. */
export function stepLabel(step: ScriptStep, index: number): string {
  if (step.name) return `step ${index}: ${step.name}`;
  if ('request' in step) {
    const expect = step.expect ? (step.expect.status !== undefined ? ` expect ${step.expect.status}` : ' expect') : '';
    return `step ${index}: ${step.request.method} ${step.request.path}${expect}`;
  }
  if ('advance' in step) return `step ${index}: advance ${seconds(step.advance)}`;
  if ('expect_webhook' in step) {
    return `step ${index}: expect_webhook ${step.expect_webhook.type}${step.expect_webhook.count !== undefined ? ` count ${step.expect_webhook.count}` : ''}`;
  }
  if ('expect_ledger' in step) return `step ${index}: expect_ledger`;
  return `step ${index}: expect_provider_calls ${Object.entries(step.expect_provider_calls)
    .map(([p, n]) => `${p}=${n}`)
    .join(' ')}`;
}

// ---- the run -----------------------------------------------------------------------------------

class StepFailure extends Error {}

interface RunContext {
  ry: Railyard;
  baseUrl: string;
  timeline: RecordingTimeline;
  receiver: Receiver | null;
  vars: Record<string, unknown>;
  /** The last scripted request and its answer. */
  exchange: RecordedExchange | null;
}

/** A scripted request as sent and answered: what contract generation turns into an interaction. */
export interface RecordedExchange {
  method: string;
  /** As sent, and as written in the script (`/api/v1/charges/${charge.body.data.id}`). */
  path: string;
  pathTemplate: string;
  body: unknown;
  bodyTemplate: unknown;
  idempotent: boolean;
  status: number;
  contentType: string | null;
  response: unknown;
}

interface SentRequest {
  method: string;
  path: string;
  body?: unknown;
  idempotencyKey?: string;
}

async function send(ctx: RunContext, req: SentRequest): Promise<{ status: number; body: unknown; replayed: boolean; contentType: string | null }> {
  const { ry } = ctx;
  const url = new URL(req.path, ctx.baseUrl);
  const pathAndQuery = url.pathname + url.search;
  const raw = req.body === undefined ? undefined : JSON.stringify(req.body);
  const route = findRoute(ry.routes, req.method, pathAndQuery);
  const headers: Record<string, string> = { authorization: `Bearer ${ry.sandbox.key}` };
  if (raw !== undefined) headers['content-type'] = 'application/json';
  if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey;
  if (route?.signed) {
    Object.assign(headers, signatureHeaders(ry.sandbox.signingSecret, ry.wallClock.now(), { method: req.method, pathAndQuery, idempotencyKey: req.idempotencyKey, rawBody: raw ?? '' }));
  }
  const res = await fetch(url, { method: req.method, headers, ...(raw !== undefined ? { body: raw } : {}) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, replayed: res.headers.get('idempotent-replayed') === 'true', contentType: res.headers.get('content-type') };
}

async function runRequest(ctx: RunContext, step: Extract<ScriptStep, { request: unknown }>, index: number): Promise<void> {
  const r = step.request;
  const path = String(interpolate(r.path, ctx.vars));
  const body = r.body === undefined ? undefined : interpolate(r.body, ctx.vars);
  const route = findRoute(ctx.ry.routes, r.method, path);
  const explicitKey = r.idempotency_key === undefined ? undefined : String(interpolate(r.idempotency_key, ctx.vars));
  const idempotencyKey = explicitKey ?? (route?.idempotent ? `replay-step-${index}` : undefined);
  ctx.timeline.record('merchant', 'railyard', `${r.method} ${path}`);
  const res = await send(ctx, { method: r.method, path, body, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
  const summary = summariseResponse(res.body);
  ctx.timeline.record('railyard', 'merchant', `${res.status}${summary ? ` ${summary}` : ''}${res.replayed ? ' (replayed)' : ''}`);
  ctx.exchange = {
    method: r.method,
    path,
    pathTemplate: r.path,
    body,
    bodyTemplate: r.body,
    idempotent: route?.idempotent === true,
    status: res.status,
    contentType: res.contentType,
    response: res.body,
  };
  if (r.as) ctx.vars[r.as] = { status: res.status, body: res.body };
  // Let the jobs due now run: events fan out into webhook deliveries, in order.
  await ctx.ry.scheduler.runDue();
  if (!step.expect) return;
  const expected = interpolate(step.expect, ctx.vars) as { status?: number; body?: unknown };
  const problems: string[] = [];
  if (expected.status !== undefined && expected.status !== res.status) {
    problems.push(`at status: expected ${expected.status}, got ${res.status}${summary ? ` (${summary})` : ''}`);
  }
  if (expected.body !== undefined) {
    const m = partialMatch(expected.body, res.body);
    if (m) problems.push(describeMismatch(m, 'body'));
  }
  if (problems.length) throw new StepFailure(problems.join('\n'));
}

function runExpectWebhook(ctx: RunContext, step: Extract<ScriptStep, { expect_webhook: unknown }>): void {
  const e = interpolate(step.expect_webhook, ctx.vars) as { type: string; data?: unknown; count?: number };
  const received = ctx.receiver?.received ?? [];
  const unverified = received.filter((w) => !w.verified);
  const note = unverified.length ? `; ${unverified.length} webhook${unverified.length === 1 ? '' : 's'} failed signature verification` : '';
  // Retries of one event count once; only webhooks the receiver accepted (2xx) and verified count.
  const accepted = new Map<string, ReceivedWebhook>();
  for (const w of received) if (w.verified && w.answered < 300 && !accepted.has(w.id)) accepted.set(w.id, w);
  const ofType = [...accepted.values()].filter((w) => w.type === e.type);
  const matching = e.data === undefined ? ofType : ofType.filter((w) => partialMatch(e.data, w.data) === null);
  if (e.count !== undefined) {
    if (matching.length !== e.count) {
      throw new StepFailure(
        `expected ${e.count} accepted ${e.type} webhook${e.count === 1 ? '' : 's'}${e.data !== undefined ? ' matching data' : ''}, got ${matching.length}` +
          (matching.length ? ` (${matching.map((w) => w.id).join(', ')})` : '') +
          `${describeReceived(received)}${note}`,
      );
    }
    return;
  }
  if (matching.length > 0) return;
  if (ofType.length === 0) throw new StepFailure(`no accepted ${e.type} webhook${describeReceived(received)}${note}`);
  const closest = ofType
    .map((w) => ({ w, m: partialMatch(e.data, w.data)! }))
    .sort((a, b) => b.m.path.length - a.m.path.length)[0]!;
  throw new StepFailure(
    `no ${e.type} webhook matches among ${ofType.length}; the closest (${closest.w.id}) differs ${describeMismatch(closest.m, 'data')}${note}`,
  );
}

function describeReceived(received: readonly ReceivedWebhook[]): string {
  if (received.length === 0) return '; no webhooks received';
  const shown = received.slice(-10).map((w) => `${w.type} ${w.id} (${w.answered}${w.verified ? '' : ', unverified'})`);
  return `; received${received.length > 10 ? ` (last 10 of ${received.length})` : ''}: ${shown.join(', ')}`;
}

async function runExpectLedger(ctx: RunContext, step: Extract<ScriptStep, { expect_ledger: unknown }>): Promise<void> {
  const { ry } = ctx;
  const e = step.expect_ledger;
  const problems: string[] = [];
  if (e.wallet) {
    const wallet = await ry.ledger.wallet(ry.store, 'test', ry.sandbox.merchantId);
    const m = partialMatch(e.wallet, { available: wallet.available, reserved: wallet.reserved });
    if (m) problems.push(describeMismatch(m, 'wallet'));
  }
  for (const [account, amount] of Object.entries(e.accounts ?? {})) {
    const balance = await ry.ledger.balance(ry.store, 'test', account, 'GHS');
    if (balance !== amount) problems.push(`at account ${account}: expected ${amount}, got ${balance}`);
  }
  if (e.balanced) {
    for (const environment of ['test', 'live'] as const) {
      const trial = await ry.ledger.trialBalance(ry.store, environment);
      for (const [currency, total] of Object.entries(trial)) {
        if (total !== 0) problems.push(`the ${environment} ledger does not balance in ${currency}: postings sum to ${total}`);
      }
    }
  }
  if (problems.length) throw new StepFailure(problems.join('\n'));
}

/** Calls railyard made to each provider so far: requests and status polls (skipping a down provider is no call). */
export function providerCalls(entries: readonly TimelineEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of entries) {
    if (e.from !== 'railyard' || e.to === 'merchant' || e.what.endsWith(': skipped down')) continue;
    counts[e.to] = (counts[e.to] ?? 0) + 1;
  }
  return counts;
}

function runExpectProviderCalls(ctx: RunContext, step: Extract<ScriptStep, { expect_provider_calls: unknown }>): void {
  const counts = providerCalls(ctx.timeline.entries);
  const known = new Set(ctx.ry.router.list().map((r) => r.provider.name));
  const problems: string[] = [];
  for (const [provider, expected] of Object.entries(step.expect_provider_calls)) {
    const actual = counts[provider] ?? 0;
    if (actual !== expected) {
      problems.push(`at ${provider}: expected ${expected} call${expected === 1 ? '' : 's'}, got ${actual}${known.has(provider) ? '' : ` (no provider is named ${provider}; known: ${[...known].join(', ')})`}`);
    }
  }
  if (problems.length) {
    const all = Object.entries(counts).map(([p, n]) => `${p} ${n}`);
    throw new StepFailure(`${problems.join('\n')}\nall calls so far: ${all.length ? all.join(', ') : 'none'}`);
  }
}

async function runStep(ctx: RunContext, step: ScriptStep, index: number): Promise<void> {
  if ('request' in step) return runRequest(ctx, step, index);
  if ('advance' in step) {
    ctx.timeline.record('clock', 'railyard', `advance +${seconds(step.advance)}`);
    await ctx.ry.scheduler.advanceBy(Math.round(step.advance * 1000));
    return;
  }
  if ('expect_webhook' in step) return runExpectWebhook(ctx, step);
  if ('expect_ledger' in step) return runExpectLedger(ctx, step);
  return runExpectProviderCalls(ctx, step);
}

function message(err: unknown): string {
  if (err instanceof StepFailure) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export interface SessionOptions {
  seed: number;
  /** Register the local webhook receiver even when the script does not ask for it. */
  receiver?: boolean;
  upstreamTap?: UpstreamTap;
}

/**
 * A scenario's sandbox, open: steps run one at a time. The replay runs a whole script in one;
 * contract verification rebuilds the state before a step in a fresh one.
 */
export class ScenarioSession {
  private constructor(
    readonly file: ScenarioSource,
    private readonly ctx: RunContext,
    private readonly server: Server,
    /** Business time at the start, ms. */
    readonly start: number,
  ) {}

  /** Opens the sandbox: the file's rules and replay configuration, a virtual clock, the seed. Throws on a bad configuration. */
  static async open(file: ScenarioSource, options: SessionOptions, timeline?: RecordingTimeline): Promise<ScenarioSession> {
    const config = replayConfig(file, options.seed);
    let appClock: Clock | undefined;
    const fallbackStart = config.virtual_start ? Date.parse(config.virtual_start) : VIRTUAL_EPOCH;
    const tl = timeline ?? new RecordingTimeline({ kind: 'virtual', now: () => appClock?.now() ?? fallbackStart });
    const ry = await createApp(config, { rules: file.scenario.rules, wallets: file.scenario.wallets, timeline: tl, ...(options.upstreamTap ? { upstreamTap: options.upstreamTap } : {}) });
    appClock = ry.clock;
    const server = createServer(ry.app);
    let receiver: Receiver | null = null;
    try {
      await listen(server);
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      ry.setBaseUrl(baseUrl);
      const ctx: RunContext = { ry, baseUrl, timeline: tl, receiver: null, vars: {}, exchange: null };
      const settings = file.scenario.replay?.webhook_receiver;
      if (options.receiver || settings || (file.scenario.script ?? []).some((s) => 'expect_webhook' in s)) {
        receiver = await startReceiver(settings?.fail_first ?? 0, settings?.status ?? 500);
        ctx.receiver = receiver;
        const res = await send(ctx, { method: 'POST', path: '/api/v1/webhook_endpoints', body: { url: receiver.url } });
        const secret = (res.body as { data?: { secret?: unknown } } | null)?.data?.secret;
        if (res.status !== 201 || typeof secret !== 'string') throw new Error(`could not register the webhook receiver: ${res.status} ${summariseResponse(res.body)}`);
        receiver.secret = secret;
      }
      return new ScenarioSession(file, ctx, server, ry.clock.now());
    } catch (err) {
      if (receiver) await receiver.close();
      await closeServer(server);
      await ry.close();
      throw err;
    }
  }

  get ry(): Railyard {
    return this.ctx.ry;
  }
  get baseUrl(): string {
    return this.ctx.baseUrl;
  }
  get timeline(): RecordingTimeline {
    return this.ctx.timeline;
  }
  /** Variables saved by `as:` so far. */
  get vars(): Record<string, unknown> {
    return this.ctx.vars;
  }
  /** Webhooks the local receiver got so far, in arrival order (none without a receiver). */
  get webhooks(): readonly ReceivedWebhook[] {
    return this.ctx.receiver?.received ?? [];
  }
  /** Whole bodies of the webhooks received, by event id. */
  webhookPayload(id: string): unknown {
    return this.ctx.receiver?.payloads.get(id);
  }
  /** The last scripted request and its answer. */
  get exchange(): RecordedExchange | null {
    return this.ctx.exchange;
  }

  /** Runs step `index` (1-based) of the script; throws with the reason when its check fails. */
  async runStep(index: number): Promise<void> {
    const step = (this.file.scenario.script ?? [])[index - 1];
    if (!step) throw new Error(`${this.file.path} has no step ${index}`);
    this.ctx.exchange = null;
    await runStep(this.ctx, step, index);
  }

  async close(): Promise<void> {
    if (this.ctx.receiver) await this.ctx.receiver.close();
    await closeServer(this.server);
    await this.ctx.ry.close();
  }
}

/**
 * Runs one scenario file's script in a fresh in-process sandbox and checks its expectations. The
 * script stops at the first failing step (later steps usually depend on it). Never throws for a
 * problem in the file or the run: it is in the result. Always closes what it started.
 */
export async function runScenario(file: ScenarioSource, options: RunOptions = {}): Promise<ReplayResult> {
  const { scenario } = file;
  const seed = options.seed ?? scenario.replay?.seed ?? 1;
  const steps = scenario.script ?? [];
  const result: ReplayResult = {
    file: file.path,
    name: scenario.name,
    status: 'passed',
    passed: true,
    seed,
    steps: [],
    timeline: [],
    failures: [],
    notRun: 0,
  };
  const fail = (index: number | null, label: string, msg: string) => {
    result.failures.push({ index, label, message: msg });
    result.status = 'failed';
    result.passed = false;
  };

  let start = VIRTUAL_EPOCH;
  let session: ScenarioSession | undefined;
  const timeline = new RecordingTimeline({ kind: 'virtual', now: () => session?.ry.clock.now() ?? start });
  let cancelled = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const current: { step: { index: number; label: string } | null } = { step: null };

  try {
    try {
      session = await ScenarioSession.open(file, { seed }, timeline);
    } catch (err) {
      if (err instanceof YamlSourceError) {
        fail(null, 'replay.config', message(err));
        result.notRun = steps.length;
        return result;
      }
      throw err;
    }
    start = session.start;
    const ry = session.ry;
    const offset = () => formatOffset(ry!.clock.now() - start);
    running = (async () => {
      for (const [i, step] of steps.entries()) {
        if (cancelled) return;
        const index = i + 1;
        const label = stepLabel(step, index);
        current.step = { index, label };
        const kind = kindOf(step);
        const checks = kind !== 'advance' && (kind !== 'request' || ('expect' in step && step.expect !== undefined));
        let error: string | undefined;
        try {
          await session.runStep(index);
        } catch (err) {
          error = message(err);
        }
        if (cancelled) return;
        result.steps.push({ index, label, kind, checks, passed: error === undefined, ...(error !== undefined ? { error } : {}), at: offset(), entries: timeline.entries.length });
        if (error !== undefined) {
          fail(index, label, error);
          result.notRun = steps.length - index;
          return;
        }
      }
      current.step = null;
    })();
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const outcome = await Promise.race([
      running.then(() => 'done' as const),
      new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), timeoutMs);
      }),
    ]);
    if (outcome === 'timeout') {
      cancelled = true;
      const at = current.step;
      fail(at?.index ?? null, at?.label ?? 'script', `the script took longer than ${timeoutMs} ms of real time`);
      result.notRun = at ? steps.length - at.index : 0;
    }
  } catch (err) {
    fail(current.step?.index ?? null, current.step?.label ?? 'setup', `could not run the script: ${message(err)}`);
  } finally {
    clearTimeout(timer);
    if (running && cancelled) await Promise.race([running.catch(() => undefined), new Promise((done) => setTimeout(done, 2_000).unref())]);
    if (session) await session.close();
  }

  result.timeline = timeline.entries.map((e) => {
    const ms = Date.parse(e.at) - start;
    return { at: formatOffset(ms), ms, from: e.from, to: e.to, what: e.what };
  });
  return result;
}

/** A path as the report shows it: relative to cwd when inside it, else as given. */
export function displayPath(path: string, cwd = process.cwd()): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * Loads one scenario file and replays its script: `invalid` when the file does not load (each
 * problem as file:line:column), `skipped` when it has no script.
 */
export async function replayFile(path: string, options: RunOptions & { cwd?: string } = {}): Promise<ReplayResult> {
  const shown = displayPath(path, options.cwd);
  const invalid = (problems: string[], name: string | null = null): ReplayResult => ({
    file: shown,
    name,
    status: 'invalid',
    passed: false,
    seed: null,
    steps: [],
    timeline: [],
    failures: problems.map((p) => ({ index: null, label: 'invalid scenario file', message: p })),
    notRun: 0,
  });
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return invalid([`${shown}: cannot read the file: ${message(err)}`]);
  }
  let scenario: ScenarioFile;
  try {
    scenario = parseScenario(text, shown);
  } catch (err) {
    if (err instanceof YamlSourceError) return invalid(err.problems);
    return invalid([`${shown}: ${message(err)}`]);
  }
  if (!scenario.script) {
    return { file: shown, name: scenario.name, status: 'skipped', passed: true, seed: null, steps: [], timeline: [], failures: [], notRun: 0 };
  }
  return runScenario({ path: shown, scenario, text }, options);
}

