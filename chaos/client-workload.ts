import { signatureHeaders } from '../src/kernel/sign-request.ts';
import { recordRequest, sendRecorded, type RecordedRequest } from './recorded-request.ts';
import type { Rng } from './seeded-random.ts';
import { sleep } from './spawn-server.ts';

// The merchant side: many concurrent clients creating charges and transfers, each with its own
// Idempotency-Key, some pairs with byte-identical bodies under different keys (paying the same
// person the same amount twice is legitimate and must create two objects).

export type OperationKind = 'charge' | 'transfer';
export type Phase =
  | 'before-kill'
  | 'retry-after-restart'
  | 'fresh-after-restart'
  | 'replay-sample'
  // Fleet mode (chaos/run-fleet-trial.ts): a request's first send, and its re-sends after no answer or a 409.
  | 'first-send'
  | 'retry';

/**
 * Amounts are `n * AMOUNT_STRIDE + group`, so every body group has its own amount and the objects
 * in the database can be attributed to the request body that made them, even without a key.
 */
export const AMOUNT_STRIDE = 10_000;
export const MAX_GROUPS = AMOUNT_STRIDE - 1;

export interface Operation {
  index: number;
  /** Operations with the same group send byte-identical bodies (under different keys). */
  group: number;
  kind: OperationKind;
  path: '/api/v1/charges' | '/api/v1/transfers';
  /** For people: what the body exercises, e.g. "transfer momo 0551234990". */
  label: string;
  amount: number;
  body: string;
  key: string;
  /** Set when first sent; every later send of this operation is these exact bytes. */
  request?: RecordedRequest;
  attempts: Attempt[];
}

export interface Attempt {
  phase: Phase;
  /** ms since the trial started. */
  at: number;
  ms: number;
  status?: number;
  body?: string;
  replayed?: boolean;
  error?: string;
}

const MOMO_NUMBERS = [
  { number: '551234987', weight: 4, what: 'success' },
  { number: '551234988', weight: 2, what: 'insufficient funds' },
  { number: '551234989', weight: 2, what: 'timeout, failover, success' },
  { number: '551234990', weight: 2, what: 'timeout, late success at the primary' },
] as const;
const BANK_ACCOUNTS = [
  { account: '1000000001', name: 'Ama Owusu', weight: 3 },
  { account: '1000000002', name: 'Yaw Asante', weight: 1 },
  { account: '1000000003', name: 'Kofi Mensah', weight: 1 },
] as const;

function weighted<T extends { weight: number }>(rng: Rng, items: readonly T[]): T {
  let roll = rng.int(
    1,
    items.reduce((s, i) => s + i.weight, 0),
  );
  for (const item of items) {
    roll -= item.weight;
    if (roll <= 0) return item;
  }
  return items[items.length - 1]!;
}

function msisdnForm(rng: Rng, national: string): string {
  return rng.pick([`0${national}`, `233${national}`, `+233${national}`]);
}

/**
 * The operations of one trial, in sending order. `fundAmount` sizes the deliberately oversized
 * transfers, which must be refused (422) and leave nothing behind.
 */
export function planWorkload(rng: Rng, count: number, trial: number, fundAmount: number): Operation[] {
  const ops: Operation[] = [];
  let group = 0;
  while (ops.length < count && group < MAX_GROUPS) {
    group++;
    const roll = rng.next();
    let kind: OperationKind;
    let label: string;
    let payload: Record<string, unknown>;
    if (roll < 0.4) {
      const n = weighted(rng, MOMO_NUMBERS);
      const amount = rng.int(1, 6) * AMOUNT_STRIDE + group;
      kind = 'charge';
      label = `charge momo 0${n.number} (${n.what})`;
      payload = { amount, currency: 'GHS', channel: 'momo', msisdn: msisdnForm(rng, n.number) };
    } else if (roll < 0.75) {
      const n = weighted(rng, MOMO_NUMBERS);
      const amount = rng.int(1, 3) * AMOUNT_STRIDE + group;
      kind = 'transfer';
      label = `transfer momo 0${n.number} (${n.what})`;
      payload = { amount, currency: 'GHS', channel: 'momo', msisdn: msisdnForm(rng, n.number) };
    } else if (roll < 0.95) {
      const a = weighted(rng, BANK_ACCOUNTS);
      const amount = rng.int(1, 3) * AMOUNT_STRIDE + group;
      kind = 'transfer';
      label = `transfer bank GCB ${a.account}`;
      payload = { amount, currency: 'GHS', channel: 'bank', account_number: a.account, bank_code: '040100', bank_account_name: a.name };
    } else {
      // More than the wallet ever holds: 422 insufficient_funds, nothing stored, nothing created.
      const amount = (Math.ceil(fundAmount / AMOUNT_STRIDE) + rng.int(1, 9)) * AMOUNT_STRIDE + group;
      kind = 'transfer';
      label = 'transfer momo 0551234987 larger than the wallet';
      payload = { amount, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };
    }
    const body = JSON.stringify(payload);
    const copies = rng.chance(0.25) && ops.length + 2 <= count ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const index = ops.length;
      ops.push({
        index,
        group,
        kind,
        path: kind === 'charge' ? '/api/v1/charges' : '/api/v1/transfers',
        label: copies === 2 ? `${label}, twin ${c + 1}/2` : label,
        amount: payload.amount as number,
        body,
        key: `chaos-t${trial}-op${index}-g${group}`,
        attempts: [],
      });
    }
  }
  // Twins end up near each other (sent concurrently) or far apart (sent in turn).
  return rng.sample(ops, ops.length).map((op, i) => ({ ...op, index: i }));
}

/** Records the exact request the first time an operation is sent; transfers are signed now, in real time. */
export function recordOperation(op: Operation, port: number, key: string, secret: string): RecordedRequest {
  if (op.request) return op.request;
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, 'Idempotency-Key': op.key };
  if (op.kind === 'transfer') {
    const signed = signatureHeaders(secret, Date.now(), { method: 'POST', pathAndQuery: op.path, idempotencyKey: op.key, rawBody: op.body });
    headers['X-Service-Timestamp'] = signed['x-service-timestamp'];
    headers['X-Service-Signature'] = signed['x-service-signature'];
  }
  op.request = recordRequest(port, 'POST', op.path, op.body, headers);
  return op.request;
}

export function errorCode(body: string | undefined): string | undefined {
  try {
    return JSON.parse(body ?? '')?.error?.code;
  } catch {
    return undefined;
  }
}

/**
 * The object id an answer acknowledges: a 201's data.id, or the id a 502 provider_unavailable
 * names in error.details (the object exists, failed). Anything else acknowledges nothing.
 */
export function acknowledgedId(kind: OperationKind, attempt: Attempt): string | undefined {
  if (attempt.status === undefined || attempt.body === undefined) return undefined;
  try {
    const json = JSON.parse(attempt.body);
    if (attempt.status === 201) return typeof json?.data?.id === 'string' ? json.data.id : undefined;
    if (attempt.status === 502 && json?.error?.code === 'provider_unavailable') {
      const id = json.error.details?.[`${kind}_id`];
      return typeof id === 'string' ? id : undefined;
    }
  } catch {
    // Not JSON: acknowledges nothing.
  }
  return undefined;
}

export interface ClientSettings {
  port: number;
  clients: number;
  key: string;
  secret: string;
  requestTimeoutMs: number;
  /** Where attempt times are measured from. */
  t0: number;
}

export async function attempt(op: Operation, phase: Phase, s: ClientSettings): Promise<Attempt> {
  const request = recordOperation(op, s.port, s.key, s.secret);
  const at = Math.round(performance.now() - s.t0);
  const outcome = await sendRecorded(s.port, request, s.requestTimeoutMs);
  const record: Attempt = outcome.ok
    ? { phase, at, ms: outcome.ms, status: outcome.status, body: outcome.body, replayed: outcome.headers['idempotent-replayed'] === 'true' }
    : { phase, at, ms: outcome.ms, error: outcome.error };
  op.attempts.push(record);
  return record;
}

/**
 * Phase 1: the clients work through the plan until the kill. When `killAfterStarted` requests
 * have been sent, the signal goes `killDelayMs` later (so it lands on requests in flight). Clients
 * keep sending, as real ones would, until the server is gone or refuses them (during a graceful
 * SIGTERM drain new connections are refused while requests in flight still finish). Returns how
 * many operations were started.
 */
export async function runUntilKill(
  ops: Operation[],
  s: ClientSettings & { killAfterStarted: number; killDelayMs: number; deadlineMs: number; kill: () => Promise<void> },
): Promise<{ started: number }> {
  let next = 0;
  let signalled = false;
  let stopping = false;
  let killing: Promise<void> | null = null;
  const deadline = Date.now() + s.deadlineMs;
  const fireKill = () => {
    killing ??= (async () => {
      await sleep(s.killDelayMs);
      signalled = true;
      await s.kill();
      stopping = true;
    })();
  };
  const client = async () => {
    while (!stopping && next < ops.length && Date.now() < deadline) {
      const op = ops[next++]!;
      if (next >= s.killAfterStarted) fireKill();
      const a = await attempt(op, 'before-kill', s);
      if (signalled && a.status === undefined) stopping = true;
    }
  };
  await Promise.all(Array.from({ length: s.clients }, client));
  fireKill(); // the plan or the deadline ran out first: kill anyway, the trial is about the restart
  await killing;
  return { started: next };
}

export interface AfterRestartWork {
  /** Unanswered before the kill: re-sent byte-identically until they get an answer. */
  retries: Operation[];
  /** Never sent before the kill: sent now, for the first time, to the restarted server. */
  fresh: Operation[];
  /** Answered (acknowledged) before the kill: re-sent byte-identically, must replay the same answer. */
  sample: Operation[];
}

export interface RetryLimits {
  /** Most sends of one request that got no answer at all. */
  maxNetworkRetries: number;
  /** Most sends of one request answered 409 idempotency_conflict (each one is counted as a problem). */
  maxConflictRetries: number;
  deadlineMs: number;
}

/**
 * Phase 2, against the restarted server, all interleaved over the same clients. A request is sent
 * again, byte for byte, after no answer (bounded) or after 409 idempotency_conflict (bounded: the
 * key should not be in flight any more, but the final answer is still wanted for reconciliation).
 */
export async function runAfterRestart(work: AfterRestartWork, s: ClientSettings, limits: RetryLimits): Promise<void> {
  const deadline = Date.now() + limits.deadlineMs;
  const tasks: { op: Operation; phase: Phase }[] = [
    ...work.retries.map((op) => ({ op, phase: 'retry-after-restart' as const })),
    ...work.fresh.map((op) => ({ op, phase: 'fresh-after-restart' as const })),
    ...work.sample.map((op) => ({ op, phase: 'replay-sample' as const })),
  ];
  let next = 0;
  const untilAnswered = async (op: Operation, phase: Phase) => {
    let network = 0;
    let conflicts = 0;
    while (Date.now() < deadline) {
      const a = await attempt(op, phase, s);
      if (a.status === undefined) {
        if (++network >= limits.maxNetworkRetries) return;
        await sleep(Math.min(2_000, 100 * 2 ** network));
        continue;
      }
      if (a.status === 409 && errorCode(a.body) === 'idempotency_conflict') {
        if (++conflicts >= limits.maxConflictRetries) return;
        await sleep(500 * conflicts);
        continue;
      }
      return;
    }
  };
  const client = async () => {
    while (next < tasks.length && Date.now() < deadline) {
      const task = tasks[next++]!;
      await untilAnswered(task.op, task.phase);
    }
  };
  await Promise.all(Array.from({ length: s.clients }, client));
}
