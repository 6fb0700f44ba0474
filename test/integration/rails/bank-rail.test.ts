import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VIRTUAL_EPOCH, VirtualClock, SystemClock } from '../../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../../src/kernel/ids.ts';
import { silentLogger } from '../../../src/kernel/logger.ts';
import { hmacSha256Hex } from '../../../src/kernel/secrets.ts';
import { bankResponseCodeFor, createBankRailMock } from '../../../src/providers/bank-rail/mock.ts';
import { fakeNameFor } from '../../../src/mocks/fake-name.ts';
import { BankRailAdapter, bankRailFailureReason } from '../../../src/providers/bank-rail/adapter.ts';
import { ProviderHealth } from '../../../src/rails/provider-health.ts';
import { RailError, type InboundCallback, type PayoutRequest } from '../../../src/rails/provider-port.ts';
import type { Decision, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { Scheduler } from '../../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';

const CREDENTIALS = { clientId: 'railyard-participant', clientSecret: 'gip-test-secret-7f3a' };
const CALLBACK_TOKEN = 'tok_bankrail_9c2e';
const CALLBACK_PREFIX = '/internal/callbacks/bank-rail';
const DEFAULT_CALLBACK_SECONDS = 5;
const GCB = '040100';
const ACCOUNT = '1234567890123';

interface Harness {
  store: SqliteStore;
  clock: VirtualClock;
  scheduler: Scheduler;
  health: ProviderHealth;
  server: Server;
  baseUrl: string;
  adapter: BankRailAdapter;
  callbacks: InboundCallback[];
  queries: RailQuery[];
  openMockRequests: () => number;
  adapterWith(overrides: { baseUrl?: string; clientSecret?: string }): BankRailAdapter;
}

let decide: (query: RailQuery) => Decision | undefined;
let h: Harness;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function listen(app: express.Express): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function startHarness(): Promise<Harness> {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(1));
  const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: new SystemClock(), boot: 1 });
  const health = new ProviderHealth();
  const callbacks: InboundCallback[] = [];
  const queries: RailQuery[] = [];
  let open = 0;

  const mock = createBankRailMock(
    {
      clock,
      scheduler,
      store,
      scenarios: {
        decide: (query) => {
          queries.push(query);
          return decide(query);
        },
      },
      health,
      logger: silentLogger,
      books: new MockTransactionBooks(store, clock),
      maxHoldMs: 2_000,
      defaultCallbackSeconds: DEFAULT_CALLBACK_SECONDS,
    },
    CREDENTIALS,
  );

  const app = express();
  app.use(
    '/mocks/bank-rail',
    (_req, res, next) => {
      open++;
      res.on('close', () => open--);
      next();
    },
    mock,
  );
  app.all(`${CALLBACK_PREFIX}/*rest`, express.text({ type: '*/*' }), (req, res) => {
    const rawBody = typeof req.body === 'string' ? req.body : '';
    callbacks.push({
      method: req.method,
      subpath: req.originalUrl.slice(CALLBACK_PREFIX.length),
      headers: req.headers,
      rawBody,
      body: parseJson(rawBody),
    });
    res.status(200).end();
  });
  // An upstream that answers 200 with something that is not the rail's JSON.
  app.post('/garbage/gip/v1/credit-transfers', (_req, res) => {
    res.status(200).type('text/html').send('<html>gateway login</html>');
  });

  const server = await listen(app);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const adapterWith = (overrides: { baseUrl?: string; clientSecret?: string }) =>
    new BankRailAdapter({ ...CREDENTIALS, callbackToken: CALLBACK_TOKEN, ...overrides }, { selfBaseUrl: () => baseUrl, uuid: () => ids.uuid(), timeoutMs: 300, clock });

  return {
    store,
    clock,
    scheduler,
    health,
    server,
    baseUrl,
    adapter: adapterWith({}),
    callbacks,
    queries,
    openMockRequests: () => open,
    adapterWith,
  };
}

function payoutRequest(reference: string, overrides: Partial<PayoutRequest> = {}): PayoutRequest {
  return {
    reference,
    amount: 12_550,
    currency: 'GHS',
    channel: 'bank',
    accountNumber: ACCOUNT,
    bankCode: GCB,
    accountName: 'Kwame Asante',
    description: 'Payout to Kwame',
    ...overrides,
  };
}

function accept(callback?: Decision['behaviour']['callback'], extra: Partial<Decision['behaviour']> = {}): Decision {
  return { rule: 'test', behaviour: { respond: 'accept', ...(callback ? { callback } : {}), ...extra } };
}

async function railError(promise: Promise<unknown>): Promise<RailError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RailError);
  return err as RailError;
}

/** A direct request to the mock, signed as the wire description says (or deliberately not). */
async function signedRequest(method: 'GET' | 'POST', path: string, body: unknown, options: { secret?: string; timestamp?: number; headers?: boolean } = {}): Promise<{ status: number; body: any }> {
  const fullPath = `/mocks/bank-rail${path}`;
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(options.timestamp ?? Math.floor(h.clock.now() / 1000));
  const signature = hmacSha256Hex(options.secret ?? CREDENTIALS.clientSecret, `${timestamp}.${method}.${fullPath}.${raw}`);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.headers !== false) {
    headers['x-participant-id'] = CREDENTIALS.clientId;
    headers['x-timestamp'] = timestamp;
    headers['x-signature'] = signature;
  }
  const res = await fetch(`${h.baseUrl}${fullPath}`, { method, headers, ...(body === undefined ? {} : { body: raw }) });
  return { status: res.status, body: await res.json() };
}

beforeEach(async () => {
  decide = () => undefined;
  h = await startHarness();
});

afterEach(async () => {
  await closeServer(h.server);
  await h.scheduler.stop();
  await h.store.close();
});

describe('bank-rail credit transfers', () => {
  it('accepts a transfer and calls back success exactly after_seconds later, signed for our callback token', async () => {
    decide = (q) => (q.operation === 'payout' ? accept({ after_seconds: 30, status: 'success' }) : undefined);

    const accepted = await h.adapter.payout(payoutRequest('trf_001'));

    expect(accepted.providerReference).toMatch(/^GIP\d{12}[0-9A-F]{8}$/);
    expect(h.queries).toContainEqual({
      provider: 'bank-rail',
      operation: 'payout',
      channel: 'bank',
      account_number: ACCOUNT,
      bank_code: GCB,
      amount: 12_550,
    });
    expect(await h.adapter.status({ operation: 'payout', reference: 'trf_001', providerReference: accepted.providerReference })).toEqual({
      status: 'pending',
    });

    await h.scheduler.advanceBy(29_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(1);

    const callback = h.callbacks[0]!;
    expect(callback.method).toBe('POST');
    expect(callback.subpath).toBe(`/${CALLBACK_TOKEN}`);
    expect(callback.body).toMatchObject({ status: 'SUCCESS', responseCode: '00', amount: 12_550, currency: 'GHS' });
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    expect(h.adapter.parseCallback(callback)).toEqual({
      reference: 'trf_001',
      operation: 'payout',
      providerReference: accepted.providerReference,
      outcome: { status: 'success' },
    });
    expect(await h.adapter.status({ operation: 'payout', reference: 'trf_001', providerReference: accepted.providerReference })).toEqual({
      status: 'success',
    });
  });

  it('calls back FAILED with the GIP response code as the reason, which maps to the service words', async () => {
    decide = () => accept({ after_seconds: 10, status: 'failed', reason: 'insufficient_funds' });

    await h.adapter.payout(payoutRequest('trf_002'));
    await h.scheduler.advanceBy(10_000);

    const callback = h.callbacks[0]!;
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    const parsed = h.adapter.parseCallback(callback);
    expect(parsed).toMatchObject({ reference: 'trf_002', operation: 'payout', outcome: { status: 'failed', reason: '51' } });
    expect(bankRailFailureReason((parsed.outcome as { reason: string }).reason)).toBe('insufficient_funds');
  });

  it('never calls back when the callback is dropped, but status() reports pending before the time and the outcome after', async () => {
    decide = () => accept({ after_seconds: 60, status: 'failed', reason: 'account_not_found', drop: true });

    const { providerReference } = await h.adapter.payout(payoutRequest('trf_003'));
    const query = { operation: 'payout' as const, reference: 'trf_003', providerReference };

    await h.scheduler.advanceBy(59_000);
    expect(await h.adapter.status(query)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(1_000);

    expect(h.callbacks).toHaveLength(0);
    expect(await h.adapter.status(query)).toEqual({ status: 'failed', reason: '25' });
  });

  it('succeeds with a callback after the default delay when no scenario rule matches', async () => {
    await h.adapter.payout(payoutRequest('trf_004'));

    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000 - 1);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);

    expect(h.adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'success' });
  });

  it('still answers after the scenario latency', async () => {
    decide = () => accept(undefined, { latency_ms: 20 });

    const accepted = await h.adapter.payout(payoutRequest('trf_005'));

    expect(accepted.providerReference).toMatch(/^GIP/);
  });

  it('refuses a reused sessionId with 409 and code 94, which the adapter reads as the transfer the rail already holds', async () => {
    const first = await h.adapter.payout(payoutRequest('trf_006'));

    const reused = await signedRequest('POST', '/gip/v1/credit-transfers', {
      sessionId: 'trf_006',
      amount: 12_550,
      currency: 'GHS',
      destinationBankCode: GCB,
      accountNumber: ACCOUNT,
      accountName: 'Kwame Asante',
      narration: 'again',
      callbackUrl: 'http://127.0.0.1:1/cb',
    });
    expect(reused).toMatchObject({ status: 409, body: { responseCode: '94' } });

    // What a call resumed after a restart meets: the same transfer, not a second one.
    expect(await h.adapter.payout(payoutRequest('trf_006'))).toEqual(first);
  });

  it('refuses an unknown bank code (92), a malformed account number (30) and a zero amount (13)', async () => {
    expect(await railError(h.adapter.payout(payoutRequest('trf_007', { bankCode: '999100' })))).toMatchObject({
      kind: 'rejected',
      detail: { httpStatus: 400, providerCode: '92' },
    });
    expect(await railError(h.adapter.payout(payoutRequest('trf_008', { accountNumber: '12AB5678' })))).toMatchObject({
      kind: 'rejected',
      detail: { httpStatus: 400, providerCode: '30' },
    });
    expect(await railError(h.adapter.payout(payoutRequest('trf_009', { amount: 0 })))).toMatchObject({
      kind: 'rejected',
      detail: { httpStatus: 400, providerCode: '13' },
    });
  });

  it('does not collect: the bank channel only pays out', async () => {
    expect(h.adapter.channels).toEqual(['bank']);
    expect(h.adapter.networks).toEqual([]);
    const err = await railError(h.adapter.collect({ reference: 'chg_1', amount: 100, currency: 'GHS', msisdn: '233241234567', network: 'MTN', description: 'x' }));
    expect(err.kind).toBe('rejected');
  });
});

describe('bank-rail name enquiry', () => {
  it('returns the name the scenario gives', async () => {
    decide = (q) => (q.operation === 'resolve' ? accept(undefined, { name: 'Ama Serwaa Mensah' }) : undefined);

    const resolved = await h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB });

    expect(resolved).toEqual({ name: 'Ama Serwaa Mensah' });
    expect(h.queries).toContainEqual({
      provider: 'bank-rail',
      operation: 'resolve',
      channel: 'bank',
      account_number: ACCOUNT,
      bank_code: GCB,
    });
  });

  it('returns the same seeded fake name on every call when no name is given', async () => {
    const first = await h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB });
    const second = await h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB });

    expect(first).toEqual({ name: fakeNameFor(`${GCB}:${ACCOUNT}`) });
    expect(second).toEqual(first);
  });

  it('resolves to null when the destination bank cannot locate the account (code 25)', async () => {
    decide = () => accept(undefined, { resolves: false });

    expect(await h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB })).toBeNull();
  });
});

describe('bank-rail failure modes', () => {
  it('fails with kind timeout when the rail holds the request, and the held request is then released', async () => {
    decide = () => ({ rule: 'slow', behaviour: { respond: 'timeout' } });

    const err = await railError(h.adapter.payout(payoutRequest('trf_010')));

    expect(err.kind).toBe('timeout');
    expect(err.failsOver).toBe(true);
    await vi.waitFor(() => expect(h.openMockRequests()).toBe(0));
    // No transaction was created, so the rail has never heard of it.
    decide = () => undefined;
    expect(await railError(h.adapter.status({ operation: 'payout', reference: 'trf_010', providerReference: '' }))).toMatchObject({
      detail: { httpStatus: 404, providerCode: '25' },
    });
  });

  it('fails with kind server and the HTTP status on a server_error scenario', async () => {
    decide = () => ({ rule: 'broken', behaviour: { respond: 'server_error', http_status: 502 } });

    const err = await railError(h.adapter.payout(payoutRequest('trf_011')));

    expect(err).toMatchObject({ kind: 'server', detail: { httpStatus: 502, providerCode: '96' } });
  });

  it('answers 503 with code 91 during an outage, which fails over as kind server', async () => {
    await h.health.setDown('bank-rail', true);

    const payout = await railError(h.adapter.payout(payoutRequest('trf_012')));
    const resolve = await railError(h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB }));

    for (const err of [payout, resolve]) {
      expect(err).toMatchObject({ kind: 'server', detail: { httpStatus: 503, providerCode: '91' } });
      expect(err.failsOver).toBe(true);
    }
  });

  it('refuses synchronously on a reject scenario, which does not fail over', async () => {
    decide = () => ({ rule: 'broke', behaviour: { respond: 'reject', reason: 'NOT_ENOUGH_FUNDS' } });

    const err = await railError(h.adapter.payout(payoutRequest('trf_013')));

    expect(err).toMatchObject({ kind: 'rejected', detail: { httpStatus: 400, providerCode: '51' } });
    expect(err.failsOver).toBe(false);
  });

  it('fails with kind connection when nothing listens', async () => {
    const gone = await listen(express());
    const port = (gone.address() as AddressInfo).port;
    await closeServer(gone);

    const err = await railError(h.adapterWith({ baseUrl: `http://127.0.0.1:${port}` }).payout(payoutRequest('trf_014')));

    expect(err.kind).toBe('connection');
  });

  it('fails with kind protocol when the answer is not the rail JSON', async () => {
    const err = await railError(h.adapterWith({ baseUrl: `${h.baseUrl}/garbage` }).payout(payoutRequest('trf_015')));

    expect(err.kind).toBe('protocol');
  });
});

describe('bank-rail misbehaving: malformed answers, resets, late acceptance, duplicate and extra callbacks', () => {
  const status = (reference: string) => h.adapter.status({ operation: 'payout', reference, providerReference: '' });
  const resolve = () => h.adapter.resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB });

  it('malformed: a transfer is answered 202 with an HTML page, a protocol error, and with no callback planned creates nothing', async () => {
    decide = () => ({ rule: 'garbled', behaviour: { respond: 'malformed' } });

    const err = await railError(h.adapter.payout(payoutRequest('trf_030')));

    expect(err).toMatchObject({ kind: 'protocol', detail: { httpStatus: 202 } });
    expect(err.failsOver).toBe(true);
    decide = () => undefined;
    expect(await railError(status('trf_030'))).toMatchObject({ detail: { httpStatus: 404, providerCode: '25' } });
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(0);
  });

  it('malformed: a name enquiry is answered 200 with an HTML page, a protocol error', async () => {
    decide = () => ({ rule: 'garbled', behaviour: { respond: 'malformed' } });

    expect(await railError(resolve())).toMatchObject({ kind: 'protocol', detail: { httpStatus: 200 } });
  });

  it('reset: the connection is destroyed without an answer, a connection error, and nothing is created', async () => {
    decide = () => ({ rule: 'cut', behaviour: { respond: 'reset' } });

    const err = await railError(h.adapter.payout(payoutRequest('trf_031')));

    expect(err.kind).toBe('connection');
    expect(err.failsOver).toBe(true);
    expect((await railError(resolve())).kind).toBe('connection');
    decide = () => undefined;
    expect(await railError(status('trf_031'))).toMatchObject({ detail: { httpStatus: 404, providerCode: '25' } });
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(0);
  });

  it('timeout with a callback: the caller times out, yet the callback arrives at its time and the status endpoint reports it', async () => {
    decide = () => ({ rule: 'late', behaviour: { respond: 'timeout', callback: { after_seconds: 40, status: 'success' } } });

    expect((await railError(h.adapter.payout(payoutRequest('trf_032')))).kind).toBe('timeout');
    decide = () => undefined;
    expect(await status('trf_032')).toEqual({ status: 'pending' });

    await h.scheduler.advanceBy(39_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(1);
    const callback = h.callbacks[0]!;
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    expect(h.adapter.parseCallback(callback)).toMatchObject({ reference: 'trf_032', operation: 'payout', outcome: { status: 'success' } });
    expect(await status('trf_032')).toEqual({ status: 'success' });
    await vi.waitFor(() => expect(h.openMockRequests()).toBe(0));
  });

  it('malformed and reset with a callback: the caller gets no usable answer, and the outcome is called back later', async () => {
    decide = () => ({ rule: 'garbled', behaviour: { respond: 'malformed', callback: { after_seconds: 5, status: 'failed', reason: 'insufficient_funds' } } });
    expect((await railError(h.adapter.payout(payoutRequest('trf_033')))).kind).toBe('protocol');
    decide = () => ({ rule: 'cut', behaviour: { respond: 'reset', callback: { after_seconds: 6, status: 'success' } } });
    expect((await railError(h.adapter.payout(payoutRequest('trf_034')))).kind).toBe('connection');
    expect(await status('trf_033')).toEqual({ status: 'pending' });
    expect(await status('trf_034')).toEqual({ status: 'pending' });

    await h.scheduler.advanceBy(6_000);

    expect(h.callbacks.map((c) => h.adapter.parseCallback(c))).toEqual([
      expect.objectContaining({ reference: 'trf_033', outcome: { status: 'failed', reason: '51' } }),
      expect.objectContaining({ reference: 'trf_034', outcome: { status: 'success' } }),
    ]);
    expect(await status('trf_033')).toEqual({ status: 'failed', reason: '51' });
    expect(await status('trf_034')).toEqual({ status: 'success' });
  });

  it('timeout with only extra callbacks: the transfer exists, settles as the default, and the extras are sent', async () => {
    decide = () => ({
      rule: 'late',
      behaviour: { respond: 'timeout', extra_callbacks: [{ after_seconds: 2, status: 'failed', reason: '05' }] },
    });

    expect((await railError(h.adapter.payout(payoutRequest('trf_035')))).kind).toBe('timeout');
    await h.scheduler.advanceBy(2_000);
    expect(h.adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason: '05' });
    decide = () => undefined;
    expect(await status('trf_035')).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000 - 2_000);
    expect(h.adapter.parseCallback(h.callbacks[1]!).outcome).toEqual({ status: 'success' });
    expect(await status('trf_035')).toEqual({ status: 'success' });
  });

  it('duplicate: the same callback body is sent a second time duplicate_after_seconds later, signed when sent', async () => {
    decide = () => accept({ after_seconds: 10, status: 'success', duplicate: true, duplicate_after_seconds: 90 });

    await h.adapter.payout(payoutRequest('trf_036'));
    await h.scheduler.advanceBy(10_000);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(89_999);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(2);

    const [first, second] = h.callbacks as [InboundCallback, InboundCallback];
    expect(second.rawBody).toBe(first.rawBody);
    expect(Number(second.headers['x-timestamp'])).toBe(Number(first.headers['x-timestamp']) + 90);
    expect(h.adapter.verifyCallback(second)).toBe(true);
    expect(h.adapter.parseCallback(second)).toEqual(h.adapter.parseCallback(first));
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(2);
  });

  it('duplicate without duplicate_after_seconds repeats the callback 1 s later', async () => {
    decide = () => accept({ after_seconds: 5, status: 'failed', reason: 'account_not_found', duplicate: true });

    await h.adapter.payout(payoutRequest('trf_037'));
    await h.scheduler.advanceBy(5_999);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(2);
    expect(h.callbacks[1]!.rawBody).toBe(h.callbacks[0]!.rawBody);
    expect(h.callbacks[1]!.body).toMatchObject({ status: 'FAILED', responseCode: '25' });
  });

  it('extra_callbacks: each is sent at its time with its own status, while the status endpoint reports the main callback', async () => {
    decide = () =>
      accept(
        { after_seconds: 30, status: 'success' },
        {
          extra_callbacks: [
            { after_seconds: 45, status: 'failed', reason: 'insufficient_funds' },
            { after_seconds: 10, status: 'failed', reason: '91', duplicate: true, duplicate_after_seconds: 3 },
            { after_seconds: 20, status: 'failed', reason: '05', drop: true },
          ],
        },
      );

    await h.adapter.payout(payoutRequest('trf_038'));
    const outcomes = () => h.callbacks.map((c) => h.adapter.parseCallback(c).outcome);

    await h.scheduler.advanceBy(9_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(outcomes()).toEqual([{ status: 'failed', reason: '91' }]);
    expect(h.adapter.verifyCallback(h.callbacks[0]!)).toBe(true);
    expect(await status('trf_038')).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(3_000); // the extra's duplicate
    expect(h.callbacks).toHaveLength(2);
    expect(h.callbacks[1]!.rawBody).toBe(h.callbacks[0]!.rawBody);

    await h.scheduler.advanceBy(17_000); // t = 30 s; the dropped extra at 20 s sent nothing
    expect(outcomes()).toHaveLength(3);
    expect(outcomes()[2]).toEqual({ status: 'success' });
    expect(await status('trf_038')).toEqual({ status: 'success' });

    await h.scheduler.advanceBy(15_000); // t = 45 s: a contradicting failure after the final success
    expect(outcomes()).toHaveLength(4);
    expect(outcomes()[3]).toEqual({ status: 'failed', reason: '51' });
    expect(h.adapter.verifyCallback(h.callbacks[3]!)).toBe(true);
    expect(await status('trf_038')).toEqual({ status: 'success' });
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(4);
  });
});

describe('bank-rail callbacks', () => {
  async function genuineCallback(): Promise<InboundCallback> {
    await h.adapter.payout(payoutRequest('trf_020'));
    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000);
    const callback = h.callbacks[0]!;
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    return callback;
  }

  it('refuses a callback addressed to the wrong token', async () => {
    const callback = await genuineCallback();

    expect(h.adapter.verifyCallback({ ...callback, subpath: '/tok_forged' })).toBe(false);
  });

  it('refuses a callback whose body or signature was tampered with', async () => {
    const callback = await genuineCallback();
    const forgedBody = callback.rawBody.replace('"SUCCESS"', '"FAILED"');

    expect(h.adapter.verifyCallback({ ...callback, rawBody: forgedBody })).toBe(false);
    expect(h.adapter.verifyCallback({ ...callback, headers: { ...callback.headers, 'x-signature': '0'.repeat(64) } })).toBe(false);
    expect(h.adapter.verifyCallback({ ...callback, headers: { ...callback.headers, 'x-signature': undefined } })).toBe(false);
  });

  it('refuses a callback whose timestamp is more than 300 seconds old', async () => {
    const callback = await genuineCallback();

    await h.scheduler.advanceBy(300_000);
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    await h.scheduler.advanceBy(1_000);
    expect(h.adapter.verifyCallback(callback)).toBe(false);
  });

  it('throws a protocol error for a body that is not a callback', () => {
    const base = { method: 'POST', subpath: `/${CALLBACK_TOKEN}`, headers: {} };
    for (const rawBody of ['not json', '{"foo":1}', '{"sessionId":"trf_1","status":"MAYBE","responseCode":"00"}']) {
      let thrown: unknown;
      try {
        h.adapter.parseCallback({ ...base, rawBody, body: parseJson(rawBody) });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(RailError);
      expect((thrown as RailError).kind).toBe('protocol');
    }
  });
});

describe('bank-rail request signing', () => {
  const enquiry = { destinationBankCode: GCB, accountNumber: ACCOUNT, sessionId: 'ne_1' };

  it('answers a correctly signed request', async () => {
    const res = await signedRequest('POST', '/gip/v1/name-enquiry', enquiry);

    expect(res).toMatchObject({ status: 200, body: { responseCode: '00', accountNumber: ACCOUNT, sessionId: 'ne_1' } });
  });

  it('answers 401 with code 63 when the signing headers are missing', async () => {
    const res = await signedRequest('POST', '/gip/v1/name-enquiry', enquiry, { headers: false });

    expect(res).toMatchObject({ status: 401, body: { responseCode: '63' } });
  });

  it('answers 401 when the signature was made with the wrong secret', async () => {
    const res = await signedRequest('POST', '/gip/v1/name-enquiry', enquiry, { secret: 'not-the-secret' });

    expect(res).toMatchObject({ status: 401, body: { responseCode: '63' } });
    const err = await railError(h.adapterWith({ clientSecret: 'not-the-secret' }).resolveName({ channel: 'bank', accountNumber: ACCOUNT, bankCode: GCB }));
    expect(err).toMatchObject({ kind: 'rejected', detail: { httpStatus: 401, providerCode: '63' } });
  });

  it('answers 401 when the timestamp is more than 300 seconds from the rail clock', async () => {
    const now = Math.floor(h.clock.now() / 1000);

    const res = await signedRequest('POST', '/gip/v1/name-enquiry', enquiry, { timestamp: now - 301 });

    expect(res).toMatchObject({ status: 401, body: { responseCode: '63' } });
  });
});

describe('bank-rail response codes', () => {
  it('maps scenario reasons to GIP codes and keeps a two-digit code as it is', () => {
    expect(bankResponseCodeFor('insufficient_funds')).toBe('51');
    expect(bankResponseCodeFor('NOT_ENOUGH_FUNDS')).toBe('51');
    expect(bankResponseCodeFor('account_not_found')).toBe('25');
    expect(bankResponseCodeFor('57')).toBe('57');
    expect(bankResponseCodeFor(undefined)).toBe('05');
  });

  it('maps GIP codes to the words the service uses', () => {
    expect(bankRailFailureReason('51')).toBe('insufficient_funds');
    expect(bankRailFailureReason('25')).toBe('account_not_found');
    expect(bankRailFailureReason('57')).toBe('rejected_by_bank');
  });
});
