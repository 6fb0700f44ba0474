// What one request reads (docs/architecture.md, "What one request reads"): the statements each
// kind of request makes the store run, counted per request on SQLite and on PostgreSQL. A mock
// request costs the same however many transactions the mock's books hold, and no start-up read
// grows with them either: nothing is O(history).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp, type Railyard } from '../../src/app.ts';
import { signRequest } from '../../src/kernel/sign-request.ts';
import { MockTransactionRepository } from '../../src/store/repositories/mock-transaction-repository.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';
import type { Store } from '../../src/store/db.ts';
import { StatementCounter, type RequestStatements, type SharedWrite, type Statement } from '../support/statement-counter.ts';
import { SANDBOX_SCENARIOS } from '../support/test-sandbox.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);

const dirs: string[] = [];
const running: { ry: Railyard; server: Server }[] = [];
afterEach(async () => {
  for (const { ry, server } of running.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
    await ry.close();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const RULES = loadScenarios([SANDBOX_SCENARIOS]).rules;

const STORES = [
  {
    name: 'SQLite',
    async database() {
      const dir = mkdtempSync(join(tmpdir(), 'railyard-statements-'));
      dirs.push(dir);
      return join(dir, 'railyard.db');
    },
  },
  { name: 'PostgreSQL', database: async () => (await postgres()).createDatabase() },
] as const;

/**
 * The requests inspector's write on PostgreSQL: the entries it carries. Entries answered while one
 * is on its way go together in the next, sent in whichever request's turn; each request is counted
 * the one statement it makes alone.
 */
const inspectorEntries: SharedWrite = (sql, params) =>
  sql.includes('INSERT INTO request_log')
    ? (JSON.parse(String(params[2])) as { entry: string }[]).map((e) => {
        const { method, path } = JSON.parse(e.entry) as { method: string; path: string };
        return { method, path };
      })
    : undefined;

/** railyard on `db`, each request served in its own counting scope. */
async function serve(db: string) {
  const counter = new StatementCounter(inspectorEntries);
  const config = buildConfig({ db, clock: 'virtual', seed: 7, log_requests: false, rails: { timeout_ms: 2_000, max_hold_ms: 3_000, default_callback_seconds: 3 } });
  const ry = await createApp(config, { rules: RULES, wrapStore: counter.wrapStore });
  const server = createServer(counter.listener(ry.app));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ry.setBaseUrl(base);
  running.push({ ry, server });
  const providers = ry.config.providers;
  const mtn = providers['mtn-momo'];
  const hubtel = providers.hubtel;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
  };
  let keys = 0;
  /** An API call with the sandbox key; a POST gets a fresh Idempotency-Key and a signature. */
  const api = (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${ry.sandbox.key}`, 'Content-Type': 'application/json' };
    const raw = body === undefined ? undefined : JSON.stringify(body);
    if (method === 'POST') {
      const idempotencyKey = `statements-${++keys}`;
      const timestamp = String(Math.floor(ry.wallClock.now() / 1000));
      headers['Idempotency-Key'] = idempotencyKey;
      headers['X-Service-Timestamp'] = timestamp;
      headers['X-Service-Signature'] = signRequest(ry.sandbox.signingSecret, timestamp, { method, pathAndQuery: path, idempotencyKey, rawBody: raw ?? '' });
    }
    return call(path, { method, headers, ...(raw === undefined ? {} : { body: raw }) });
  };
  const hubtelAuth = `Basic ${Buffer.from(`${hubtel.client_id}:${hubtel.client_secret}`).toString('base64')}`;
  let mtnToken: string | undefined;
  const mtnHeaders = async () => {
    mtnToken ??= (
      await call('/mocks/mtn-momo/collection/token', {
        method: 'POST',
        headers: { 'Ocp-Apim-Subscription-Key': mtn.collection_subscription_key, Authorization: `Basic ${Buffer.from(`${mtn.api_user}:${mtn.api_key}`).toString('base64')}` },
      })
    ).body.access_token as string;
    return { 'Ocp-Apim-Subscription-Key': mtn.collection_subscription_key, Authorization: `Bearer ${mtnToken}`, 'X-Target-Environment': mtn.target_environment };
  };
  let references = 0;
  return {
    ry,
    counter,
    api,
    /** MTN requesttopay, then its status: the statements of each. */
    async mtnRequestToPay(): Promise<{ take: RequestStatements; status: RequestStatements }> {
      const reference = `00000000-0000-4000-8000-${String(++references).padStart(12, '0')}`;
      const headers = { ...(await mtnHeaders()), 'X-Reference-Id': reference, 'Content-Type': 'application/json' };
      const body = { amount: '10', currency: 'GHS', externalId: 'x1', payer: { partyIdType: 'MSISDN', partyId: '233551234987' }, payerMessage: 'm', payeeNote: 'n' };
      expect((await call('/mocks/mtn-momo/collection/v1_0/requesttopay', { method: 'POST', headers, body: JSON.stringify(body) })).status).toBe(202);
      const take = await counter.last('POST', '/mocks/mtn-momo/collection/v1_0/requesttopay');
      expect((await call(`/mocks/mtn-momo/collection/v1_0/requesttopay/${reference}`, { headers: await mtnHeaders() })).status).toBe(200);
      return { take, status: await counter.last('GET', `/mocks/mtn-momo/collection/v1_0/requesttopay/${reference}`) };
    },
    /** Hubtel receive, then its status looked up by Hubtel's own transaction id. */
    async hubtelReceive(): Promise<{ take: RequestStatements; status: RequestStatements }> {
      const body = {
        CustomerMsisdn: '233551234987',
        Channel: 'mtn-gh',
        Amount: 1,
        PrimaryCallbackUrl: `${base}/nowhere`,
        Description: 'statements',
        ClientReference: `cr${++references}`,
      };
      const receivePath = `/mocks/hubtel/rmp/merchantaccount/merchants/${hubtel.pos_sales_id}/receive/mobilemoney`;
      const taken = await call(receivePath, { method: 'POST', headers: { Authorization: hubtelAuth, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect(taken.status).toBe(200);
      const take = await counter.last('POST', receivePath);
      const statusPath = `/mocks/hubtel/txnstatus/transactions/${hubtel.pos_sales_id}/status`;
      const status = await call(`${statusPath}?hubtelTransactionId=${taken.body.Data.TransactionId}`, { headers: { Authorization: hubtelAuth } });
      expect(status.body.data).toMatchObject({ clientReference: body.ClientReference });
      return { take, status: await counter.last('GET', statusPath) };
    },
  };
}

type Served = Awaited<ReturnType<typeof serve>>;

/** Fills the MTN collection book and Hubtel's receive book with `n` transactions each, in one transaction. */
async function fillBooks(sb: Served, n: number): Promise<void> {
  const repo = new MockTransactionRepository();
  await sb.ry.store.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const now = sb.ry.clock.now();
      await repo.insert(tx, { provider: 'mtn-momo', book: 'collection', reference: `history-${i}`, body: JSON.stringify({ status: 'SUCCESSFUL', i }), now });
      const hubtel = { provider: 'hubtel', book: 'receive', reference: `history${i}` };
      await repo.insert(tx, { ...hubtel, body: JSON.stringify({ state: 'success', i }), now });
      await repo.addLookupKeys(tx, hubtel, [`h${String(i).padStart(31, '0')}`, String(i).padStart(10, '0')]);
    }
  });
}

/** Statements as a comparable list: the SQL and how many rows each read or wrote. */
const shape = (r: RequestStatements) => ({ transactions: r.transactions, statements: r.statements.map((s) => `${s.rows} ${s.sql}`) });

describe.each(STORES)('statements per request on $name', (store) => {
  it("statements per mock request do not change with the book's size", { timeout: 120_000 }, async () => {
    const measured: Record<number, unknown> = {};
    for (const n of [10, 5_000]) {
      const sb = await serve(await store.database());
      await fillBooks(sb, n);
      // The first request of a kind may warm something up; the second is the one measured.
      await sb.mtnRequestToPay();
      await sb.hubtelReceive();
      const mtn = await sb.mtnRequestToPay();
      const hubtel = await sb.hubtelReceive();
      measured[n] = { mtnTake: shape(mtn.take), mtnStatus: shape(mtn.status), hubtelTake: shape(hubtel.take), hubtelStatus: shape(hubtel.status) };
      // No statement reads more than a handful of rows.
      for (const r of [mtn.take, mtn.status, hubtel.take, hubtel.status]) for (const s of r.statements) expect(s.rows, s.sql).toBeLessThanOrEqual(2);
    }
    expect(measured[5_000]).toEqual(measured[10]);
  });

  it('reads no more at start-up when the books hold 5,000 transactions than when they hold 10', { timeout: 120_000 }, async () => {
    const readAtStart: Record<number, number> = {};
    for (const n of [10, 5_000]) {
      const db = await store.database();
      const first = await serve(db);
      await fillBooks(first, n);
      const { ry, server } = running.pop()!;
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await ry.close();

      const counter = new StatementCounter();
      const config = buildConfig({ db, clock: 'virtual', seed: 7, log_requests: false });
      const started = await counter.within('start-up', () => createApp(config, { rules: RULES, wrapStore: counter.wrapStore }));
      running.push({ ry: started.result, server: createServer() });
      readAtStart[n] = started.statements.statements.filter((s) => s.read).reduce((sum, s) => sum + s.rows, 0);
    }
    expect(readAtStart[5_000]).toBe(readAtStart[10]);
  });

  it('issues the statements docs/architecture.md lists for each kind of request', { timeout: 120_000 }, async () => {
    const measured = await requestKinds(await serve(await store.database()));
    const counted = Object.fromEntries(Object.entries(measured).map(([kind, r]) => [kind, r.statements.length]));
    const listing = JSON.stringify(Object.fromEntries(Object.entries(measured).map(([k, r]) => [k, r.statements.map((s) => s.sql)])), null, 1);
    expect(counted, listing).toEqual(documentedCounts(store.name));
  });
});

/** The merchant's reads: lists (first pages), objects by id, and the sandbox's listings. */
const READ_PATHS = [
  '/api/v1/wallet',
  '/api/v1/transactions?type=transfer',
  '/api/v1/events',
  '/api/v1/webhook_endpoints',
  '/api/v1/webhook_deliveries',
  '/api/v1/keys',
  '/api/v1/merchant',
  '/api/v1/requests',
  '/api/v1/objects/:charge/timeline',
  '/api/v1/sandbox/providers',
  '/api/v1/sandbox/clock',
  '/api/v1/sandbox/scenarios',
  '/api/v1/sandbox/market',
  '/api/v1/trades',
  '/api/v1/trades/quotes',
  '/v1/collections',
  '/v1/payouts',
  '/v1/bills',
  '/v1/payment_links',
  '/v1/ledger/entries',
  '/v1/settlements',
];

/** Rows PostgreSQL reads from history tables to run `statements` (EXPLAIN ANALYZE; sequential scans off, so an index is used wherever one can be). */
async function historyRowsRead(store: Store, statements: Statement[]): Promise<number> {
  let rows = 0;
  const walk = (node: Record<string, any>) => {
    if (['ledger_postings', 'ledger_journals'].includes(node['Relation Name'])) rows += ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1);
    for (const child of node.Plans ?? []) walk(child);
  };
  for (const statement of statements.filter((s) => s.read)) {
    await store.transaction(async (tx) => {
      await tx.run('SET LOCAL enable_seqscan = off');
      const [explained] = await tx.all<{ 'QUERY PLAN': [{ Plan: Record<string, any> }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, statement.params);
      walk(explained!['QUERY PLAN'][0].Plan);
    });
  }
  return rows;
}

describe('settlement reports on PostgreSQL', () => {
  it("read the days they report and no more of the merchant's ledger, however long it is", { timeout: 120_000 }, async () => {
    const read: Record<number, Record<string, number>> = {};
    for (const days of [3, 40]) {
      const sb = await serve(await (await postgres()).createDatabase());
      for (let day = 0; day < days; day++) {
        expect((await sb.api('POST', '/api/v1/sandbox/wallet/fund', { amount: 1_000 + day })).status).toBe(200);
        await sb.ry.scheduler.advanceBy(86_400_000);
      }
      expect((await sb.api('POST', '/api/v1/sandbox/wallet/fund', { amount: 5 })).status).toBe(200);
      const page = await sb.api('GET', '/v1/settlements?page_size=2');
      expect(page.body.data).toHaveLength(2);
      const list = await sb.counter.last('GET', '/v1/settlements');
      const id = page.body.data[1].id as string;
      expect((await sb.api('GET', `/v1/settlements/${id}`)).body.data.opening_balance).toBe(1_000 * (days - 1) + ((days - 2) * (days - 1)) / 2);
      const report = await sb.counter.last('GET', `/v1/settlements/${id}`);
      read[days] = { list: await historyRowsRead(sb.ry.store, list.statements), report: await historyRowsRead(sb.ry.store, report.statements) };
    }
    expect(read[40]).toEqual(read[3]);
  });
});

/** Tables a statement may read whole: their size is set by configuration, never by history. */
const BOUNDED_TABLES = new Set(['market_legs', 'market_state', 'market_walks', 'shared_state', 'runtime_state']);
/** A statement that reads one MIN or MAX of a table, and nothing else. */
const MIN_MAX = /^SELECT (?:MIN|MAX)\(\w+\) AS \w+ FROM \w+(?: WHERE [^()]*)?$/i;
/** Partial indexes that hold only work not done yet (the pending jobs, the jobs claimed now): a backlog, not history. */
const BACKLOG_INDEXES = new Set(['jobs_lane_due', 'jobs_claimed']);
/** Tables that hold only work not done yet (the events not yet fanned out): a backlog, not history. */
const BACKLOG_TABLES = new Set(['outbox_pending']);

describe("SQLite's query plans", () => {
  it('read every table that grows with history by key or index, at start-up and in each kind of request', { timeout: 120_000 }, async () => {
    const db = await STORES[0].database();
    const counter = new StatementCounter();
    const config = buildConfig({ db, clock: 'virtual', seed: 7, log_requests: false, webhooks: { sandbox_url: 'http://127.0.0.1:9/hooks' } });
    const started = await counter.within('start-up', () => createApp(config, { rules: RULES, wrapStore: counter.wrapStore }));
    await started.result.close();
    const sb = await serve(db);
    const kinds = await requestKinds(sb);
    // Money going every way, so that the advance below runs their jobs too.
    const writes: [string, unknown][] = [
      ['/api/v1/sandbox/wallet/fund', { amount: 1_000_000 }],
      ['/api/v1/transfers', { amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }],
      ['/api/v1/transfers', { amount: 10_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' }],
      ['/v1/collections', { amount: '100.00', currency: 'GHS', channel: 'momo', customer: '0551234987' }],
      ['/v1/payouts', { amount: '100.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' }],
      ['/v1/bills', { category: 'airtime', customer: '0241234567', amount: '5.00', currency: 'GHS' }],
      ['/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 }],
    ];
    for (const [path, body] of writes) expect((await sb.api('POST', path, body)).status, path).toBeLessThan(300);
    // The jobs those requests planned: callbacks, status polls, webhook fan-out and deliveries.
    const jobs = await sb.counter.within('advance', () => sb.ry.scheduler.advanceBy(120_000));
    const charge = (await sb.api('GET', '/api/v1/transactions?type=charge')).body.data[0].id as string;
    const reads: RequestStatements[] = [];
    for (const path of READ_PATHS.map((p) => p.replace(':charge', charge))) {
      await sb.api('GET', path);
      reads.push(await sb.counter.last('GET', path.split('?')[0]!));
    }
    // Every request served: those above, and the mocks the adapters called. The mocks' callbacks to
    // railyard's own receiver are handed over in process, inside their jobs: the advance's statements.
    const served = await sb.counter.served();
    expect(served.map((r) => r.path)).toEqual(expect.arrayContaining(['/mocks/mtn-momo/collection/v1_0/requesttopay']));
    expect(served.map((r) => r.path)).not.toContainEqual(expect.stringMatching(/^\/internal\/callbacks\//));
    expect(jobs.statements.statements.filter((st) => /^INSERT INTO rail_notices/.test(st.sql) && st.params.includes('callback'))).not.toHaveLength(0);
    expect(served.length).toBeGreaterThan(Object.keys(kinds).length + reads.length);
    const statements = [started.statements, jobs.statements, ...served].flatMap((r) => r.statements);

    const wholeReads: string[] = [];
    for (const statement of statements) {
      if (/^INSERT/i.test(statement.sql)) continue; // by primary key, or ON CONFLICT on one
      const plan = await sb.ry.store.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${statement.sql}`, statement.params);
      // A recursive CTE's own rows (bounded by its LIMIT) are scanned as it steps, and so are a
      // subquery's in FROM (the earliest due job of each lane: one row each).
      const ctes = new Set([...statement.sql.matchAll(/\bWITH (?:RECURSIVE )?(\w+)|\) AS (\w+)/g)].map((m) => (m[1] ?? m[2])!));
      for (const { detail } of plan) {
        if (detail === 'SCAN CONSTANT ROW' || ctes.has(/^SCAN (\w+)$/.exec(detail)?.[1] ?? '')) continue;
        // A SCAN reads a whole table or index; a SEARCH of an index with no constraint does too.
        // Except SQLite's min/max optimisation: a lone MIN or MAX of an index's column is one seek
        // to that index's end, planned as a SEARCH with no constraint.
        const whole = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(detail) ?? (MIN_MAX.test(statement.sql) ? null : /^SEARCH (\w+) USING (?:COVERING )?INDEX (\w+)$/.exec(detail));
        if (whole && !BOUNDED_TABLES.has(whole[1]!) && !BACKLOG_TABLES.has(whole[1]!) && !BACKLOG_INDEXES.has(whole[2] ?? '')) wholeReads.push(`${detail}: ${statement.sql}`);
      }
    }
    expect(statements.length).toBeGreaterThan(30);
    expect(wholeReads).toEqual([]);
  });
});

/** One request of each kind the table in docs/architecture.md lists, and what each made the store do. */
async function requestKinds(sb: Served): Promise<Record<string, RequestStatements>> {
  await sb.mtnRequestToPay(); // the token and a first call
  const mtn = await sb.mtnRequestToPay();
  await sb.hubtelReceive();
  const hubtel = await sb.hubtelReceive();
  const charge = await sb.api('POST', '/api/v1/charges', { amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
  expect(charge.status).toBe(201);
  const chargeCreate = await sb.counter.last('POST', '/api/v1/charges');
  expect((await sb.api('POST', '/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 })).status).toBe(201);
  const quote = await sb.counter.last('POST', '/api/v1/trades/quote');
  expect((await sb.api('GET', `/api/v1/charges/${charge.body.data.id}`)).status).toBe(200);
  const chargeGet = await sb.counter.last('GET', /^\/api\/v1\/charges\/ch/);
  expect((await sb.api('GET', '/api/v1/transactions?page_size=10')).status).toBe(200);
  const listPage = await sb.counter.last('GET', '/api/v1/transactions');
  return {
    'POST /api/v1/charges': chargeCreate,
    'POST /api/v1/trades/quote': quote,
    'GET /api/v1/charges/:id': chargeGet,
    'GET /api/v1/transactions': listPage,
    'MTN requesttopay': mtn.take,
    'MTN requesttopay status': mtn.status,
    'Hubtel receive': hubtel.take,
    'Hubtel status by transaction id': hubtel.status,
  };
}

/** The statement counts of the "What one request reads" table in docs/architecture.md, for one store. */
function documentedCounts(storeName: 'SQLite' | 'PostgreSQL'): Record<string, number> {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
  const section = doc.split('## What one request reads')[1]?.split('\n## ')[0] ?? '';
  const rows = section
    .split('\n')
    .filter((line) => /^\| [^-]/.test(line))
    .slice(1);
  const column = storeName === 'SQLite' ? 1 : 2;
  return Object.fromEntries(
    rows.map((line) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      return [cells[0]!.replace(/`/g, ''), Number(cells[column])];
    }),
  );
}
