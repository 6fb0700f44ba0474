// railyard contracts generate: the scripted scenarios, replayed, become Pact V4 files.
//
//   merchant -> railyard             each scripted request is an HTTP interaction, each webhook it
//                                    causes an asynchronous message
//   railyard -> mtn-momo / hubtel /  each answered call the adapters made during the replays
//               bank-rail
//
// Every interaction is written by pact-js itself: it is registered with the Pact mock server and
// the recorded request is sent to it, as a consumer test would. Generation is deterministic (the
// replays are), and it starts from an empty folder because Pact merges into existing files.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { MatchersV3 as M, PactV4 } from '@pact-foundation/pact';
import { PROVIDERS } from '../providers/index.ts';
import { partialMatch, type ScenarioSource } from '../replay/replay-api.ts';
import { bodyMatchers, redactSecrets, requestBody, stateExpression, REDACTED, references } from './body-matchers.ts';
import { loadScenarioSource, recordScenario, type RecordedStep, type ScenarioRecording, type UpstreamExchange } from './scenario-recording.ts';

export const MERCHANT = 'merchant';
export const RAILYARD = 'railyard';
/** One railyard -> provider Pact file per provider of the list (src/providers/index.ts). */
export const UPSTREAM_PROVIDERS = PROVIDERS.map((p) => p.id);

/** Request headers that carry credentials: the pact holds a placeholder, the verifier sets the real one. */
export const CREDENTIAL_HEADERS = new Set(['authorization', 'ocp-apim-subscription-key', 'x-signature', 'x-api-key']);
/** Upstream request headers worth promising; the rest (user-agent, length) are transport detail. */
const UPSTREAM_HEADERS = new Set(['content-type', 'accept', 'x-reference-id', 'x-target-environment', 'x-callback-url', 'x-participant-id', 'x-timestamp', ...CREDENTIAL_HEADERS]);

export interface StateParams {
  /** The scenario file, relative to the working directory, with forward slashes. */
  scenario: string;
  seed: number;
  /** HTTP and message interactions: the script has run up to and including this step. */
  after_step?: number;
  /** Message interactions: the n-th event of this type the run delivered. */
  event_type?: string;
  event_ordinal?: number;
  /** Upstream interactions: the run paused at railyard's n-th upstream call, in this step. */
  step?: number;
  call?: number;
}

export interface GenerateOptions {
  /** Scenario files; default: every file in `scenarios/` with a script. */
  scenarios?: string[];
  scenarioDir?: string;
  dir: string;
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  cwd?: string;
}

export interface GeneratedPact {
  file: string;
  consumer: string;
  provider: string;
  http: number;
  messages: number;
}

/** Whether a scenario file has a script: only those become contracts. */
export function hasScript(path: string): boolean {
  return /^script:/m.test(readFileSync(path, 'utf8'));
}

/** Scripted scenario files in a folder, sorted. */
export function scriptedScenarios(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f))
    .filter(hasScript);
}

function posix(path: string): string {
  return path.split(sep).join('/');
}

function bare(label: string): string {
  return label.replace(/^step \d+: /, '');
}

/** `failover (A timeout at mtn-momo, then success on hubtel), after step 2: hubtel calls back` */
export function stateName(rec: ScenarioRecording, afterStep: number): string {
  const scenario = rec.description ? `${rec.name} (${rec.description})` : rec.name;
  if (afterStep === 0) return `${scenario}, at the start`;
  return `${scenario}, after step ${afterStep}: ${bare(rec.steps[afterStep - 1]!.label)}`;
}

function upstreamStateName(rec: ScenarioRecording, step: RecordedStep, call: number): string {
  const scenario = rec.description ? `${rec.name} (${rec.description})` : rec.name;
  return `${scenario}, in step ${step.index} (${bare(step.label)}), before railyard's upstream call ${call}`;
}

function parseJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined || text === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

// Header regexes must match the whole value.
const JSON_CONTENT = M.regex('^application/json(;.*)?$', 'application/json; charset=utf-8');

async function addMerchantInteractions(pact: PactV4, messages: PactV4, rec: ScenarioRecording, params: Omit<StateParams, 'after_step'>): Promise<{ http: number; messages: number }> {
  let http = 0;
  let sent = 0;
  for (const step of rec.steps) {
    const ex = step.exchange;
    if (ex) {
      const expect = (readStep(rec, step.index) as { expect?: { body?: unknown } }).expect;
      const state = { ...params, after_step: step.index - 1 };
      // The query goes into the pact as a query, not as part of the path (Pact matches them apart).
      const [path = ex.path, queryString] = ex.path.split('?');
      const [pathTemplate = ex.pathTemplate, queryTemplate] = ex.pathTemplate.split('?');
      const query = new URLSearchParams(queryString ?? '');
      // A query value the script wrote as a reference is the state's, like a path's.
      const queryTemplates = new URLSearchParams(queryTemplate ?? '');
      const queryValue = (name: string, value: string) => {
        const template = queryTemplates.get(name);
        return template !== null && references(template).length > 0 ? M.fromProviderState(stateExpression(template), value) : value;
      };
      const templated = references(pathTemplate).length > 0;
      const headers: Record<string, unknown> = {};
      if (ex.body !== undefined) headers['Content-Type'] = 'application/json';
      if (ex.idempotent) headers['Idempotency-Key'] = M.regex('^[\\x21-\\x7e]{1,255}$', `contract-step-${step.index}`);
      await pact
        .addInteraction()
        .given(stateName(rec, step.index - 1), state as never)
        .uponReceiving(`${rec.name} step ${step.index}: ${bare(step.label)}`)
        .withRequest(ex.method as 'GET', templated ? M.fromProviderState(stateExpression(pathTemplate), path) : path, (b) => {
          if ([...query.keys()].length) b.query(Object.fromEntries([...query.entries()].map(([name, value]) => [name, queryValue(name, value)])) as never);
          b.headers(headers as never);
          if (ex.body !== undefined) b.jsonBody(requestBody(ex.body, ex.bodyTemplate));
        })
        .willRespondWith(ex.status, (b) => {
          if (ex.contentType?.startsWith('application/json') && ex.response !== null) {
            b.headers({ 'Content-Type': JSON_CONTENT });
            b.jsonBody(bodyMatchers(ex.response, { exact: expect?.body }));
          } else if (ex.contentType) {
            // A text answer (a CSV export): the consumer relies on its media type; its rows are data.
            const media = ex.contentType.split(';')[0]!.trim();
            b.headers({ 'Content-Type': M.regex(`^${media.replace(/[.+]/g, '\\$&')}(;.*)?$`, ex.contentType) });
          }
        })
        .executeTest(async (server) => {
          const h: Record<string, string> = {};
          if (ex.body !== undefined) h['content-type'] = 'application/json';
          if (ex.idempotent) h['idempotency-key'] = `contract-step-${step.index}`;
          const res = await fetch(server.url + ex.path, { method: ex.method, headers: h, ...(ex.body !== undefined ? { body: JSON.stringify(ex.body) } : {}) });
          await res.arrayBuffer();
        });
      http += 1;
    }
    const countOfType = new Map<string, number>();
    for (const w of step.webhooks) countOfType.set(w.type, (countOfType.get(w.type) ?? 0) + 1);
    const shown = new Map<string, number>();
    for (const w of step.webhooks) {
      const n = (shown.get(w.type) ?? 0) + 1;
      shown.set(w.type, n);
      const expectData = expectedWebhookData(rec, w.type, (w.payload as { data?: unknown } | null)?.data);
      await messages
        .addAsynchronousInteraction()
        .given(stateName(rec, step.index), { ...params, after_step: step.index, event_type: w.type, event_ordinal: w.ordinal } as never)
        .expectsToReceive(`${rec.name} step ${step.index}: the ${w.type} webhook${countOfType.get(w.type)! > 1 ? ` #${n}` : ''}`, (b) => {
          b.withJSONContent(bodyMatchers(w.payload, { message: true, exact: { type: w.type, data: expectData } }));
        })
        .executeTest(async () => undefined);
      sent += 1;
    }
  }
  return { http, messages: sent };
}

function readStep(rec: ScenarioRecording, index: number): unknown {
  return rec.script[index - 1] ?? {};
}

/**
 * What the script's expect_webhook steps assert about this event, for exact matching: the literal
 * values of the first one whose data this event matches (references differ per run, so they are
 * left to the type matchers).
 */
function expectedWebhookData(rec: ScenarioRecording, type: string, data: unknown): unknown {
  for (const step of rec.script) {
    if (!('expect_webhook' in step) || step.expect_webhook.type !== type || step.expect_webhook.data === undefined) continue;
    const literal = stripReferences(step.expect_webhook.data);
    if (partialMatch(literal, data) === null) return literal;
  }
  return undefined;
}

function stripReferences(value: unknown): unknown {
  if (typeof value === 'string') return references(value).length ? undefined : value;
  if (Array.isArray(value) || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .map(([k, v]) => [k, stripReferences(v)] as const)
      .filter(([, v]) => v !== undefined),
  );
}

async function addUpstreamInteraction(pact: PactV4, rec: ScenarioRecording, step: RecordedStep, ex: UpstreamExchange, params: StateParams): Promise<void> {
  const headers: Record<string, unknown> = {};
  const sentHeaders: Record<string, string> = {};
  for (const name of Object.keys(ex.headers).sort()) {
    if (!UPSTREAM_HEADERS.has(name)) continue;
    const credential = CREDENTIAL_HEADERS.has(name);
    const value = credential ? (name === 'authorization' ? `${ex.headers[name]!.split(' ')[0]} ${REDACTED}` : REDACTED) : ex.headers[name]!;
    headers[name] = credential ? M.regex(name === 'authorization' ? '^(Basic|Bearer) \\S+$' : '^\\S+$', value) : value;
    sentHeaders[name] = value;
  }
  const requestJson = parseJson(ex.body);
  const responseJson = parseJson(ex.response);
  await pact
    .addInteraction()
    .given(upstreamStateName(rec, step, ex.call), params as never)
    .uponReceiving(`${rec.name} step ${step.index}, call ${ex.call}: ${ex.method} ${ex.path.split('?')[0]}`)
    .withRequest(ex.method as 'GET', ex.path.split('?')[0]!, (b) => {
      const query = new URL(ex.path, 'http://x').searchParams;
      if ([...query.keys()].length) b.query(Object.fromEntries(query.entries()));
      b.headers(headers as never);
      if (requestJson.ok) b.jsonBody(redactSecrets(requestJson.value));
      else if (ex.body) b.body(ex.headers['content-type'] ?? 'text/plain', Buffer.from(ex.body));
    })
    .willRespondWith(ex.status, (b) => {
      if (responseJson.ok && ex.contentType?.startsWith('application/json')) {
        b.headers({ 'Content-Type': JSON_CONTENT });
        b.jsonBody(bodyMatchers(responseJson.value, { providerUnits: true }));
      }
    })
    .executeTest(async (server) => {
      const body = requestJson.ok ? JSON.stringify(redactSecrets(requestJson.value)) : ex.body;
      const res = await fetch(server.url + ex.path, { method: ex.method, headers: sentHeaders, ...(body ? { body } : {}) });
      await res.arrayBuffer();
    });
}

/** Replays every scripted scenario and writes the pact files into an emptied `dir`. */
export async function generateContracts(options: GenerateOptions): Promise<GeneratedPact[]> {
  const cwd = options.cwd ?? process.cwd();
  const logLevel = options.logLevel ?? 'error';
  const files = options.scenarios ?? scriptedScenarios(options.scenarioDir ?? join(cwd, 'scenarios'));
  // Record everything first: a failing script leaves the committed contracts untouched.
  const recordings: { source: ScenarioSource; rec: ScenarioRecording }[] = [];
  for (const path of files) {
    const source = loadScenarioSource(path);
    const rec = await recordScenario(source);
    recordings.push({ source, rec });
  }

  mkdirSync(options.dir, { recursive: true });
  for (const f of readdirSync(options.dir)) if (f.endsWith('.json')) rmSync(join(options.dir, f));

  const merchant = new PactV4({ consumer: MERCHANT, provider: RAILYARD, dir: options.dir, logLevel });
  const merchantMessages = new PactV4({ consumer: MERCHANT, provider: RAILYARD, dir: options.dir, logLevel });
  const upstream = new Map(UPSTREAM_PROVIDERS.map((p) => [p, new PactV4({ consumer: RAILYARD, provider: p, dir: options.dir, logLevel })]));
  const counts = new Map<string, { http: number; messages: number }>();
  const bump = (provider: string, http: number, messages: number) => {
    const c = counts.get(provider) ?? { http: 0, messages: 0 };
    counts.set(provider, { http: c.http + http, messages: c.messages + messages });
  };

  for (const { rec } of recordings) {
    const scenario = posix(relative(cwd, rec.file) || rec.file);
    const params = { scenario, seed: rec.seed };
    const added = await addMerchantInteractions(merchant, merchantMessages, rec, params);
    bump(RAILYARD, added.http, added.messages);
    for (const step of rec.steps) {
      for (const ex of step.upstream) {
        const pact = upstream.get(ex.provider as (typeof UPSTREAM_PROVIDERS)[number]);
        if (!pact) continue;
        await addUpstreamInteraction(pact, rec, step, ex, { ...params, step: step.index, call: ex.call });
        bump(ex.provider, 1, 0);
      }
    }
  }

  const generated = [RAILYARD, ...UPSTREAM_PROVIDERS]
    .filter((p) => counts.has(p))
    .map((provider) => {
      const consumer = provider === RAILYARD ? MERCHANT : RAILYARD;
      return { file: join(options.dir, `${consumer}-${provider}.json`), consumer, provider, ...counts.get(provider)! };
    });
  const texts = new Map(recordings.map(({ source, rec }) => [posix(relative(cwd, rec.file) || rec.file), source.text ?? readFileSync(rec.file, 'utf8')]));
  for (const g of generated) embedScenarios(g.file, texts);
  return generated;
}

/**
 * Puts the text of each scenario that the file's provider states name into its metadata
 * (metadata.railyard.scenarios, by that name): the file then verifies from any directory, alone,
 * against the states it was generated from. Written as pact-js writes (2 spaces, no final newline).
 */
function embedScenarios(file: string, texts: ReadonlyMap<string, string>): void {
  const pact = JSON.parse(readFileSync(file, 'utf8')) as { metadata?: Record<string, unknown>; interactions: { providerStates?: { params?: { scenario?: unknown } }[] }[] };
  const names = new Set<string>();
  for (const i of pact.interactions) for (const s of i.providerStates ?? []) if (typeof s.params?.scenario === 'string') names.add(s.params.scenario);
  const scenarios: Record<string, string> = {};
  for (const name of [...names].sort()) scenarios[name] = texts.get(name)!;
  pact.metadata = { ...pact.metadata, railyard: { scenarios } };
  writeFileSync(file, JSON.stringify(pact, null, 2));
}
