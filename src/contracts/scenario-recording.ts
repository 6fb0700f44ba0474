// Runs a scenario's script once and keeps what crossed each edge at each step: the scripted
// request and its answer, the webhooks it caused, and railyard's calls to its upstreams. The
// contract generator turns a recording into Pact interactions.

import { readFileSync } from 'node:fs';
import { REDACTED } from './body-matchers.ts';
import type { ScriptStep } from '../scenarios/script-schema.ts';
import type { UpstreamRequest } from '../rails/upstream-tap.ts';
import { ScenarioSession, stepLabel, type RecordedExchange, type ScenarioSource } from '../replay/replay-api.ts';
import { parseScenario } from '../railyard-scenarios.ts';

/** One call railyard made to an upstream, answered. */
export interface UpstreamExchange {
  provider: string;
  /** 1-based, over every upstream call of the run (answered or not): the call verification pauses at. */
  call: number;
  method: string;
  /** Path and query, relative to the provider's base URL. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  status: number;
  contentType: string | null;
  response: string;
}

/** A webhook the run delivered, with its whole body. */
export interface RecordedWebhook {
  type: string;
  /** 1-based: the n-th distinct event of this type the receiver got in the run. */
  ordinal: number;
  payload: unknown;
}

export interface RecordedStep {
  index: number;
  label: string;
  exchange: RecordedExchange | null;
  webhooks: RecordedWebhook[];
  upstream: UpstreamExchange[];
}

export interface ScenarioRecording {
  file: string;
  name: string;
  description: string | null;
  seed: number;
  /** The script as written. */
  script: ScriptStep[];
  steps: RecordedStep[];
}

/** Where each provider's in-process mock is mounted; contract paths are relative to it. */
export function mockPrefix(provider: string): string {
  return `/mocks/${provider}`;
}

/** The address recordings use for the sandbox's own: each replay listens on a random port. */
export const CANONICAL_BASE_URL = 'http://127.0.0.1:4010';

/** The secret path segment of railyard's callback URLs. */
const CALLBACK_TOKEN = /(\/internal\/callbacks\/[a-z-]+\/)[A-Za-z0-9_]+/g;

/**
 * Replaces the run's own base URL in every string, so recordings do not depend on the port, and
 * the callback URLs' secret token, so contracts carry no secret.
 */
function canonical<T>(value: T, baseUrl: string): T {
  if (typeof value === 'string') return value.split(baseUrl).join(CANONICAL_BASE_URL).replace(CALLBACK_TOKEN, `$1${REDACTED}`) as T;
  if (Array.isArray(value)) return value.map((v) => canonical(v, baseUrl)) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v, baseUrl)])) as T;
  return value;
}

/** Loads a scenario file for a recording or a verification; throws with file:line:column problems. */
export function loadScenarioSource(path: string): ScenarioSource {
  return scenarioSourceOf(path, readFileSync(path, 'utf8'));
}

/** A scenario from its text (as a pact file embeds it), named by `path` in any problem it has. */
export function scenarioSourceOf(path: string, text: string): ScenarioSource {
  return { path, scenario: parseScenario(text, path), text };
}

export function scenarioSeed(source: ScenarioSource): number {
  return source.scenario.replay?.seed ?? 1;
}

/** Records a scripted scenario. Throws when a step fails: contracts come from passing scripts only. */
export async function recordScenario(source: ScenarioSource): Promise<ScenarioRecording> {
  const script = source.scenario.script ?? [];
  const seed = scenarioSeed(source);
  const upstream: UpstreamExchange[] = [];
  let calls = 0;
  let base = '';
  const session = await ScenarioSession.open(source, {
    seed,
    receiver: true,
    upstreamTap: {
      beforeCall: () => {
        calls += 1;
      },
      answered: (request: UpstreamRequest, response) => {
        const url = new URL(request.url);
        const prefix = mockPrefix(request.provider);
        const path = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : url.pathname;
        upstream.push(
          canonical(
            {
              provider: request.provider,
              call: calls,
              method: request.method,
              path: path + url.search,
              headers: request.headers,
              body: request.body,
              status: response.status,
              contentType: response.contentType,
              response: response.text,
            },
            base,
          ),
        );
      },
    },
  });
  base = session.baseUrl;
  const recording: ScenarioRecording = { file: source.path, name: source.scenario.name, description: source.scenario.description ?? null, seed, script, steps: [] };
  const seen = new Set<string>();
  const perType = new Map<string, number>();
  try {
    for (let index = 1; index <= script.length; index++) {
      const label = stepLabel(script[index - 1]!, index);
      const upstreamBefore = upstream.length;
      try {
        await session.runStep(index);
      } catch (err) {
        throw new Error(`${source.path}: ${label} failed, so no contract is generated from it: ${(err as Error).message}`);
      }
      const webhooks: RecordedWebhook[] = [];
      for (const w of session.webhooks) {
        if (seen.has(w.id) || !w.verified) continue;
        seen.add(w.id);
        const ordinal = (perType.get(w.type) ?? 0) + 1;
        perType.set(w.type, ordinal);
        webhooks.push({ type: w.type, ordinal, payload: canonical(session.webhookPayload(w.id), base) });
      }
      recording.steps.push({ index, label, exchange: canonical(session.exchange, base), webhooks, upstream: upstream.slice(upstreamBefore) });
    }
  } finally {
    await session.close();
  }
  return recording;
}
