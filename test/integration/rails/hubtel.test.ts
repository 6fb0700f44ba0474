import { captureCallbacks } from '../../support/callback-capture.ts';
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VIRTUAL_EPOCH, VirtualClock, SystemClock } from '../../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../../src/kernel/ids.ts';
import type { Logger } from '../../../src/kernel/logger.ts';
import { fakeNameFor } from '../../../src/mocks/fake-name.ts';
import { createHubtelMock, hubtelFailure, type HubtelCredentials } from '../../../src/providers/hubtel/mock.ts';
import { HUBTEL_PRODUCTION_HOSTS, HubtelAdapter, fromHubtelClientReference, toHubtelClientReference, type HubtelAdapterConfig } from '../../../src/providers/hubtel/adapter.ts';
import { ProviderHealth } from '../../../src/rails/provider-health.ts';
import { RailError, type InboundCallback, type MomoCollectRequest } from '../../../src/rails/provider-port.ts';
import type { Decision, ProviderBehaviour, RailQuery, ScenarioEngine } from '../../../src/scenarios/scenario-types.ts';
import { Scheduler } from '../../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';

const CREDENTIALS: HubtelCredentials = {
  clientId: 'hubtel-client',
  clientSecret: 'hubtel-secret-123',
  posSalesId: '11684',
  prepaidDepositId: '2017101',
};
const CALLBACK_TOKEN = 'cbtok_hubtel_abc';
const DEFAULT_CALLBACK_SECONDS = 5;
const MTN_NUMBER = '233241234567';
const TELECEL_NUMBER = '233201234567';

interface Harness {
  store: SqliteStore;
  clock: VirtualClock;
  ids: IdGenerator;
  scheduler: Scheduler;
  health: ProviderHealth;
  server: Server;
  base: string;
  adapter: HubtelAdapter;
  callbacks: InboundCallback[];
  queries: RailQuery[];
  logs: { message: string; fields?: Record<string, unknown> }[];
  /** What the fake scenario engine answers; undefined = no rule matches. */
  behave(behaviour: ProviderBehaviour | undefined): void;
  adapterWith(config: Partial<HubtelAdapterConfig>): HubtelAdapter;
}

let h: Harness;

async function harness(): Promise<Harness> {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(1));
  const logs: Harness['logs'] = [];
  const logger: Logger = {
    info: (message, fields) => logs.push({ message, fields }),
    warn: (message, fields) => logs.push({ message, fields }),
    error: (message, fields) => logs.push({ message, fields }),
  };
  const scheduler = new Scheduler({ store, clock, ids, logger, wallClock: new SystemClock(), boot: 1 });
  const health = new ProviderHealth();
  const queries: RailQuery[] = [];
  let current: ProviderBehaviour | undefined;
  const scenarios: ScenarioEngine = {
    decide(query): Decision | undefined {
      queries.push(query);
      return current ? { rule: 'test', behaviour: current } : undefined;
    },
  };
  const callbacks: InboundCallback[] = [];
  const app = express();
  app.use(
    '/mocks/hubtel',
    createHubtelMock(
      { clock, scheduler, store, scenarios, health, logger, books: new MockTransactionBooks(store, clock), maxHoldMs: 2000, defaultCallbackSeconds: DEFAULT_CALLBACK_SECONDS },
      CREDENTIALS,
    ),
  );
  app.use('/internal/callbacks/hubtel', ...captureCallbacks(callbacks));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const adapterCtx = { selfBaseUrl: () => base, uuid: () => ids.uuid(), timeoutMs: 300, clock };
  const config: HubtelAdapterConfig = { ...CREDENTIALS, callbackToken: CALLBACK_TOKEN };
  return {
    store,
    clock,
    ids,
    scheduler,
    health,
    server,
    base,
    adapter: new HubtelAdapter(config, adapterCtx),
    callbacks,
    queries,
    logs,
    behave: (behaviour) => {
      current = behaviour;
    },
    adapterWith: (overrides) => new HubtelAdapter({ ...config, ...overrides }, adapterCtx),
  };
}

beforeEach(async () => {
  h = await harness();
});

afterEach(async () => {
  h.server.closeAllConnections();
  await new Promise((resolve) => h.server.close(resolve));
  await h.scheduler.stop();
  await h.store.close();
});

function collectRequest(overrides: Partial<MomoCollectRequest> = {}): MomoCollectRequest {
  return {
    reference: h.ids.next('chg'),
    amount: 1250,
    currency: 'GHS' as const,
    msisdn: MTN_NUMBER,
    network: 'MTN' as const,
    description: 'Wallet top-up',
    ...overrides,
  };
}

function payoutRequest(overrides: Partial<Parameters<HubtelAdapter['payout']>[0]> = {}) {
  return {
    reference: h.ids.next('trf'),
    amount: 5000,
    currency: 'GHS' as const,
    channel: 'momo' as const,
    msisdn: TELECEL_NUMBER,
    network: 'TELECEL' as const,
    description: 'Withdrawal',
    ...overrides,
  };
}

async function railError(promise: Promise<unknown>): Promise<RailError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RailError);
  return err as RailError;
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

async function mockCall(path: string, init: { method?: string; auth?: string | null; body?: unknown } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const auth = init.auth === undefined ? basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret) : init.auth;
  if (auth) headers.authorization = auth;
  const res = await fetch(`${h.base}/mocks/hubtel${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function receiveBody(overrides: Record<string, unknown> = {}) {
  return {
    CustomerMsisdn: MTN_NUMBER,
    Channel: 'mtn-gh',
    Amount: 0.8,
    PrimaryCallbackUrl: `${h.base}/internal/callbacks/hubtel/${CALLBACK_TOKEN}`,
    Description: 'Union Dues',
    ClientReference: 'chg01abc',
    ...overrides,
  };
}

describe('Hubtel ClientReference encoding', () => {
  it('drops the underscore of our ids to fit Hubtel (alphanumeric, at most 36) and maps back exactly', () => {
    for (const prefix of ['chg', 'trf', 'po', 'col']) {
      const id = h.ids.next(prefix);
      const encoded = toHubtelClientReference(id);
      expect(encoded).toMatch(/^[A-Za-z0-9]{1,36}$/);
      expect(fromHubtelClientReference(encoded)).toBe(id);
    }
  });

  it('refuses references it could not map back', () => {
    expect(() => toHubtelClientReference('charge-1')).toThrow(RailError);
    expect(() => fromHubtelClientReference('ab')).toThrow(RailError);
  });
});

describe('hubtelFailure maps scenario reasons to Hubtel codes', () => {
  it('passes Hubtel codes through and maps generic reasons per operation', () => {
    expect(hubtelFailure('4070', 'collect').code).toBe('4070');
    expect(hubtelFailure('NOT_ENOUGH_FUNDS', 'collect').code).toBe('2001');
    expect(hubtelFailure('insufficient_funds', 'collect').code).toBe('2001');
    expect(hubtelFailure('NOT_ENOUGH_FUNDS', 'payout')).toMatchObject({ code: '4075', message: 'Insufficient prepaid balance.' });
    expect(hubtelFailure('PAYEE_NOT_FOUND', 'payout').code).toBe('3050');
    expect(hubtelFailure('something odd', 'collect').code).toBe('2001');
  });
});

describe('Hubtel collect (Direct Receive Money)', () => {
  it('is accepted with Hubtel TransactionId, and the success callback arrives exactly after_seconds later', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 30, status: 'success' } });
    const req = collectRequest();
    const accepted = await h.adapter.collect(req);
    expect(accepted.providerReference).toMatch(/^[0-9a-f]{32}$/);
    expect(h.queries).toEqual([{ provider: 'hubtel', operation: 'collect', channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN', amount: 1250 }]);

    await h.scheduler.advanceBy(29_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(1);

    const callback = h.callbacks[0]!;
    expect(callback.method).toBe('POST');
    expect(callback.body).toMatchObject({
      ResponseCode: '0000',
      Message: 'success',
      Data: { Amount: 12.5, ClientReference: toHubtelClientReference(req.reference), TransactionId: accepted.providerReference },
    });
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    expect(h.adapter.parseCallback(callback)).toEqual({
      reference: req.reference,
      operation: 'collect',
      providerReference: accepted.providerReference,
      outcome: { status: 'success' },
    });
    expect(await h.adapter.status({ operation: 'collect', reference: req.reference, providerReference: accepted.providerReference })).toEqual({
      status: 'success',
    });
  });

  it('succeeds after the default callback delay when no scenario rule matches', async () => {
    await h.adapter.collect(collectRequest());
    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000 - 1);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(h.adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'success' });
  });

  it('reports a failed payment in the callback with Hubtel code 2001 as the reason', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 10, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
    const req = collectRequest();
    await h.adapter.collect(req);
    await h.scheduler.advanceBy(10_000);
    const callback = h.callbacks[0]!;
    expect(callback.body).toMatchObject({ ResponseCode: '2001', Message: 'failed' });
    expect(h.adapter.parseCallback(callback)).toMatchObject({
      reference: req.reference,
      operation: 'collect',
      outcome: { status: 'failed', reason: '2001' },
    });
  });

  it('sends no callback when it is dropped, but the status check is pending before and final after', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 60, status: 'success', drop: true } });
    const req = collectRequest();
    const { providerReference } = await h.adapter.collect(req);
    const query = { operation: 'collect' as const, reference: req.reference, providerReference };
    expect(await h.adapter.status(query)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(60_000);
    expect(h.callbacks).toHaveLength(0);
    expect(await h.adapter.status(query)).toEqual({ status: 'success' });
  });

  it('reports a failed receive whose callback was dropped as Unpaid with its failure code', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 20, status: 'failed', reason: 'EXPIRED', drop: true } });
    const req = collectRequest();
    const { providerReference } = await h.adapter.collect(req);
    await h.scheduler.advanceBy(20_000);
    expect(h.callbacks).toHaveLength(0);
    const raw = await mockCall(`/txnstatus/transactions/${CREDENTIALS.posSalesId}/status?clientReference=${toHubtelClientReference(req.reference)}`);
    expect(raw.body).toMatchObject({ responseCode: '2001', data: { status: 'Unpaid' } });
    expect(await h.adapter.status({ operation: 'collect', reference: req.reference, providerReference })).toEqual({
      status: 'failed',
      reason: '2001',
    });
  });

  it('sends Telecel numbers on the vodafone-gh channel', async () => {
    await h.adapter.collect(collectRequest({ msisdn: TELECEL_NUMBER, network: 'TELECEL' }));
    expect(h.queries[0]).toMatchObject({ msisdn: TELECEL_NUMBER, network: 'TELECEL' });
  });

  it('turns a scenario reject into a rejected RailError carrying the Hubtel code', async () => {
    h.behave({ respond: 'reject', reason: '4070' });
    const err = await railError(h.adapter.collect(collectRequest()));
    expect(err.kind).toBe('rejected');
    expect(err.failsOver).toBe(false);
    expect(err.detail).toEqual({ httpStatus: 400, providerCode: '4070' });
  });

  it('times out as a timeout RailError, releases the held request and creates no transaction', async () => {
    h.behave({ respond: 'timeout' });
    const req = collectRequest();
    const err = await railError(h.adapter.collect(req));
    expect(err.kind).toBe('timeout');
    await vi.waitFor(() =>
      expect(h.logs).toContainEqual({
        message: 'hubtel mock released a held request',
        fields: expect.objectContaining({ after: 'client_closed' }),
      }),
    );
    h.behave(undefined);
    const missing = await railError(h.adapter.status({ operation: 'collect', reference: req.reference, providerReference: 'x' }));
    expect(missing.detail.httpStatus).toBe(404);
    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000);
    expect(h.callbacks).toHaveLength(0);
  });

  it('answers a scenario server_error with its 5xx, a server RailError that fails over', async () => {
    h.behave({ respond: 'server_error', http_status: 502 });
    const err = await railError(h.adapter.collect(collectRequest()));
    expect(err.kind).toBe('server');
    expect(err.failsOver).toBe(true);
    expect(err.detail).toEqual({ httpStatus: 502, providerCode: '5000' });
  });

  it('answers 503 during an outage, a server RailError', async () => {
    await h.health.setDown('hubtel', true);
    const err = await railError(h.adapter.collect(collectRequest()));
    expect(err.kind).toBe('server');
    expect(err.detail.httpStatus).toBe(503);
    expect(h.queries).toHaveLength(0);
  });

  it('fails with a connection RailError when the host is unreachable', async () => {
    const closed = express().listen(0, '127.0.0.1');
    await new Promise((resolve) => closed.once('listening', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}`;
    const adapter = h.adapterWith({ hosts: { receive: url, receiveStatus: url, send: url, sendStatus: url, verify: url } });
    expect((await railError(adapter.collect(collectRequest()))).kind).toBe('connection');
  });

  it('talks to whatever hosts it is configured with, one base URL per Hubtel host', async () => {
    const mock = `${h.base}/mocks/hubtel`;
    const adapter = h.adapterWith({
      hosts: { receive: `${mock}/rmp`, receiveStatus: `${mock}/txnstatus`, send: `${mock}/smp`, sendStatus: `${mock}/smrsc`, verify: `${mock}/rnv` },
    });
    expect(adapter.baseUrl()).toBe(`${mock}/rmp`);
    expect(h.adapter.baseUrl()).toBe(mock);
    expect(HUBTEL_PRODUCTION_HOSTS.receive).toBe('https://rmp.hubtel.com');
    const req = collectRequest();
    const { providerReference } = await adapter.collect(req);
    expect(await adapter.status({ operation: 'collect', reference: req.reference, providerReference })).toEqual({ status: 'pending' });
  });
});

describe('Hubtel payout (Direct Send Money)', () => {
  it('is accepted, and the success callback arrives exactly after_seconds later', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 15, status: 'success' } });
    const req = payoutRequest();
    const accepted = await h.adapter.payout(req);
    expect(h.queries[0]).toEqual({
      provider: 'hubtel',
      operation: 'payout',
      channel: 'momo',
      msisdn: TELECEL_NUMBER,
      network: 'TELECEL',
      amount: 5000,
    });
    await h.scheduler.advanceBy(14_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    const callback = h.callbacks[0]!;
    expect(callback.body).toMatchObject({ ResponseCode: '0000', Data: { Amount: 50, AmountDebited: 50 } });
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    expect(h.adapter.parseCallback(callback)).toEqual({
      reference: req.reference,
      operation: 'payout',
      providerReference: accepted.providerReference,
      outcome: { status: 'success' },
    });
  });

  it('reports insufficient prepaid balance as Hubtel 4075 in the callback', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
    const req = payoutRequest();
    await h.adapter.payout(req);
    await h.scheduler.advanceBy(5_000);
    expect(h.callbacks[0]!.body).toMatchObject({ ResponseCode: '4075', Message: 'Insufficient prepaid balance.' });
    expect(h.adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason: '4075' });
  });

  it('sends no callback when it is dropped, but the send status check is pending before and final after', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 45, status: 'failed', reason: '3050', drop: true } });
    const req = payoutRequest();
    const { providerReference } = await h.adapter.payout(req);
    const query = { operation: 'payout' as const, reference: req.reference, providerReference };
    expect(await h.adapter.status(query)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(45_000);
    expect(h.callbacks).toHaveLength(0);
    expect(await h.adapter.status(query)).toEqual({ status: 'failed', reason: 'failed' });
  });

  it('refuses bank payouts without calling Hubtel', async () => {
    const err = await railError(h.adapter.payout(payoutRequest({ channel: 'bank', msisdn: undefined, accountNumber: '1234567890', bankCode: '040100' })));
    expect(err.kind).toBe('rejected');
    expect(h.queries).toHaveLength(0);
  });
});

describe('Hubtel name enquiry (Verification API)', () => {
  it('returns the scenario name for a registered wallet', async () => {
    h.behave({ respond: 'accept', name: 'Ama Mensah' });
    expect(await h.adapter.resolveName({ channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN' })).toEqual({ name: 'Ama Mensah' });
    expect(h.queries[0]).toEqual({ provider: 'hubtel', operation: 'resolve', channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN' });
  });

  it('returns the same seeded fake name on every call when no name is given', async () => {
    const first = await h.adapter.resolveName({ channel: 'momo', msisdn: TELECEL_NUMBER });
    const second = await h.adapter.resolveName({ channel: 'momo', msisdn: TELECEL_NUMBER });
    expect(first).toEqual({ name: fakeNameFor(TELECEL_NUMBER) });
    expect(second).toEqual(first);
    expect(h.queries[0]).toMatchObject({ network: 'TELECEL' });
  });

  it('returns null for a wallet that is not registered', async () => {
    h.behave({ respond: 'accept', resolves: false });
    expect(await h.adapter.resolveName({ channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN' })).toBeNull();
  });
});

describe('Hubtel callbacks', () => {
  it('rejects a callback that does not carry our token', async () => {
    await h.adapter.collect(collectRequest());
    await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000);
    const genuine = h.callbacks[0]!;
    expect(h.adapter.verifyCallback({ ...genuine, subpath: '/cbtok_forged' })).toBe(false);
    expect(h.adapter.verifyCallback({ ...genuine, subpath: '/' })).toBe(false);
  });

  it('throws a protocol RailError for a body that is not a Hubtel callback', () => {
    const base = { method: 'POST', subpath: `/${CALLBACK_TOKEN}`, headers: {} };
    for (const rawBody of ['not json', '{"hello":"world"}', '{"ResponseCode":"0000","Data":{}}']) {
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const err = (() => {
        try {
          h.adapter.parseCallback({ ...base, rawBody, body });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(RailError);
      expect((err as RailError).kind).toBe('protocol');
    }
  });
});

describe('Hubtel misbehaving: malformed answers, resets, late acceptance, duplicate and extra callbacks', () => {
  const collectStatus = (reference: string) => h.adapter.status({ operation: 'collect', reference, providerReference: 'unused' });
  const payoutStatus = (reference: string) => h.adapter.status({ operation: 'payout', reference, providerReference: 'unused' });

  it('malformed: receive money answers 200 with an HTML page, a protocol error, and with no callback planned creates nothing', async () => {
    h.behave({ respond: 'malformed' });
    const req = collectRequest();
    const err = await railError(h.adapter.collect(req));
    expect(err.kind).toBe('protocol');
    expect(err.failsOver).toBe(true);
    expect(err.detail).toEqual({ httpStatus: 200 });
    h.behave(undefined);
    expect((await railError(collectStatus(req.reference))).detail.httpStatus).toBe(404);
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(0);
  });

  it('malformed: the Verification API answers 200 with an HTML page, a protocol error', async () => {
    h.behave({ respond: 'malformed' });
    const res = await fetch(`${h.base}/mocks/hubtel/rnv/v2/merchantaccount/merchants/${CREDENTIALS.posSalesId}/mobilemoney/verify?channel=mtn-gh&customerMsisdn=${MTN_NUMBER}`, {
      headers: { authorization: basic(CREDENTIALS.clientId, CREDENTIALS.clientSecret) },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('502 Bad Gateway');
    expect((await railError(h.adapter.resolveName({ channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN' }))).kind).toBe('protocol');
  });

  it('reset: the connection is destroyed without an answer, a connection error, and nothing is created', async () => {
    h.behave({ respond: 'reset' });
    const req = payoutRequest();
    const err = await railError(h.adapter.payout(req));
    expect(err.kind).toBe('connection');
    expect(err.failsOver).toBe(true);
    expect((await railError(h.adapter.resolveName({ channel: 'momo', msisdn: MTN_NUMBER, network: 'MTN' }))).kind).toBe('connection');
    h.behave(undefined);
    expect((await railError(payoutStatus(req.reference))).detail.httpStatus).toBe(404);
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(0);
  });

  it('timeout with a callback: the caller times out, yet the callback arrives at its time and the status check reports it', async () => {
    h.behave({ respond: 'timeout', callback: { after_seconds: 40, status: 'success' } });
    const req = collectRequest();
    expect((await railError(h.adapter.collect(req))).kind).toBe('timeout');
    h.behave(undefined);
    expect(await collectStatus(req.reference)).toEqual({ status: 'pending' });

    await h.scheduler.advanceBy(39_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(1);
    const callback = h.callbacks[0]!;
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    expect(h.adapter.parseCallback(callback)).toMatchObject({ reference: req.reference, operation: 'collect', outcome: { status: 'success' } });
    expect(await collectStatus(req.reference)).toEqual({ status: 'success' });
  });

  it('malformed with a failed callback: a protocol error now, the failure called back later and reported by the send status check', async () => {
    h.behave({ respond: 'malformed', callback: { after_seconds: 8, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
    const req = payoutRequest();
    expect((await railError(h.adapter.payout(req))).kind).toBe('protocol');
    expect(await payoutStatus(req.reference)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(8_000);
    expect(h.callbacks).toHaveLength(1);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ reference: req.reference, outcome: { status: 'failed', reason: '4075' } });
    expect(await payoutStatus(req.reference)).toEqual({ status: 'failed', reason: 'failed' });
  });

  it('reset with a callback: a connection error now, the callback later', async () => {
    h.behave({ respond: 'reset', callback: { after_seconds: 3, status: 'success' } });
    const req = collectRequest();
    expect((await railError(h.adapter.collect(req))).kind).toBe('connection');
    await h.scheduler.advanceBy(3_000);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ reference: req.reference, outcome: { status: 'success' } });
    expect(await collectStatus(req.reference)).toEqual({ status: 'success' });
  });

  it('duplicate: the same callback is sent a second time duplicate_after_seconds later', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 10, status: 'success', duplicate: true, duplicate_after_seconds: 4 } });
    const req = collectRequest();
    await h.adapter.collect(req);
    await h.scheduler.advanceBy(10_000);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(3_999);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(2);
    const [first, second] = h.callbacks as [InboundCallback, InboundCallback];
    // Identical, PaymentDate included.
    expect(second.rawBody).toBe(first.rawBody);
    expect(h.adapter.parseCallback(second)).toEqual(h.adapter.parseCallback(first));
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(2);
  });

  it('duplicate without duplicate_after_seconds repeats the callback 1 s later', async () => {
    h.behave({ respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: '3050', duplicate: true } });
    await h.adapter.payout(payoutRequest());
    await h.scheduler.advanceBy(5_999);
    expect(h.callbacks).toHaveLength(1);
    await h.scheduler.advanceBy(1);
    expect(h.callbacks).toHaveLength(2);
    expect(h.callbacks[1]!.rawBody).toBe(h.callbacks[0]!.rawBody);
    expect(h.callbacks[1]!.body).toMatchObject({ ResponseCode: '3050' });
  });

  it('extra_callbacks: each is sent at its time with its own status, while the status check reports the main callback', async () => {
    h.behave({
      respond: 'accept',
      callback: { after_seconds: 20, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' },
      extra_callbacks: [
        { after_seconds: 30, status: 'success' },
        { after_seconds: 10, status: 'failed', reason: 'EXPIRED', duplicate: true, duplicate_after_seconds: 2 },
        { after_seconds: 15, status: 'success', drop: true },
      ],
    });
    const req = collectRequest();
    await h.adapter.collect(req);
    const outcomes = () => h.callbacks.map((c) => h.adapter.parseCallback(c).outcome);

    await h.scheduler.advanceBy(9_999);
    expect(h.callbacks).toHaveLength(0);
    await h.scheduler.advanceBy(1);
    expect(outcomes()).toEqual([{ status: 'failed', reason: '2001' }]);
    expect(h.callbacks[0]!.body).toMatchObject({ Data: { Description: 'USSD session timeout: the customer did not approve in time.' } });
    expect(await collectStatus(req.reference)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(2_000); // the extra's duplicate
    expect(h.callbacks).toHaveLength(2);
    expect(h.callbacks[1]!.rawBody).toBe(h.callbacks[0]!.rawBody);

    await h.scheduler.advanceBy(8_000); // t = 20 s; the dropped extra at 15 s sent nothing
    expect(outcomes()).toHaveLength(3);
    expect(outcomes()[2]).toEqual({ status: 'failed', reason: '2001' });
    expect(h.callbacks[2]!.body).toMatchObject({ Data: { Description: 'Insufficient funds in the mobile money wallet.' } });
    expect(await collectStatus(req.reference)).toEqual({ status: 'failed', reason: '2001' });

    await h.scheduler.advanceBy(10_000); // t = 30 s: a contradicting success after the final failure
    expect(outcomes()).toHaveLength(4);
    expect(outcomes()[3]).toEqual({ status: 'success' });
    expect(h.adapter.verifyCallback(h.callbacks[3]!)).toBe(true);
    expect(await collectStatus(req.reference)).toEqual({ status: 'failed', reason: '2001' });
    await h.scheduler.advanceBy(3_600_000);
    expect(h.callbacks).toHaveLength(4);
  });

  it('extra_callbacks on a payout report their status without changing the send status check', async () => {
    h.behave({
      respond: 'accept',
      callback: { after_seconds: 10, status: 'success' },
      extra_callbacks: [{ after_seconds: 5, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' }],
    });
    const req = payoutRequest();
    await h.adapter.payout(req);
    await h.scheduler.advanceBy(5_000);
    expect(h.callbacks[0]!.body).toMatchObject({ ResponseCode: '4075', Data: { ClientReference: expect.any(String), AmountDebited: 0 } });
    expect(await payoutStatus(req.reference)).toEqual({ status: 'pending' });
    await h.scheduler.advanceBy(5_000);
    expect(h.adapter.parseCallback(h.callbacks[1]!).outcome).toEqual({ status: 'success' });
    expect(await payoutStatus(req.reference)).toEqual({ status: 'success' });
  });
});

describe('Hubtel mock auth and validation', () => {
  const receivePath = `/rmp/merchantaccount/merchants/${CREDENTIALS.posSalesId}/receive/mobilemoney`;

  it('answers 401 with 4101 when Basic auth is missing or wrong', async () => {
    const missing = await mockCall(receivePath, { auth: null, body: receiveBody() });
    expect(missing).toMatchObject({ status: 401, body: { ResponseCode: '4101' } });
    const wrong = await mockCall(receivePath, { auth: basic(CREDENTIALS.clientId, 'wrong'), body: receiveBody() });
    expect(wrong).toMatchObject({ status: 401, body: { ResponseCode: '4101' } });
    const statusCheck = await mockCall(`/txnstatus/transactions/${CREDENTIALS.posSalesId}/status?clientReference=x`, {
      auth: 'Bearer nope',
    });
    expect(statusCheck).toMatchObject({ status: 401, body: { responseCode: '4101' } });
    expect(h.queries).toHaveLength(0);
  });

  it('refuses with 403 and 4101 when the POS Sales ID or Prepaid Deposit ID is not ours', async () => {
    const receive = await mockCall('/rmp/merchantaccount/merchants/99999/receive/mobilemoney', { body: receiveBody() });
    expect(receive).toMatchObject({ status: 403, body: { ResponseCode: '4101' } });
    const send = await mockCall('/smp/api/merchants/99999/send/mobilemoney', { body: receiveBody() });
    expect(send).toMatchObject({ status: 403, body: { ResponseCode: '4101' } });
  });

  it('refuses a reused ClientReference and malformed fields with 400 and 4000', async () => {
    expect(await mockCall(receivePath, { body: receiveBody() })).toMatchObject({ status: 200, body: { ResponseCode: '0001' } });
    const cases = [
      receiveBody(),
      receiveBody({ ClientReference: 'chg_01abc' }),
      receiveBody({ ClientReference: 'a'.repeat(37) }),
      receiveBody({ ClientReference: 'new1', Amount: 1.005 }),
      receiveBody({ ClientReference: 'new2', Amount: 0 }),
      receiveBody({ ClientReference: 'new3', Channel: 'airtel-gh' }),
      receiveBody({ ClientReference: 'new4', CustomerMsisdn: '0241234567' }),
    ];
    for (const body of cases) {
      expect(await mockCall(receivePath, { body })).toMatchObject({ status: 400, body: { ResponseCode: '4000' } });
    }
    expect(await mockCall(receivePath, { body: '{not json' })).toMatchObject({ status: 400, body: { ResponseCode: '4000' } });
  });
});
