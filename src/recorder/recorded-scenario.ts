import { stringify } from 'yaml';
import { normaliseMsisdn, toLocalMsisdn } from '../kernel/msisdn.ts';
import type { CallbackPlan } from '../scenarios/scenario-types.ts';
import type { ScenarioFile } from '../scenarios/scenario-schema.ts';
import type { RecordedCallback, RecordedExchange } from './recording-proxy.ts';
import type { Redactor } from '../kernel/redactor.ts';
import type { AnsweredBehaviour, RecordedIdentities, RecordedKey, RecordedOperation, ReportedOutcome, WireProfile } from '../providers/wire-profile.ts';
import { parseScenario } from '../railyard-scenarios.ts';

// Turns what the proxy saw into scenario rules: one rule per number or account, saying for each
// operation what the upstream did, call by call. References, timestamps and the upstream's ids are
// left out: the mocks generate fresh ones on every run, so nothing recorded is frozen.

export interface RecordingInput {
  provider: string;
  profile: WireProfile;
  exchanges: readonly RecordedExchange[];
  callbacks: readonly RecordedCallback[];
  redactor: Redactor;
  /** Where the recording was made, for the file's header (credentials in it are dropped). */
  upstream: string;
  /** When, in ISO 8601, for the header. */
  recordedAt: string;
  /** The upstream's test identities mapped back: rules name the merchant's numbers, the log both. */
  identities?: RecordedIdentities | undefined;
}

interface RecordedBehaviour extends AnsweredBehaviour {
  latency_ms?: number;
  callback?: CallbackPlan;
  extra_callbacks?: CallbackPlan[];
}

interface Transaction {
  operation: RecordedOperation;
  key: RecordedKey;
  references: Set<string>;
  exchange: RecordedExchange;
  behaviour: RecordedBehaviour;
  callbacks: { seconds: number; outcome: ReportedOutcome }[];
  polled?: { seconds: number; outcome: ReportedOutcome };
}

const MAX_LATENCY_MS = 60_000;
const TAKES_CALLBACK = new Set(['accept', 'timeout', 'malformed', 'reset']);

/** Seconds to a tenth: timings are observed on a real network, not exact. */
function seconds(ms: number): number {
  return Math.max(0, Math.round(ms / 100) / 10);
}

function answered(exchange: RecordedExchange, profile: WireProfile, operation: RecordedOperation): RecordedBehaviour {
  switch (exchange.ending) {
    case 'abandoned':
      return { respond: 'timeout' };
    case 'reset':
    case 'unreachable':
      return { respond: 'reset' };
    case 'answered': {
      const { respond, ...rest } = profile.answerOf(operation, exchange.status!, exchange.body ?? '');
      const latency = Math.min(MAX_LATENCY_MS, Math.round(exchange.endedAt - exchange.startedAt));
      return { respond, ...(latency > 0 ? { latency_ms: latency } : {}), ...rest };
    }
  }
}

function overlaps(references: Set<string>, outcome: ReportedOutcome): boolean {
  return outcome.references.some((r) => references.has(r));
}

/** The callbacks a transaction got, as the scenario's callback, duplicate and extra callbacks. */
function callbackPlans(tx: Transaction): Pick<RecordedBehaviour, 'callback' | 'extra_callbacks'> {
  const final = tx.callbacks.filter((c) => c.outcome.status !== 'pending');
  const plan = (c: { seconds: number; outcome: ReportedOutcome }): CallbackPlan => ({
    after_seconds: c.seconds,
    status: c.outcome.status as 'success' | 'failed',
    ...(c.outcome.status === 'failed' && c.outcome.reason ? { reason: c.outcome.reason } : {}),
  });
  if (final.length === 0) {
    // Settled without calling back: only the status poll found out.
    const polled = tx.polled;
    return polled && polled.outcome.status !== 'pending' ? { callback: { ...plan(polled), drop: true } } : {};
  }
  const [first, ...rest] = final;
  const callback = plan(first!);
  const sameAsFirst = (c: (typeof rest)[number]) => c.outcome.status === first!.outcome.status && c.outcome.reason === first!.outcome.reason;
  const duplicate = rest.find(sameAsFirst);
  const extras = rest.filter((c) => c !== duplicate);
  return {
    callback: duplicate ? { ...callback, duplicate: true, duplicate_after_seconds: seconds((duplicate.seconds - first!.seconds) * 1000) } : callback,
    ...(extras.length ? { extra_callbacks: extras.map(plan) } : {}),
  };
}

function keyLabel(key: RecordedKey): string | undefined {
  if (key.msisdn) {
    const normalised = normaliseMsisdn(key.msisdn);
    return normalised ? toLocalMsisdn(normalised) : key.msisdn;
  }
  if (key.account_number) return key.bank_code ? `${key.bank_code}/${key.account_number}` : key.account_number;
  return undefined;
}

function matchOf(key: RecordedKey): Record<string, string> {
  if (key.msisdn) return { msisdn: keyLabel(key)! };
  return { ...(key.bank_code ? { bank_code: key.bank_code } : {}), account_number: key.account_number! };
}

/** Equal but for latency: a sequence of such behaviours says no more than one of them. */
function sameBehaviour(a: RecordedBehaviour, b: RecordedBehaviour): boolean {
  const { latency_ms: _a, ...restA } = a;
  const { latency_ms: _b, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}

function collapse(sequence: RecordedBehaviour[]): RecordedBehaviour | RecordedBehaviour[] {
  if (sequence.every((b) => sameBehaviour(b, sequence[0]!))) {
    const slowest = Math.max(0, ...sequence.map((b) => b.latency_ms ?? 0));
    const { latency_ms: _ignored, respond, ...rest } = sequence[0]!;
    return { respond, ...(slowest > 0 ? { latency_ms: slowest } : {}), ...rest };
  }
  return sequence;
}

/** The transactions the exchanges began, with their callbacks and polls attached. */
function transactionsOf(input: RecordingInput): Transaction[] {
  const txs: Transaction[] = [];
  const polls: { exchange: RecordedExchange; outcome: ReportedOutcome }[] = [];
  for (const [index, exchange] of input.exchanges.entries()) {
    const call = input.profile.classify(exchange.request, input.exchanges.slice(0, index));
    if (call.kind === 'initiation') {
      const key = input.identities ? input.identities.merchantKey(call.key) : call.key;
      txs.push({ operation: call.operation, key, references: new Set(call.references), exchange, behaviour: answered(exchange, input.profile, call.operation), callbacks: [] });
    } else if (call.kind === 'status' && exchange.ending === 'answered') {
      const outcome = input.profile.polledOutcome(exchange.status!, exchange.body ?? '');
      if (outcome) polls.push({ exchange, outcome: { ...outcome, references: [...call.references, ...outcome.references] } });
    }
  }
  // The latest transaction with a shared reference that began before: a resumed call repeats a reference.
  const owner = (outcome: ReportedOutcome, at: number) => txs.filter((t) => t.exchange.startedAt <= at && overlaps(t.references, outcome)).at(-1);
  for (const callback of input.callbacks) {
    const outcome = input.profile.callbackOutcome(callback.body);
    const tx = outcome && owner(outcome, callback.receivedAt);
    if (tx) tx.callbacks.push({ seconds: seconds(callback.receivedAt - tx.exchange.startedAt), outcome });
  }
  for (const poll of polls) {
    const tx = owner(poll.outcome, poll.exchange.startedAt);
    if (tx && (!tx.polled || tx.polled.outcome.status === 'pending')) tx.polled = { seconds: seconds(poll.exchange.endedAt - tx.exchange.startedAt), outcome: poll.outcome };
  }
  for (const tx of txs) {
    if (tx.operation !== 'resolve' && TAKES_CALLBACK.has(tx.behaviour.respond ?? 'accept')) Object.assign(tx.behaviour, callbackPlans(tx));
  }
  return txs;
}

/** A path as the log shows it: the transaction's references become placeholders. */
function logPath(path: string, txs: readonly Transaction[]): string {
  let out = path;
  for (const tx of txs) for (const reference of tx.references) if (reference.length >= 6) out = out.split(encodeURIComponent(reference)).join('{reference}');
  return out;
}

function describeEnding(exchange: RecordedExchange): string {
  const ms = Math.round(exchange.endedAt - exchange.startedAt);
  switch (exchange.ending) {
    case 'answered':
      return `${exchange.status} in ${ms} ms`;
    case 'abandoned':
      return `no answer: railyard gave up after ${ms} ms`;
    case 'reset':
      return `connection cut after ${ms} ms`;
    case 'unreachable':
      return 'upstream unreachable';
  }
}

/** The upstream's URL without credentials or query: it goes into the file's header. */
function safeUpstream(upstream: string): string {
  try {
    const url = new URL(upstream);
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return '(unreadable URL)';
  }
}

export interface RecordedScenario {
  scenario: ScenarioFile;
  /** The YAML text, header comments included, redacted. */
  text: string;
  rules: number;
}

/** The scenario a recording amounts to, as YAML that the loader accepts. */
export function buildRecordedScenario(input: RecordingInput, file = 'recording.yaml'): RecordedScenario {
  const txs = transactionsOf(input);
  const groups = new Map<string, { key: RecordedKey; byOperation: Map<RecordedOperation, RecordedBehaviour[]> }>();
  const unkeyed: Transaction[] = [];
  for (const tx of txs) {
    const label = keyLabel(tx.key);
    if (!label) {
      unkeyed.push(tx);
      continue;
    }
    const group = groups.get(label) ?? { key: tx.key, byOperation: new Map() };
    groups.set(label, group);
    const sequence = group.byOperation.get(tx.operation) ?? [];
    sequence.push(tx.behaviour);
    group.byOperation.set(tx.operation, sequence);
  }
  const rules = [...groups].map(([label, group]) => ({
    name: `recorded ${input.provider}: ${label}`,
    match: matchOf(group.key),
    ...Object.fromEntries((['resolve', 'collect', 'payout'] as const).filter((op) => group.byOperation.has(op)).map((op) => [op, { [input.provider]: collapse(group.byOperation.get(op)!) }])),
  }));
  const document = {
    version: 1,
    name: `recorded-${input.provider}`,
    description: `Recorded from ${input.provider} at ${safeUpstream(input.upstream)} on ${input.recordedAt}`,
    rules,
  };
  const header = [
    `# Recorded by \`railyard record --provider ${input.provider}\` on ${input.recordedAt}.`,
    '# Each rule says what the upstream did for one number or account, call by call; callback',
    '# delays are seconds after the call reached the upstream. Credentials are redacted, and',
    '# references and ids are left to the mocks to generate afresh. What crossed the proxy:',
    ...input.exchanges.map((e) => {
      const mapped = input.identities?.describe(e.request);
      return `#   ${e.request.method} ${logPath(e.request.path.split('?')[0]!, txs)} -> ${describeEnding(e)}${mapped ? ` (${mapped})` : ''}`;
    }),
    ...input.callbacks.map((c) => `#   callback ${c.method}: ${input.profile.callbackOutcome(c.body)?.status ?? 'unreadable'} -> railyard answered ${c.forwardedStatus ?? 'nothing'}`),
    ...(unkeyed.length ? [`# ${unkeyed.length} call(s) named no number or account and made no rule.`] : []),
    '',
  ];
  const text = input.redactor.text(header.join('\n') + stringify(document, { lineWidth: 0 }));
  // What is written must load: a recording that cannot be replayed is no recording.
  const scenario = parseScenario(text, file);
  return { scenario, text, rules: rules.length };
}
