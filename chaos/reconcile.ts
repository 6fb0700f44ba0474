import type { Db } from '../src/store/db.ts';
import { acknowledgedId, errorCode, type Operation } from './client-workload.ts';
import { apiCall } from './recorded-request.ts';

// What the clients were told, held against what the server and its database say. Every finding
// is one line of evidence (key, ids, statuses) so a failing trial can be diagnosed from the report.

export interface Findings {
  lost: string[];
  duplicated: string[];
  orphaned: string[];
  /** Answers >= 500 other than 502 provider_unavailable. */
  serverErrors: string[];
  /** Requests answered 409 idempotency_conflict on a send after the restart, one line per key. */
  conflictsAfterRestart: string[];
  /** How many 409 idempotency_conflict answers those keys got in all. */
  conflictAnswers: number;
  unauthorized: string[];
  /** An answered request re-sent after the restart that did not get the same answer back. */
  replayMismatches: string[];
  /** Idempotency keys not 'done' after settling. */
  inFlightKeys: string[];
  /** Requests that never got an answer, even after the retries. */
  unansweredAtEnd: string[];
  ledger: string[];
  /** Fleet mode: a webhook received twice that no documented at-least-once retry explains. */
  webhookDuplicates: string[];
  /** Fleet mode: evidence that work ran twice: an event emitted twice for one object (a job, or a recovery of a request still running elsewhere), a delivery attempt recorded twice. */
  jobsTwice: string[];
  /**
   * A kill during a clock advance: the advance could not be started or read, the clock went back
   * behind a job that ran, or a job due by the final clock was left waiting.
   */
  advance: string[];
  /** Worth reading, not a failure of the trial. */
  warnings: string[];
}

export function emptyFindings(): Findings {
  return {
    lost: [],
    duplicated: [],
    orphaned: [],
    serverErrors: [],
    conflictsAfterRestart: [],
    conflictAnswers: 0,
    unauthorized: [],
    replayMismatches: [],
    inFlightKeys: [],
    unansweredAtEnd: [],
    ledger: [],
    webhookDuplicates: [],
    jobsTwice: [],
    advance: [],
    warnings: [],
  };
}

export const FAILURE_KINDS = [
  'lost',
  'duplicated',
  'orphaned',
  'serverErrors',
  'conflictsAfterRestart',
  'unauthorized',
  'replayMismatches',
  'inFlightKeys',
  'unansweredAtEnd',
  'ledger',
  'webhookDuplicates',
  'jobsTwice',
  'advance',
] as const satisfies readonly (keyof Findings)[];
export type FindingKind = (typeof FAILURE_KINDS)[number] | 'warnings';

const excerpt = (body: string | undefined, max = 300) => (body === undefined ? '' : body.length > max ? `${body.slice(0, max)}…` : body);
const answered = (op: Operation) => op.attempts.filter((a) => a.status !== undefined);
/** What one request got, send by send: "before-kill:ECONNRESET, retry-after-restart:201 replayed". */
const trail = (op: Operation) => op.attempts.map((a) => `${a.phase}:${a.status ?? a.error}${a.replayed ? ' replayed' : ''}`).join(', ');

/** Every id any client was given as an answer. */
export function givenIds(ops: Operation[]): Map<string, Operation[]> {
  const ids = new Map<string, Operation[]>();
  for (const op of ops) {
    for (const a of op.attempts) {
      const id = acknowledgedId(op.kind, a);
      if (id && !ids.get(id)?.includes(op)) ids.set(id, [...(ids.get(id) ?? []), op]);
    }
  }
  return ids;
}

/** The id of the first acknowledging answer an operation got. */
export function firstAcknowledged(op: Operation): string | undefined {
  for (const a of op.attempts) {
    const id = acknowledgedId(op.kind, a);
    if (id) return id;
  }
  return undefined;
}

/** Checks that need only the clients' own records. */
export function checkAnswers(ops: Operation[], f: Findings): void {
  for (const op of ops) {
    if (op.attempts.length === 0) continue;
    const conflicts = [];
    for (const a of op.attempts) {
      if (a.status === undefined) continue;
      const code = errorCode(a.body);
      if (a.status >= 500 && !(a.status === 502 && code === 'provider_unavailable')) {
        f.serverErrors.push(`key ${op.key} ${op.kind} (${op.label}) ${a.phase} at +${a.at} ms: ${a.status} ${excerpt(a.body)}`);
      }
      if (a.status === 409 && code === 'idempotency_conflict' && a.phase !== 'before-kill') conflicts.push(a);
      if (a.status === 401) f.unauthorized.push(`key ${op.key} ${op.kind} ${a.phase} at +${a.at} ms: 401 ${excerpt(a.body)}`);
    }
    if (conflicts.length) {
      f.conflictAnswers += conflicts.length;
      f.conflictsAfterRestart.push(
        `key ${op.key} ${op.kind} (${op.label}): ${conflicts.length}× 409 idempotency_conflict after the restart (${conflicts[0]!.phase} at +${conflicts[0]!.at} ms first); ` +
          `sends: ${trail(op)}; body ${excerpt(conflicts[0]!.body, 200)}`,
      );
    }
    if (answered(op).length === 0) {
      f.unansweredAtEnd.push(`key ${op.key} ${op.kind} (${op.label}): ${op.attempts.length} sends, none answered (${op.attempts.map((a) => a.error).join('; ')})`);
    }
    // A re-send of an answered request must get the stored answer back, byte for byte: the
    // first real answer (before the kill, or to a retry after the restart) is the reference.
    const original = op.attempts.find((a) => a.status !== undefined && a.phase !== 'replay-sample' && !(a.status === 409 && errorCode(a.body) === 'idempotency_conflict'));
    for (const replay of op.attempts.filter((a) => a.phase === 'replay-sample' && a.status !== undefined)) {
      if (!original) continue;
      const problems: string[] = [];
      if (replay.status !== original.status) problems.push(`status ${original.status} then ${replay.status}`);
      if (replay.body !== original.body) problems.push(`body differs: first ${excerpt(original.body, 200)} then ${excerpt(replay.body, 200)}`);
      if (!replay.replayed) problems.push('no Idempotent-Replayed: true header');
      if (problems.length) f.replayMismatches.push(`key ${op.key} ${op.kind} (${op.label}): ${problems.join('; ')}`);
    }
  }
}

export interface ApiView {
  wallet: { available: number; reserved: number } | null;
  /** Charges and transfers GET /api/v1/transactions lists. */
  listed: Set<string>;
  /** Acknowledged ids GET /api/v1/{charges,transfers}/{id} did not return, with what it said. */
  missing: Map<string, string>;
}

/** Reads what the running server says, before it is stopped. */
export async function checkViaApi(port: number, key: string, ops: Operation[], f: Findings): Promise<ApiView> {
  const wallet = await apiCall(port, key, 'GET', '/api/v1/wallet');
  if (wallet.status !== 200) f.ledger.push(`GET /api/v1/wallet answered ${wallet.status} ${excerpt(wallet.raw)}`);
  const missing = new Map<string, string>();
  for (const [id, owners] of givenIds(ops)) {
    const path = `/api/v1/${owners[0]!.kind === 'charge' ? 'charges' : 'transfers'}/${id}`;
    const res = await apiCall(port, key, 'GET', path);
    if (res.status !== 200 || res.json?.data?.id !== id) missing.set(id, `GET ${path} answered ${res.status} ${excerpt(res.raw, 200)}`);
  }
  const listed = new Set<string>();
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const query: string = `page_size=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await apiCall(port, key, 'GET', `/api/v1/transactions?${query}`);
    if (res.status !== 200) {
      f.warnings.push(`GET /api/v1/transactions?${query} answered ${res.status} ${excerpt(res.raw, 200)}`);
      break;
    }
    for (const item of res.json.data as { id: string; type: string }[]) if (item.type !== 'trade') listed.add(item.id);
    cursor = res.json.meta?.next_cursor ?? null;
    if (!cursor) break;
  }
  return { wallet: wallet.status === 200 ? { available: wallet.json.data.available, reserved: wallet.json.data.reserved } : null, listed, missing };
}

interface ObjectRow {
  id: string;
  kind: 'charge' | 'transfer';
  status: string;
  amount: number;
  fees: number;
  failure_reason: string | null;
  provider: string | null;
  created_at: number;
}

interface KeyRow {
  idempotency_key: string;
  state: string;
  resource_id: string | null;
  response_status: number | null;
  response_body: string | null;
  created_at: number;
}

/** Reads the store directly (SQLite file or PostgreSQL database), after the servers have stopped. */
export async function checkDatabase(db: Db, ops: Operation[], funded: number, api: ApiView, f: Findings): Promise<void> {
  {
    const objects: ObjectRow[] = [
      ...((await db.all("SELECT id, 'charge' AS kind, status, amount, fees, failure_reason, provider, created_at FROM charges WHERE environment = 'test'")) as unknown as ObjectRow[]),
      ...((await db.all("SELECT id, 'transfer' AS kind, status, amount, fees, failure_reason, provider, created_at FROM transfers WHERE environment = 'test'")) as unknown as ObjectRow[]),
    ];
    const byId = new Map(objects.map((o) => [o.id, o]));
    const keys = (await db.all("SELECT idempotency_key, state, resource_id, response_status, response_body, created_at FROM idempotency_keys WHERE environment = 'test'")) as unknown as KeyRow[];
    const keyByName = new Map(keys.map((k) => [k.idempotency_key, k]));
    const keysByResource = new Map<string, KeyRow[]>();
    for (const k of keys) if (k.resource_id) keysByResource.set(k.resource_id, [...(keysByResource.get(k.resource_id) ?? []), k]);
    const given = givenIds(ops);
    const opsByKey = new Map(ops.map((o) => [o.key, o]));

    // Lost: acknowledged, but not in the database or not served by the API.
    for (const [id, owners] of given) {
      const inDb = byId.has(id);
      const viaApi = api.missing.get(id);
      if (inDb && !viaApi) continue;
      f.lost.push(
        `${owners[0]!.kind} ${id}, acknowledged to key ${owners.map((o) => o.key).join(', ')}: ${inDb ? 'in the database' : 'NOT in the database'}; ` +
          `${viaApi ?? 'the API serves it'}; sends: ${owners.map(trail).join(' | ')}`,
      );
    }

    // Orphaned: in the database (or listed by the API), never given to a client.
    const listedOnly = [...api.listed].filter((id) => !byId.has(id) && !given.has(id));
    for (const id of listedOnly) f.orphaned.push(`${id} is listed by GET /api/v1/transactions but is neither in the database nor given to a client`);
    for (const o of objects) {
      if (given.has(o.id)) continue;
      const owners = keysByResource.get(o.id) ?? [];
      const op = owners.length ? opsByKey.get(owners[0]!.idempotency_key) : ops.find((x) => x.kind === o.kind && x.amount === o.amount);
      f.orphaned.push(
        `${o.kind} ${o.id} (${o.status}${o.failure_reason ? `, ${o.failure_reason}` : ''}, amount ${o.amount}${api.listed.has(o.id) ? ', listed by the API' : ''}) was never given to a client; ` +
          `idempotency record: ${owners.length ? owners.map((k) => `${k.idempotency_key} state=${k.state} response=${k.response_status}`).join('; ') : 'none'}; ` +
          `request ${op ? `${op.key} (${op.label}) sends: ${trail(op)}` : '?: no request of ours has this amount'}`,
      );
    }

    // Duplicated, per key: byte-identical sends acknowledged with different ids, or a key whose
    // stored resource is not what its client was told (a later retry would not get that id).
    const flagged = new Set<string>();
    for (const op of ops) {
      const ids = [...new Set(op.attempts.map((a) => acknowledgedId(op.kind, a)).filter((id): id is string => !!id))];
      if (!ids.length) continue;
      const why: string[] = [];
      if (ids.length > 1) why.push(`byte-identical sends were acknowledged with different ids ${ids.join(', ')}`);
      const row = keyByName.get(op.key);
      if (!row) why.push(`acknowledged ${ids[0]} but the key has no idempotency record, so a retry would create another ${op.kind}`);
      else if (row.resource_id !== ids[0]) why.push(`acknowledged ${ids[0]} but the key's idempotency record names ${row.resource_id}`);
      if (why.length) {
        flagged.add(op.key);
        f.duplicated.push(`key ${op.key} (${op.label}): ${why.join('; ')}; sends: ${trail(op)}`);
      }
    }
    // Duplicated, per body: more objects with a body's (unique) amount than keys that sent it.
    const groups = new Map<number, Operation[]>();
    for (const op of ops) groups.set(op.group, [...(groups.get(op.group) ?? []), op]);
    const refusedOutright = (op: Operation) => {
      const statuses = answered(op).map((a) => a.status!);
      return statuses.length > 0 && statuses.every((s) => [400, 401, 403, 422].includes(s));
    };
    for (const members of groups.values()) {
      if (members.some((m) => flagged.has(m.key))) continue; // already reported, key by key
      const { kind, amount, label } = members[0]!;
      const found = objects.filter((o) => o.kind === kind && o.amount === amount);
      const allowed = members.filter((op) => op.attempts.length > 0 && !refusedOutright(op)).length;
      if (found.length > allowed) {
        f.duplicated.push(
          `${found.length} ${kind}s carry the body of ${label} (amount ${amount}) but only ${allowed} key(s) could have made one: ` +
            `objects ${found.map((o) => `${o.id}(${o.status})`).join(', ')}; keys ${members.map((m) => `${m.key}: ${trail(m)}`).join(' | ')}`,
        );
      }
    }

    // Keys left in flight.
    for (const k of keys) {
      if (k.state !== 'done') {
        const op = opsByKey.get(k.idempotency_key);
        const res = k.resource_id ? byId.get(k.resource_id) : undefined;
        f.inFlightKeys.push(
          `db: idempotency key ${k.idempotency_key} is ${k.state} (resource ${k.resource_id}${res ? `, ${res.status}` : ', not in the database'}); ` + `its client got: ${op ? trail(op) : '?'}`,
        );
      }
    }

    await checkLedger(db, objects, funded, api, f);

    const pending = objects.filter((o) => o.status === 'pending' || o.status === 'pending_provider');
    if (pending.length)
      f.warnings.push(
        `${pending.length} object(s) still pending after settling: ${pending
          .slice(0, 10)
          .map((o) => o.id)
          .join(', ')}`,
      );
    const failedJobs = (await db.all("SELECT kind, last_error, COUNT(*) AS n FROM jobs WHERE state = 'failed' GROUP BY kind, last_error")) as { kind: string; last_error: string; n: number }[];
    for (const j of failedJobs) f.warnings.push(`${j.n} ${j.kind} job(s) failed: ${excerpt(j.last_error, 200)}`);
  }
}

/**
 * The ledger: every journal nets to zero per currency; the wallet (from the API and from the
 * postings) equals what the records imply: funded + successful charges' (amount - fees) -
 * pending and successful transfers' (amount + fees) available, pending transfers' (amount + fees)
 * reserved. Late successes of abandoned providers go through suspense and are reversed, so they
 * never touch the wallet and suspense nets to zero.
 */
async function checkLedger(db: Db, objects: ObjectRow[], funded: number, api: ApiView, f: Findings): Promise<void> {
  const unbalanced = (await db.all('SELECT journal_id, currency, SUM(amount) AS net FROM ledger_postings GROUP BY journal_id, currency HAVING SUM(amount) <> 0')) as {
    journal_id: string;
    currency: string;
    net: number;
  }[];
  for (const u of unbalanced) f.ledger.push(`journal ${u.journal_id} nets to ${u.net} ${u.currency}, not 0`);
  const empty = (await db.all('SELECT j.id, j.kind FROM ledger_journals j LEFT JOIN ledger_postings p ON p.journal_id = j.id WHERE p.seq IS NULL')) as { id: string; kind: string }[];
  for (const e of empty) f.ledger.push(`journal ${e.id} (${e.kind}) has no postings`);

  const balance = async (like: string) =>
    ((await db.get("SELECT COALESCE(SUM(amount), 0) AS b FROM ledger_postings WHERE environment = 'test' AND currency = 'GHS' AND account LIKE ?", [like])) as { b: number }).b;
  const available = await balance('merchant:%:wallet:available');
  const reserved = await balance('merchant:%:wallet:reserved');
  const fundedInDb = -(await balance('external:sandbox:funding'));
  const suspense = await balance('suspense:late_settlements');

  let expectedAvailable = funded;
  let expectedReserved = 0;
  for (const o of objects) {
    if (o.kind === 'charge' && o.status === 'success') expectedAvailable += o.amount - o.fees;
    if (o.kind === 'transfer' && (o.status === 'pending' || o.status === 'success')) expectedAvailable -= o.amount + o.fees;
    if (o.kind === 'transfer' && o.status === 'pending') expectedReserved += o.amount + o.fees;
  }
  if (fundedInDb !== funded) f.ledger.push(`sandbox funding in the ledger is ${fundedInDb}, the harness funded ${funded}`);
  if (available !== expectedAvailable) f.ledger.push(`wallet available from postings is ${available}; the records imply ${expectedAvailable} (off by ${available - expectedAvailable})`);
  if (reserved !== expectedReserved) f.ledger.push(`wallet reserved from postings is ${reserved}; the records imply ${expectedReserved} (off by ${reserved - expectedReserved})`);
  if (api.wallet && (api.wallet.available !== expectedAvailable || api.wallet.reserved !== expectedReserved)) {
    f.ledger.push(`GET /api/v1/wallet said available ${api.wallet.available}, reserved ${api.wallet.reserved}; the records imply ${expectedAvailable}, ${expectedReserved}`);
  }
  if (available < 0 || reserved < 0) f.ledger.push(`the wallet is negative: available ${available}, reserved ${reserved}`);
  if (suspense !== 0) f.ledger.push(`suspense:late_settlements holds ${suspense}: a late success was not reversed`);

  // Each object's journals match its final state: one settlement at most, a reservation per
  // transfer, a refund exactly when it failed.
  const journals = (await db.all("SELECT ref_id, kind, COUNT(*) AS n FROM ledger_journals WHERE ref_type IN ('charge', 'transfer') GROUP BY ref_id, kind")) as {
    ref_id: string;
    kind: string;
    n: number;
  }[];
  const count = new Map<string, number>();
  for (const j of journals) count.set(`${j.ref_id} ${j.kind}`, j.n);
  const n = (id: string, kind: string) => count.get(`${id} ${kind}`) ?? 0;
  const effects = (await db.all(
    `SELECT j.ref_id, CASE WHEN p.account LIKE '%:wallet:available' THEN 'available' ELSE 'reserved' END AS side, SUM(p.amount) AS net
       FROM ledger_journals j JOIN ledger_postings p ON p.journal_id = j.id
       WHERE j.ref_type IN ('charge', 'transfer') AND p.currency = 'GHS' AND (p.account LIKE 'merchant:%:wallet:available' OR p.account LIKE 'merchant:%:wallet:reserved')
       GROUP BY j.ref_id, side`,
  )) as { ref_id: string; side: string; net: number }[];
  const walletEffect = new Map(effects.map((e) => [`${e.ref_id} ${e.side}`, e.net]));
  for (const o of objects) {
    const expected: Record<string, number> =
      o.kind === 'charge'
        ? { 'charge.settled': o.status === 'success' ? 1 : 0 }
        : { 'transfer.reserved': 1, 'transfer.settled': o.status === 'success' ? 1 : 0, 'transfer.refunded': o.status === 'failed' ? 1 : 0 };
    for (const [kind, want] of Object.entries(expected)) {
      if (n(o.id, kind) !== want) f.ledger.push(`${o.kind} ${o.id} is ${o.status} but has ${n(o.id, kind)} ${kind} journal(s), expected ${want}`);
    }
    // What this object did to the wallet, from its own journals, against what its state implies.
    const total = o.amount + o.fees;
    const want =
      o.kind === 'charge'
        ? { available: o.status === 'success' ? o.amount - o.fees : 0, reserved: 0 }
        : { available: o.status === 'failed' ? 0 : -total, reserved: o.status === 'pending' ? total : 0 };
    const got = { available: walletEffect.get(`${o.id} available`) ?? 0, reserved: walletEffect.get(`${o.id} reserved`) ?? 0 };
    if (got.available !== want.available || got.reserved !== want.reserved) {
      f.ledger.push(
        `${o.kind} ${o.id} is ${o.status} (amount ${o.amount}, fees ${o.fees}): its journals move the wallet by available ${got.available}, reserved ${got.reserved}; expected ${want.available}, ${want.reserved}`,
      );
    }
    if (n(o.id, `${o.kind}.late_success`) !== n(o.id, `${o.kind}.late_success_reversed`)) {
      f.ledger.push(`${o.kind} ${o.id} has ${n(o.id, `${o.kind}.late_success`)} late success journal(s) but ${n(o.id, `${o.kind}.late_success_reversed`)} reversal(s)`);
    }
  }
}
