// railyard contracts verify: the Pact Verifier against railyard, one pact file at a time.
//
// In process (the default), each provider state is rebuilt from scratch: a fresh sandbox runs the
// scenario's script with its seed up to the state's step, so the verifier meets exactly the state
// the contract was recorded in. For an upstream contract the run pauses at railyard's call to that
// provider, and the verifier makes the call instead, to the provider's mock. A request filter adds
// what a pact cannot hold: the API key, a fresh request signature and Idempotency-Key, the
// provider's credentials. Messages come from the webhooks the rebuilt run delivered.
//
// With --provider-base-url, the merchant contract is verified against a running railyard (a
// container, say): each state is built for a fresh sandbox merchant by running the script's
// requests and clock advances against it (remote-scenario-run.ts), and messages are read back
// from that merchant's events API.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Verifier } from '@pact-foundation/pact';
import type { RequestHandler } from 'express';
import { hmacSha256Hex } from '../kernel/secrets.ts';
import { RailError } from '../rails/provider-port.ts';
import type { UpstreamRequest } from '../rails/upstream-tap.ts';
import { closeServer, interpolate, listen, ScenarioSession, type ScenarioSource } from '../replay/replay-api.ts';
import { authorise, forwardedBody } from './authorise-request.ts';
import { references, stateVariable } from './body-matchers.ts';
import { CREDENTIAL_HEADERS, MERCHANT, RAILYARD, type StateParams } from './contract-generator.ts';
import { RemoteScenarioRun } from './remote-scenario-run.ts';
import { loadScenarioSource, mockPrefix, scenarioSourceOf } from './scenario-recording.ts';

export interface VerifyOptions {
  dir: string;
  /** A running railyard to verify the merchant contract against, instead of in-process sandboxes. */
  providerBaseUrl?: string;
  /** Its test key and signing secret (default: the sandbox defaults). */
  apiKey?: string;
  signingSecret?: string;
  /** Only these providers' pact files. */
  providers?: string[];
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** Where scenario paths are looked up when they are not relative to their pact file. */
  cwd?: string;
  /** Wraps the in-process provider, as a test does to simulate a breaking change. */
  wrapProvider?: (handler: RequestListener) => RequestListener;
}

/** A pact file's provider states name scenario files that are not there: a usage error. */
export class MissingScenarioError extends Error {}

/**
 * A state's scenario: the text the pact file embeds (metadata.railyard.scenarios, by the path its
 * states name), so a generated file verifies from anywhere and alone; else the file at that path,
 * relative to the pact file or to the working directory (a merchant's own pact, written with
 * paths from a railyard checkout).
 */
function scenarioLocator(pactFile: string, pact: PactFile, cwd: string): (scenario: string) => ScenarioSource {
  const embedded = pact.metadata?.railyard?.scenarios ?? {};
  const loaded = new Map<string, ScenarioSource>();
  return (scenario) => {
    let source = loaded.get(scenario);
    if (source) return source;
    const text = embedded[scenario];
    if (typeof text === 'string') {
      source = scenarioSourceOf(`${scenario} (embedded in ${pactFile})`, text);
    } else {
      const candidates = [...new Set([resolve(dirname(pactFile), scenario), resolve(cwd, scenario)])];
      const found = candidates.find((c) => existsSync(c));
      if (!found) throw new MissingScenarioError(`${pactFile} names the scenario ${scenario}, which it does not embed and which is at none of ${candidates.join(', ')}`);
      source = loadScenarioSource(found);
    }
    loaded.set(scenario, source);
    return source;
  };
}

/** Loads every scenario the pact's provider states name, or throws a MissingScenarioError listing those missing. */
function checkScenarios(pact: PactFile, locate: (scenario: string) => ScenarioSource): void {
  const missing = new Map<string, string>();
  for (const i of pact.interactions) {
    for (const s of i.providerStates ?? []) {
      const scenario = s.params?.scenario;
      if (typeof scenario !== 'string' || missing.has(scenario)) continue;
      try {
        locate(scenario);
      } catch (err) {
        if (!(err instanceof MissingScenarioError)) throw err;
        missing.set(scenario, err.message);
      }
    }
  }
  if (missing.size) {
    throw new MissingScenarioError(
      `${[...missing.values()].join('\n')}\n(railyard contracts generate embeds the scenarios; give a path relative to the pact file or to the working directory for one of your own)`,
    );
  }
}

export interface Mismatch {
  path: string | null;
  message: string;
}

export interface InteractionResult {
  description: string;
  states: string[];
  passed: boolean;
  mismatches: Mismatch[];
}

export interface PactVerification {
  file: string;
  consumer: string;
  provider: string;
  passed: boolean;
  interactions: InteractionResult[];
  /** The verifier's own report, ANSI colours stripped. */
  report: string;
  /** Why verification could not run at all. */
  error?: string;
}

interface PactFile {
  metadata?: { railyard?: { scenarios?: Record<string, string> } };
  consumer: { name: string };
  provider: { name: string };
  interactions: { description: string; type: string; providerStates?: { name: string; params?: StateParams }[] }[];
}

/** The pact files in a folder, sorted. */
export function pactFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(dir, f));
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The values a state offers to the verifier: every script reference resolvable so far. */
function stateValues(script: unknown[], vars: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const step of script) {
    const request = (step as { request?: { path?: unknown; body?: unknown } }).request;
    if (!request) continue;
    for (const expression of [...references(request.path), ...references(request.body)]) {
      try {
        values[stateVariable(expression)] = interpolate(`\${${expression}}`, vars);
      } catch {
        // Not saved yet at this state: a later step's reference.
      }
    }
  }
  return values;
}

/** In-process provider states: a fresh sandbox per state, run up to it. */
class InProcessStates {
  session: ScenarioSession | null = null;
  paused: UpstreamRequest | null = null;

  constructor(private readonly locate: (scenario: string) => ScenarioSource) {}

  private async fresh(params: StateParams, pauseAt?: number): Promise<ScenarioSession> {
    await this.reset();
    const source = this.locate(params.scenario);
    let calls = 0;
    const session = await ScenarioSession.open(source, {
      seed: params.seed,
      receiver: true,
      upstreamTap: {
        beforeCall: (request) => {
          calls += 1;
          if (calls !== pauseAt) return;
          this.paused = request;
          throw new RailError('connection', 'paused here for contract verification');
        },
      },
    });
    this.session = session;
    return session;
  }

  /** The merchant contract's states: the script has run through `after_step`. */
  async afterStep(params: StateParams): Promise<Record<string, unknown>> {
    const session = await this.fresh(params);
    for (let i = 1; i <= (params.after_step ?? 0); i++) {
      await session.runStep(i).catch((err: Error) => {
        throw new Error(`could not build the state: ${params.scenario} step ${i} failed: ${err.message}`);
      });
    }
    return stateValues(session.file.scenario.script ?? [], session.vars);
  }

  /** The upstream contracts' states: the run is paused at railyard's upstream call `call`, in step `step`. */
  async beforeCall(params: StateParams): Promise<void> {
    const session = await this.fresh(params, params.call);
    for (let i = 1; i <= (params.step ?? 0); i++) {
      try {
        await session.runStep(i);
      } catch (err) {
        // The paused call makes its own step go another way; the steps before it must pass.
        if (i < (params.step ?? 0)) throw new Error(`could not build the state: ${params.scenario} step ${i} failed: ${(err as Error).message}`);
      }
      if (this.paused) return;
    }
    throw new Error(`could not build the state: railyard made no upstream call ${params.call} by step ${params.step} of ${params.scenario}`);
  }

  /** The n-th webhook of a type the rebuilt run delivered. */
  message(params: StateParams): unknown {
    const session = this.session;
    if (!session) throw new Error('no state was built for this message');
    const seen = new Set<string>();
    let n = 0;
    for (const w of session.webhooks) {
      if (!w.verified || seen.has(w.id)) continue;
      seen.add(w.id);
      if (w.type === params.event_type && ++n === params.event_ordinal) return session.webhookPayload(w.id);
    }
    throw new Error(`the run delivered no ${params.event_type} webhook #${params.event_ordinal}`);
  }

  /** Adds the sandbox key, a fresh signature and Idempotency-Key to a merchant request. */
  merchantFilter: RequestHandler = (req, _res, next) => {
    const ry = this.session?.ry;
    if (ry && !req.path.startsWith('/_pact')) {
      authorise(req, { key: ry.sandbox.key, secret: ry.sandbox.signingSecret, routes: ry.routes, now: ry.wallClock.now() });
    }
    next();
  };

  /** Puts railyard's real credentials (and a signature over the body as sent) on an upstream request. */
  upstreamFilter =
    (provider: string): RequestHandler =>
    (req, _res, next) => {
      const paused = this.paused;
      const session = this.session;
      if (paused && session && !req.path.startsWith('/_pact')) {
        for (const name of CREDENTIAL_HEADERS) if (paused.headers[name] !== undefined) req.headers[name] = paused.headers[name];
        if (provider === 'bank-rail' && req.headers['x-timestamp']) {
          const secret = session.ry.config.providers['bank-rail'].client_secret;
          // The bank switch signs the path it sees: the mock's, under its mount point.
          req.headers['x-signature'] = hmacSha256Hex(secret, `${String(req.headers['x-timestamp'])}.${req.method.toUpperCase()}.${mockPrefix(provider)}${req.originalUrl}.${forwardedBody(req)}`);
        }
      }
      next();
    };

  async reset(): Promise<void> {
    this.paused = null;
    const s = this.session;
    this.session = null;
    if (s) await s.close();
  }
}

function summarise(file: string, pact: PactFile, raw: unknown, error?: string): PactVerification {
  let parsed: {
    output?: string[];
    interactionResults?: { description: string; providerStates?: string[]; result: string; mismatch?: { mismatches?: { path?: string; mismatch?: string; type?: string }[]; message?: string } }[];
  } = {};
  try {
    parsed = typeof raw === 'string' ? JSON.parse(raw) : ((raw ?? {}) as typeof parsed);
  } catch {
    parsed = {};
  }
  const interactions: InteractionResult[] = (parsed.interactionResults ?? []).map((r) => ({
    description: r.description,
    states: r.providerStates ?? [],
    passed: r.result === 'OK',
    mismatches: [
      ...(r.mismatch?.mismatches ?? []).map((m) => ({ path: m.path ?? null, message: (m.mismatch ?? m.type ?? 'mismatch').replace(ANSI, '') })),
      ...(r.mismatch?.message ? [{ path: null, message: r.mismatch.message.replace(ANSI, '') }] : []),
    ],
  }));
  const report = (parsed.output ?? []).join('\n').replace(ANSI, '');
  const passed = !error && interactions.length === pact.interactions.length && interactions.every((i) => i.passed);
  return {
    file,
    consumer: pact.consumer.name,
    provider: pact.provider.name,
    passed,
    interactions,
    report,
    ...(error ? { error } : interactions.length === 0 && pact.interactions.length > 0 ? { error: 'the verifier returned no results' } : {}),
  };
}

// biome-ignore lint/suspicious/noConfusingVoidType: Pact's state handlers answer params or nothing (JsonMap | void)
function handlersFor(pact: PactFile, state: (params: StateParams) => Promise<Record<string, unknown> | void>) {
  // biome-ignore lint/suspicious/noConfusingVoidType: as above
  const stateHandlers: Record<string, (params?: unknown) => Promise<Record<string, unknown> | void>> = {};
  for (const i of pact.interactions) {
    for (const s of i.providerStates ?? []) {
      stateHandlers[s.name] = async (params) => state((params ?? s.params ?? {}) as StateParams) as never;
    }
  }
  return stateHandlers;
}

async function runVerifier(
  file: string,
  pact: PactFile,
  options: VerifyOptions,
  setup: {
    providerBaseUrl: string;
    stateHandlers: ReturnType<typeof handlersFor>;
    requestFilter: RequestHandler;
    messageProviders: Record<string, (descriptor: unknown) => Promise<unknown>>;
  },
): Promise<PactVerification> {
  const verifier = new Verifier({
    provider: pact.provider.name,
    providerBaseUrl: setup.providerBaseUrl,
    pactUrls: [resolve(file)],
    logLevel: options.logLevel ?? 'error',
    stateHandlers: setup.stateHandlers as never,
    requestFilter: setup.requestFilter,
    messageProviders: setup.messageProviders as never,
    timeout: 60_000,
  });
  try {
    const out = await verifier.verifyProvider();
    return summarise(file, pact, out);
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    if (message.trimStart().startsWith('{')) return summarise(file, pact, message);
    return summarise(file, pact, null, message);
  }
}

function messageParams(descriptor: unknown): StateParams {
  const states = (descriptor as { providerStates?: { params?: StateParams }[] } | null)?.providerStates ?? [];
  return (states[0]?.params ?? {}) as StateParams;
}

async function verifyInProcess(file: string, pact: PactFile, options: VerifyOptions): Promise<PactVerification> {
  const states = new InProcessStates(scenarioLocator(file, pact, options.cwd ?? process.cwd()));
  const upstream = pact.consumer.name === RAILYARD;
  const provider = pact.provider.name;
  const dispatch: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const session = states.session;
    if (!session) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no provider state was set up');
      return;
    }
    if (upstream) req.url = mockPrefix(provider) + (req.url ?? '/');
    session.ry.app(req as never, res as never);
  };
  const server = createServer(options.wrapProvider ? options.wrapProvider(dispatch) : dispatch);
  await listen(server);
  const messageProviders: Record<string, (d: unknown) => Promise<unknown>> = {};
  for (const i of pact.interactions) {
    if (i.type === 'Asynchronous/Messages') messageProviders[i.description] = async (d) => states.message(messageParams(d));
  }
  try {
    return await runVerifier(file, pact, options, {
      providerBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      stateHandlers: handlersFor(pact, (params) => (upstream ? states.beforeCall(params) : states.afterStep(params))),
      requestFilter: upstream ? states.upstreamFilter(provider) : states.merchantFilter,
      messageProviders,
    });
  } finally {
    await states.reset();
    await closeServer(server);
  }
}

async function verifyRemote(file: string, pact: PactFile, options: VerifyOptions): Promise<PactVerification> {
  const locate = scenarioLocator(file, pact, options.cwd ?? process.cwd());
  const run = new RemoteScenarioRun(options.providerBaseUrl!, { ...(options.apiKey ? { apiKey: options.apiKey } : {}), ...(options.signingSecret ? { signingSecret: options.signingSecret } : {}) });
  await run.connect();
  const messageProviders: Record<string, (d: unknown) => Promise<unknown>> = {};
  for (const i of pact.interactions) {
    if (i.type === 'Asynchronous/Messages') messageProviders[i.description] = async (d) => run.message(messageParams(d));
  }
  try {
    return await runVerifier(file, pact, options, {
      providerBaseUrl: options.providerBaseUrl!,
      stateHandlers: handlersFor(pact, (params) => run.afterStep(locate(params.scenario), params, stateValues)),
      requestFilter: run.filter,
      messageProviders,
    });
  } finally {
    await run.close();
  }
}

/** Verifies every pact file in `dir` (or those of `providers`); one result per file. */
export async function verifyContracts(options: VerifyOptions): Promise<PactVerification[]> {
  const pacts: { file: string; pact: PactFile }[] = [];
  for (const file of pactFiles(options.dir)) {
    const pact = JSON.parse(readFileSync(file, 'utf8')) as PactFile;
    if (options.providers && !options.providers.includes(pact.provider.name)) continue;
    if (options.providerBaseUrl && (pact.consumer.name !== MERCHANT || pact.provider.name !== RAILYARD)) continue;
    pacts.push({ file, pact });
  }
  // Before any verification: a missing scenario file is the caller's mistake, not a failed contract.
  for (const { file, pact } of pacts) checkScenarios(pact, scenarioLocator(file, pact, options.cwd ?? process.cwd()));
  const results: PactVerification[] = [];
  for (const { file, pact } of pacts) {
    results.push(options.providerBaseUrl ? await verifyRemote(file, pact, options) : await verifyInProcess(file, pact, options));
  }
  return results;
}
