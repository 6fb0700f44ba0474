import { captureCallbacks } from '../../support/callback-capture.ts';
import express from 'express';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VIRTUAL_EPOCH, VirtualClock, SystemClock } from '../../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../../src/kernel/ids.ts';
import { silentLogger } from '../../../src/kernel/logger.ts';
import { fakeNameFor } from '../../../src/mocks/fake-name.ts';
import { createMtnMomoMock, type MtnMomoCredentials } from '../../../src/providers/mtn-momo/mock.ts';
import { MtnMomoAdapter, mtnReferenceId, type MtnMomoAdapterConfig } from '../../../src/providers/mtn-momo/adapter.ts';
import { ProviderHealth } from '../../../src/rails/provider-health.ts';
import { RailError, type InboundCallback } from '../../../src/rails/provider-port.ts';
import type { Decision, ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { Scheduler } from '../../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../../src/store/sqlite-store.ts';
import { MockTransactionBooks } from '../../../src/mocks/engine/mock-transaction-book.ts';

const CREDENTIALS: MtnMomoCredentials = {
  apiUser: '3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c',
  apiKey: 'api-key-for-the-railyard-user',
  collectionSubscriptionKey: 'collection-subscription-key',
  disbursementSubscriptionKey: 'disbursement-subscription-key',
  targetEnvironment: 'sandbox',
};
const CALLBACK_TOKEN = 'cbt_mtn_secret';
const DEFAULT_CALLBACK_SECONDS = 5;
const WALLET = '233241234567';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Harness {
  base: string;
  clock: VirtualClock;
  scheduler: Scheduler;
  health: ProviderHealth;
  ids: IdGenerator;
  /** Every X-Reference-Id the harness's adapters generated, in order. */
  referenceIds: string[];
  /** What the scenario engine answers; change it per test. */
  rule: (query: RailQuery) => Decision | undefined;
  queries: RailQuery[];
  callbacks: InboundCallback[];
  /** Requests to the mock still open (held ones included). */
  openRequests: () => number;
  tokenRequests: () => number;
  adapter(overrides?: Partial<MtnMomoAdapterConfig>, timeoutMs?: number): MtnMomoAdapter;
  close(): Promise<void>;
}

async function startHarness(options: { maxHoldMs?: number } = {}): Promise<Harness> {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(1));
  const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: new SystemClock(), boot: 1 });
  const health = new ProviderHealth();
  const callbacks: InboundCallback[] = [];
  const queries: RailQuery[] = [];
  const referenceIds: string[] = [];
  let open = 0;
  let tokenRequests = 0;

  const harness = { rule: () => undefined } as unknown as Harness;
  const mock = createMtnMomoMock(
    {
      clock,
      scheduler,
      store,
      scenarios: {
        decide: (query) => {
          queries.push(query);
          return harness.rule(query);
        },
      },
      health,
      logger: silentLogger,
      books: new MockTransactionBooks(store, clock),
      maxHoldMs: options.maxHoldMs ?? 2000,
      defaultCallbackSeconds: DEFAULT_CALLBACK_SECONDS,
    },
    CREDENTIALS,
  );

  const app = express();
  app.use(
    '/mocks/mtn-momo',
    (req, res, next) => {
      open++;
      if (/\/token\/?$/.test(req.path)) tokenRequests++;
      res.once('close', () => open--);
      next();
    },
    mock,
  );
  app.use('/internal/callbacks/mtn-momo', ...captureCallbacks(callbacks));
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return Object.assign(harness, {
    base,
    clock,
    scheduler,
    health,
    ids,
    referenceIds,
    queries,
    callbacks,
    openRequests: () => open,
    tokenRequests: () => tokenRequests,
    adapter(overrides: Partial<MtnMomoAdapterConfig> = {}, timeoutMs = 300) {
      return new MtnMomoAdapter(
        { ...CREDENTIALS, currency: 'GHS', callbackToken: CALLBACK_TOKEN, ...overrides },
        {
          selfBaseUrl: () => base,
          uuid: () => {
            const id = ids.uuid();
            referenceIds.push(id);
            return id;
          },
          timeoutMs,
          clock,
        },
      );
    },
    async close() {
      await scheduler.stop();
      server.closeAllConnections();
      server.close();
      await store.close();
    },
  });
}

function behave(behaviour: ProviderBehaviour, match: (q: RailQuery) => boolean = () => true) {
  return (query: RailQuery): Decision | undefined => (match(query) ? { rule: 'test rule', behaviour } : undefined);
}

/** The mock holds no transaction under that reference and never calls back. */
async function expectNothingCreated(h: Harness, adapter: MtnMomoAdapter, referenceId: string): Promise<void> {
  h.rule = () => undefined;
  expect((await railError(adapter.status({ operation: 'collect', reference: 'chg_0001', providerReference: referenceId }))).detail).toEqual({
    httpStatus: 404,
    providerCode: 'RESOURCE_NOT_FOUND',
  });
  await h.scheduler.advanceBy(3_600_000);
  expect(h.callbacks).toHaveLength(0);
}

async function railError(promise: Promise<unknown>): Promise<RailError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(RailError);
  return error as RailError;
}

const collectRequest = (msisdn = WALLET) => ({
  reference: 'chg_0001',
  amount: 1050,
  currency: 'GHS' as const,
  msisdn,
  network: 'MTN' as const,
  description: "Mama's shop order 17",
});

const payoutRequest = (msisdn = WALLET) => ({
  reference: 'trf_0001',
  amount: 25000,
  currency: 'GHS' as const,
  channel: 'momo' as const,
  msisdn,
  network: 'MTN' as const,
  description: 'Payout',
});

describe('MTN MoMo adapter against the MTN MoMo mock', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  describe('collect', () => {
    it('is accepted with a UUID X-Reference-Id, asks the scenario engine in railyard terms and sends the callback exactly at after_seconds', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 30, status: 'success' } });
      const adapter = h.adapter();

      const accepted = await adapter.collect(collectRequest());

      expect(accepted.providerReference).toMatch(UUID);
      expect(h.queries).toEqual([{ provider: 'mtn-momo', operation: 'collect', channel: 'momo', network: 'MTN', msisdn: WALLET, amount: 1050 }]);
      expect(await adapter.status({ operation: 'collect', reference: 'chg_0001', providerReference: accepted.providerReference })).toEqual({
        status: 'pending',
      });

      await h.scheduler.advanceBy(30_000 - 1);
      expect(h.callbacks).toHaveLength(0);
      await h.scheduler.advanceBy(1);
      expect(h.callbacks).toHaveLength(1);

      const callback = h.callbacks[0]!;
      expect(callback.method).toBe('PUT');
      expect(adapter.verifyCallback(callback)).toBe(true);
      expect(adapter.parseCallback(callback)).toEqual({ reference: 'chg_0001', operation: 'collect', outcome: { status: 'success' } });
      expect(callback.body).toMatchObject({
        externalId: 'chg_0001',
        amount: '10.50',
        currency: 'GHS',
        payer: { partyIdType: 'MSISDN', partyId: WALLET },
        payerMessage: 'Mamas shop order 17',
        status: 'SUCCESSFUL',
        financialTransactionId: expect.stringMatching(/^\d+$/),
      });
      expect(await adapter.status({ operation: 'collect', reference: 'chg_0001', providerReference: accepted.providerReference })).toEqual({
        status: 'success',
      });
    });

    it('settles successfully after the default callback time when no scenario rule matches', async () => {
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000 - 1);
      expect(h.callbacks).toHaveLength(0);
      await h.scheduler.advanceBy(1);
      expect(adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'success' });
    });

    it('reports a failed callback with its MTN reason', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 10, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await h.scheduler.advanceBy(10_000);
      expect(h.callbacks[0]!.body).toMatchObject({ status: 'FAILED', reason: 'NOT_ENOUGH_FUNDS' });
      expect(adapter.parseCallback(h.callbacks[0]!)).toEqual({
        reference: 'chg_0001',
        operation: 'collect',
        outcome: { status: 'failed', reason: 'NOT_ENOUGH_FUNDS' },
      });
    });

    it('with a dropped callback sends nothing, and only a status poll finds the final outcome', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 20, status: 'failed', reason: 'APPROVAL_REJECTED', drop: true } });
      const adapter = h.adapter();
      const { providerReference } = await adapter.collect(collectRequest());
      const query = { operation: 'collect' as const, reference: 'chg_0001', providerReference };

      await h.scheduler.advanceBy(19_999);
      expect(await adapter.status(query)).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(1);
      expect(h.callbacks).toHaveLength(0);
      expect(await adapter.status(query)).toEqual({ status: 'failed', reason: 'APPROVAL_REJECTED' });
    });
  });

  describe('payout', () => {
    it('transfers to the payee and the callback (by POST) says payout and success', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 15, status: 'success' } });
      const adapter = h.adapter();
      const { providerReference } = await adapter.payout(payoutRequest());

      expect(providerReference).toMatch(UUID);
      expect(h.queries[0]).toMatchObject({ operation: 'payout', msisdn: WALLET, amount: 25000 });
      expect(await adapter.status({ operation: 'payout', reference: 'trf_0001', providerReference })).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(14_999);
      expect(h.callbacks).toHaveLength(0);
      await h.scheduler.advanceBy(1);

      const callback = h.callbacks[0]!;
      expect(callback.method).toBe('POST');
      expect(callback.body).toMatchObject({ amount: '250.00', payee: { partyIdType: 'MSISDN', partyId: WALLET }, status: 'SUCCESSFUL' });
      expect(adapter.verifyCallback(callback)).toBe(true);
      expect(adapter.parseCallback(callback)).toEqual({ reference: 'trf_0001', operation: 'payout', outcome: { status: 'success' } });
      expect(await adapter.status({ operation: 'payout', reference: 'trf_0001', providerReference })).toEqual({ status: 'success' });
    });

    it('reports a failed transfer with its reason', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: 'PAYEE_NOT_FOUND' } });
      const adapter = h.adapter();
      await adapter.payout(payoutRequest());
      await h.scheduler.advanceBy(5_000);
      expect(adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason: 'PAYEE_NOT_FOUND' });
    });

    it('with a dropped callback is found final only by polling', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 8, status: 'success', drop: true } });
      const adapter = h.adapter();
      const { providerReference } = await adapter.payout(payoutRequest());
      const query = { operation: 'payout' as const, reference: 'trf_0001', providerReference };
      expect(await adapter.status(query)).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(8_000);
      expect(h.callbacks).toHaveLength(0);
      expect(await adapter.status(query)).toEqual({ status: 'success' });
    });

    it('refuses bank payouts, which MTN cannot make', async () => {
      const error = await railError(h.adapter().payout({ ...payoutRequest(), channel: 'bank', msisdn: undefined, accountNumber: '1234567890' }));
      expect(error.kind).toBe('rejected');
    });
  });

  describe('resolveName', () => {
    it('returns the scenario name when the rule gives one', async () => {
      h.rule = behave({ respond: 'accept', name: 'Ama Serwaa Boateng' });
      expect(await h.adapter().resolveName({ channel: 'momo', msisdn: WALLET, network: 'MTN' })).toEqual({ name: 'Ama Serwaa Boateng' });
      expect(h.queries[0]).toEqual({ provider: 'mtn-momo', operation: 'resolve', channel: 'momo', network: 'MTN', msisdn: WALLET });
    });

    it('returns the same seeded fake name for a number on every call', async () => {
      const adapter = h.adapter();
      const first = await adapter.resolveName({ channel: 'momo', msisdn: WALLET });
      const second = await adapter.resolveName({ channel: 'momo', msisdn: WALLET });
      expect(first).toEqual({ name: fakeNameFor(WALLET) });
      expect(second).toEqual(first);
    });

    it('returns null when the scenario says the wallet does not exist', async () => {
      h.rule = behave({ respond: 'accept', resolves: false });
      expect(await h.adapter().resolveName({ channel: 'momo', msisdn: WALLET })).toBeNull();
    });
  });

  describe('failures', () => {
    it('a held request becomes a timeout, and the mock releases it when the adapter gives up', async () => {
      h.rule = behave({ respond: 'timeout' });
      const error = await railError(h.adapter().collect(collectRequest()));
      expect(error.kind).toBe('timeout');
      // maxHoldMs is 2000: an earlier release can only come from the adapter hanging up.
      await vi.waitFor(() => expect(h.openRequests()).toBe(0), { timeout: 1500, interval: 20 });
    });

    it('a held request is cut off after maxHoldMs without an answer, and no transaction is created', async () => {
      await h.close();
      h = await startHarness({ maxHoldMs: 100 });
      h.rule = behave({ respond: 'timeout' });
      const adapter = h.adapter({}, 5_000);
      const error = await railError(adapter.collect(collectRequest()));
      expect(error.kind).toBe('connection');
      const referenceId = h.ids.uuid(); // not the one the adapter used: nothing to find either way
      await expectNothingCreated(h, adapter, referenceId);
    });

    it('server_error is a server failure with MTN’s code', async () => {
      h.rule = behave({ respond: 'server_error' });
      const error = await railError(h.adapter().collect(collectRequest()));
      expect(error.kind).toBe('server');
      expect(error.detail).toEqual({ httpStatus: 500, providerCode: 'INTERNAL_PROCESSING_ERROR' });
      expect(error.failsOver).toBe(true);
    });

    it('a 503 server_error is SERVICE_UNAVAILABLE', async () => {
      h.rule = behave({ respond: 'server_error', http_status: 503 });
      const error = await railError(h.adapter().payout(payoutRequest()));
      expect(error.kind).toBe('server');
      expect(error.detail).toEqual({ httpStatus: 503, providerCode: 'SERVICE_UNAVAILABLE' });
    });

    it('an outage answers 503 to every call, and ends when the provider is back', async () => {
      const adapter = h.adapter();
      await h.health.setDown('mtn-momo', true);
      const error = await railError(adapter.collect(collectRequest()));
      expect(error.kind).toBe('server');
      expect(error.detail).toEqual({ httpStatus: 503, providerCode: 'SERVICE_UNAVAILABLE' });
      await h.health.setDown('mtn-momo', false);
      expect((await adapter.collect(collectRequest())).providerReference).toMatch(UUID);
    });

    it('reject is a refusal that does not fail over, with MTN’s reason as providerCode', async () => {
      h.rule = behave({ respond: 'reject', reason: 'PAYER_NOT_FOUND' });
      const error = await railError(h.adapter().collect(collectRequest()));
      expect(error.kind).toBe('rejected');
      expect(error.failsOver).toBe(false);
      expect(error.detail).toEqual({ httpStatus: 400, providerCode: 'PAYER_NOT_FOUND' });
    });

    it('MTN’s 500 NOT_ALLOWED family is a 5xx about our setup at MTN, so it fails over', async () => {
      h.rule = behave({ respond: 'reject', reason: 'NOT_ALLOWED' });
      const error = await railError(h.adapter().payout(payoutRequest()));
      expect(error.kind).toBe('server');
      expect(error.failsOver).toBe(true);
      expect(error.detail).toEqual({ httpStatus: 500, providerCode: 'NOT_ALLOWED' });
    });

    it('a plain reject is MTN’s 400 refusal, which does not fail over', async () => {
      h.rule = behave({ respond: 'reject' });
      const error = await railError(h.adapter().collect(collectRequest()));
      expect([error.kind, error.failsOver]).toEqual(['rejected', false]);
      expect(error.detail).toEqual({ httpStatus: 400, providerCode: 'BAD_REQUEST' });
    });

    it('a wrong currency for the environment is 500 INVALID_CURRENCY, which fails over', async () => {
      const error = await railError(h.adapter({ currency: 'USD' }).collect(collectRequest()));
      expect(error.failsOver).toBe(true);
      expect(error.detail).toEqual({ httpStatus: 500, providerCode: 'INVALID_CURRENCY' });
    });

    it('a wrong target environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT, which fails over', async () => {
      const error = await railError(h.adapter({ targetEnvironment: 'mtnghana' }).collect(collectRequest()));
      expect(error.failsOver).toBe(true);
      expect(error.detail).toEqual({ httpStatus: 500, providerCode: 'NOT_ALLOWED_TARGET_ENVIRONMENT' });
    });

    it('an unreachable upstream is a connection failure', async () => {
      const closed = express().listen(0, '127.0.0.1');
      await once(closed, 'listening');
      const port = (closed.address() as AddressInfo).port;
      closed.close();
      await once(closed, 'close');
      const error = await railError(h.adapter({ baseUrl: `http://127.0.0.1:${port}` }).collect(collectRequest()));
      expect(error.kind).toBe('connection');
    });

    it('a status poll for a reference MTN never saw is a 404 RESOURCE_NOT_FOUND refusal', async () => {
      const error = await railError(h.adapter().status({ operation: 'collect', reference: 'chg_x', providerReference: '6f1b0b7e-2c4d-4e8f-9a1b-2c3d4e5f6a7b' }));
      expect(error.kind).toBe('rejected');
      expect(error.detail).toEqual({ httpStatus: 404, providerCode: 'RESOURCE_NOT_FOUND' });
    });
  });

  describe('misbehaving upstream: malformed answers, resets, late acceptance, duplicate and extra callbacks', () => {
    // The X-Reference-Id the adapter sent for the last collect or payout (it derives it from our id).
    const lastReference = (reference = 'chg_0001') => mtnReferenceId(reference);

    it('malformed: basicuserinfo answers 200 with an HTML page, a protocol error', async () => {
      h.rule = behave({ respond: 'malformed' });
      const error = await railError(h.adapter().resolveName({ channel: 'momo', msisdn: WALLET }));
      expect(error.kind).toBe('protocol');
      expect(error.failsOver).toBe(true);
    });

    it('malformed: requesttopay answers 202 with an HTML page and, with no callback planned, creates nothing', async () => {
      h.rule = behave({ respond: 'malformed' });
      const { access_token } = await token('collection');
      const referenceId = h.ids.uuid();
      const res = await mtn(
        'POST',
        '/collection/v1_0/requesttopay',
        access_token,
        { 'X-Reference-Id': referenceId },
        {
          amount: '5',
          currency: 'GHS',
          externalId: 'chg_malformed',
          payer: { partyIdType: 'MSISDN', partyId: WALLET },
        },
      );
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const text = await res.text();
      expect(() => JSON.parse(text)).toThrow();
      expect(text).toContain('502 Bad Gateway');
      expect((await mtn('GET', `/collection/v1_0/requesttopay/${referenceId}`, access_token)).status).toBe(404);
    });

    it('malformed with a callback: MTN took the request, so it settles and calls back later', async () => {
      h.rule = behave({ respond: 'malformed', callback: { after_seconds: 12, status: 'success' } });
      const { access_token } = await token('disbursement');
      const referenceId = h.ids.uuid();
      const res = await mtn(
        'POST',
        '/disbursement/v1_0/transfer',
        access_token,
        { 'X-Reference-Id': referenceId, 'X-Callback-Url': `${h.base}/internal/callbacks/mtn-momo/${CALLBACK_TOKEN}` },
        {
          amount: '5',
          currency: 'GHS',
          externalId: 'trf_malformed',
          payee: { partyIdType: 'MSISDN', partyId: WALLET },
        },
      );
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await (await mtn('GET', `/disbursement/v1_0/transfer/${referenceId}`, access_token)).json()).toMatchObject({ status: 'PENDING' });
      await h.scheduler.advanceBy(12_000);
      expect(h.callbacks).toHaveLength(1);
      expect(h.adapter().parseCallback(h.callbacks[0]!)).toEqual({ reference: 'trf_malformed', operation: 'payout', outcome: { status: 'success' } });
    });

    it('a second request with the same reference meets 409 RESOURCE_ALREADY_EXIST, which the adapter reads as the transaction MTN holds', async () => {
      const adapter = h.adapter();
      const first = await adapter.collect(collectRequest());
      expect(first).toEqual({ providerReference: mtnReferenceId('chg_0001') });
      const { access_token } = await token('collection');
      const body = { amount: '10.00', currency: 'GHS', externalId: 'chg_other', payer: { partyIdType: 'MSISDN', partyId: '233241234567' } };
      const duplicate = await mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': first.providerReference }, body);
      expect(duplicate.status).toBe(409);
      expect(await adapter.collect(collectRequest())).toEqual(first);
      await h.scheduler.advanceBy(60_000);
      expect(h.callbacks).toHaveLength(1);
    });

    it('reset: the connection is destroyed without an answer, a connection error, and nothing is created', async () => {
      h.rule = behave({ respond: 'reset' });
      const adapter = h.adapter();
      const collect = await railError(adapter.collect(collectRequest()));
      expect(collect.kind).toBe('connection');
      expect(collect.failsOver).toBe(true);
      const referenceId = lastReference();
      expect((await railError(adapter.resolveName({ channel: 'momo', msisdn: WALLET }))).kind).toBe('connection');
      await expectNothingCreated(h, adapter, referenceId);
    });

    it('timeout with a callback: the caller times out, yet the callback arrives at its time and the status endpoint reports it', async () => {
      h.rule = behave({ respond: 'timeout', callback: { after_seconds: 40, status: 'success' } });
      const adapter = h.adapter();
      const error = await railError(adapter.collect(collectRequest()));
      expect(error.kind).toBe('timeout');
      h.rule = () => undefined;
      const query = { operation: 'collect' as const, reference: 'chg_0001', providerReference: lastReference() };
      expect(await adapter.status(query)).toEqual({ status: 'pending' });

      await h.scheduler.advanceBy(39_999);
      expect(h.callbacks).toHaveLength(0);
      await h.scheduler.advanceBy(1);
      expect(h.callbacks).toHaveLength(1);
      expect(adapter.verifyCallback(h.callbacks[0]!)).toBe(true);
      expect(adapter.parseCallback(h.callbacks[0]!)).toEqual({ reference: 'chg_0001', operation: 'collect', outcome: { status: 'success' } });
      expect(await adapter.status(query)).toEqual({ status: 'success' });
    });

    it('reset with a failed callback: the caller sees a connection error, and the failure is called back later', async () => {
      h.rule = behave({ respond: 'reset', callback: { after_seconds: 7, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
      const adapter = h.adapter();
      expect((await railError(adapter.payout(payoutRequest()))).kind).toBe('connection');
      const query = { operation: 'payout' as const, reference: 'trf_0001', providerReference: lastReference('trf_0001') };
      expect(await adapter.status(query)).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(7_000);
      expect(h.callbacks).toHaveLength(1);
      expect(adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
      expect(await adapter.status(query)).toEqual({ status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
    });

    it('duplicate: the same callback is sent a second time duplicate_after_seconds later', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 10, status: 'success', duplicate: true, duplicate_after_seconds: 3 } });
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await h.scheduler.advanceBy(10_000);
      expect(h.callbacks).toHaveLength(1);
      await h.scheduler.advanceBy(2_999);
      expect(h.callbacks).toHaveLength(1);
      await h.scheduler.advanceBy(1);
      expect(h.callbacks).toHaveLength(2);
      const [first, second] = h.callbacks as [InboundCallback, InboundCallback];
      expect(second.rawBody).toBe(first.rawBody);
      expect(second.method).toBe(first.method);
      expect(adapter.parseCallback(second)).toEqual(adapter.parseCallback(first));
      await h.scheduler.advanceBy(3_600_000);
      expect(h.callbacks).toHaveLength(2);
    });

    it('duplicate without duplicate_after_seconds repeats the callback 1 s later', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 5, status: 'failed', reason: 'EXPIRED', duplicate: true } });
      await h.adapter().payout(payoutRequest());
      await h.scheduler.advanceBy(5_999);
      expect(h.callbacks).toHaveLength(1);
      await h.scheduler.advanceBy(1);
      expect(h.callbacks.map((c) => c.rawBody)).toEqual([h.callbacks[0]!.rawBody, h.callbacks[0]!.rawBody]);
      expect(h.callbacks[1]!.body).toMatchObject({ status: 'FAILED', reason: 'EXPIRED' });
    });

    it('extra_callbacks: each is sent at its time with its own status, while the status endpoint reports the main callback', async () => {
      h.rule = behave({
        respond: 'accept',
        callback: { after_seconds: 30, status: 'success' },
        extra_callbacks: [
          { after_seconds: 45, status: 'failed', reason: 'APPROVAL_REJECTED', duplicate: true, duplicate_after_seconds: 5 },
          { after_seconds: 10, status: 'failed', reason: 'EXPIRED' },
          { after_seconds: 20, status: 'success', drop: true },
        ],
      });
      const adapter = h.adapter();
      const { providerReference } = await adapter.collect(collectRequest());
      const query = { operation: 'collect' as const, reference: 'chg_0001', providerReference };
      const outcomes = () => h.callbacks.map((c) => adapter.parseCallback(c).outcome);

      await h.scheduler.advanceBy(9_999);
      expect(h.callbacks).toHaveLength(0);
      await h.scheduler.advanceBy(1);
      expect(outcomes()).toEqual([{ status: 'failed', reason: 'EXPIRED' }]);
      expect(adapter.verifyCallback(h.callbacks[0]!)).toBe(true);
      expect(await adapter.status(query)).toEqual({ status: 'pending' });

      await h.scheduler.advanceBy(20_000); // t = 30 s; the dropped extra at 20 s sent nothing
      expect(outcomes()).toEqual([{ status: 'failed', reason: 'EXPIRED' }, { status: 'success' }]);
      expect(await adapter.status(query)).toEqual({ status: 'success' });

      await h.scheduler.advanceBy(15_000); // t = 45 s: a contradicting callback after the final one
      expect(outcomes()).toHaveLength(3);
      expect(outcomes()[2]).toEqual({ status: 'failed', reason: 'APPROVAL_REJECTED' });
      expect(h.callbacks[2]!.body).toMatchObject({ externalId: 'chg_0001', payer: { partyId: WALLET }, status: 'FAILED', reason: 'APPROVAL_REJECTED' });
      expect(await adapter.status(query)).toEqual({ status: 'success' });

      await h.scheduler.advanceBy(5_000); // its duplicate
      expect(h.callbacks).toHaveLength(4);
      expect(h.callbacks[3]!.rawBody).toBe(h.callbacks[2]!.rawBody);
      await h.scheduler.advanceBy(3_600_000);
      expect(h.callbacks).toHaveLength(4);
      expect(await adapter.status(query)).toEqual({ status: 'success' });
    });
  });

  describe('tokens', () => {
    it('one token per product serves many calls', async () => {
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await adapter.collect(collectRequest());
      await adapter.resolveName({ channel: 'momo', msisdn: WALLET });
      expect(h.tokenRequests()).toBe(1);
      await adapter.payout(payoutRequest());
      expect(h.tokenRequests()).toBe(2);
    });

    it('a token is renewed before expires_in runs out on the business clock', async () => {
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await h.scheduler.advanceBy(3_600_000 - 61_000);
      await adapter.collect(collectRequest());
      expect(h.tokenRequests()).toBe(1);
      await h.scheduler.advanceBy(2_000); // inside the last minute of the token's hour
      expect((await adapter.collect(collectRequest())).providerReference).toMatch(UUID);
      expect(h.tokenRequests()).toBe(2);
    });

    it('a wrong API key fails the token request with 401, which fails over like an outage', async () => {
      const error = await railError(h.adapter({ apiKey: 'wrong' }).collect(collectRequest()));
      expect(error.kind).toBe('server');
      expect(error.detail).toEqual({ httpStatus: 401, providerCode: 'login_failed' });
    });
  });

  describe('callbacks', () => {
    it('a callback on the wrong token path is not verified', async () => {
      h.rule = behave({ respond: 'accept', callback: { after_seconds: 1, status: 'success' } });
      const adapter = h.adapter();
      await adapter.collect(collectRequest());
      await h.scheduler.advanceBy(1_000);
      const genuine = h.callbacks[0]!;
      expect(adapter.verifyCallback({ ...genuine, subpath: '/cbt_mtn_guess' })).toBe(false);
      expect(adapter.verifyCallback({ ...genuine, subpath: '/' })).toBe(false);
      expect(h.adapter({ callbackToken: 'another-token' }).verifyCallback(genuine)).toBe(false);
    });

    it('a body that is not an MTN status object is a protocol error', () => {
      const adapter = h.adapter();
      const inbound = (rawBody: string): InboundCallback => ({ method: 'PUT', subpath: `/${CALLBACK_TOKEN}`, headers: {}, rawBody, body: undefined });
      for (const raw of ['not json', '[]', '{"status":"SUCCESSFUL"}', '{"externalId":"chg_1","status":"DONE"}']) {
        const error = (() => {
          try {
            adapter.parseCallback(inbound(raw));
          } catch (err) {
            return err;
          }
        })();
        expect(error).toBeInstanceOf(RailError);
        expect((error as RailError).kind).toBe('protocol');
      }
    });

    it('accepts reason as {code, message}, the undocumented CREATED status, and either verb', () => {
      const adapter = h.adapter();
      const parse = (body: object, method = 'POST') => adapter.parseCallback({ method, subpath: `/${CALLBACK_TOKEN}`, headers: {}, rawBody: JSON.stringify(body), body });
      expect(parse({ externalId: 'chg_1', payer: { partyIdType: 'MSISDN', partyId: WALLET }, status: 'FAILED', reason: { code: 'EXPIRED', message: 'Expired' } })).toEqual({
        reference: 'chg_1',
        operation: 'collect',
        outcome: { status: 'failed', reason: 'EXPIRED' },
      });
      expect(parse({ externalId: 'trf_1', payee: { partyIdType: 'MSISDN', partyId: WALLET }, status: 'CREATED' }, 'PUT')).toEqual({
        reference: 'trf_1',
        operation: 'payout',
        outcome: { status: 'pending' },
      });
    });

    it('nothing is sent when the request carried no X-Callback-Url, but the status still settles', async () => {
      const { access_token } = await token('collection');
      const referenceId = h.ids.uuid();
      const post = await mtn(
        'POST',
        '/collection/v1_0/requesttopay',
        access_token,
        { 'X-Reference-Id': referenceId },
        {
          amount: '5',
          currency: 'GHS',
          externalId: 'chg_no_cb',
          payer: { partyIdType: 'MSISDN', partyId: WALLET },
        },
      );
      expect(post.status).toBe(202);
      await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000);
      expect(h.callbacks).toHaveLength(0);
      const status = await mtn('GET', `/collection/v1_0/requesttopay/${referenceId}`, access_token);
      expect(await status.json()).toMatchObject({ externalId: 'chg_no_cb', status: 'SUCCESSFUL' });
    });
  });

  describe('the mock’s wire contract', () => {
    const validBody = () => ({
      amount: '12.50',
      currency: 'GHS',
      externalId: 'chg_wire',
      payer: { partyIdType: 'MSISDN', partyId: WALLET },
      payerMessage: 'Order 17',
      payeeNote: 'Order 17',
    });

    it('the token endpoints answer 401 {error} to bad Basic auth or a bad subscription key', async () => {
      const basic = (user: string, key: string) => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;
      const badKey = await fetch(`${h.base}/mocks/mtn-momo/collection/token/`, {
        method: 'POST',
        headers: { Authorization: basic(CREDENTIALS.apiUser, 'nope'), 'Ocp-Apim-Subscription-Key': CREDENTIALS.collectionSubscriptionKey },
      });
      expect(badKey.status).toBe(401);
      expect(await badKey.json()).toEqual({ error: 'login_failed' });
      const wrongProduct = await fetch(`${h.base}/mocks/mtn-momo/collection/token/`, {
        method: 'POST',
        headers: { Authorization: basic(CREDENTIALS.apiUser, CREDENTIALS.apiKey), 'Ocp-Apim-Subscription-Key': CREDENTIALS.disbursementSubscriptionKey },
      });
      expect(wrongProduct.status).toBe(401);
      expect(await wrongProduct.json()).toHaveProperty('error');
      const good = await token('collection');
      expect(good).toMatchObject({ token_type: 'access_token', expires_in: 3600, access_token: expect.any(String) });
    });

    it('product calls need the product’s bearer token and subscription key, else 401', async () => {
      const collection = await token('collection');
      const disbursement = await token('disbursement');
      const noToken = await fetch(`${h.base}/mocks/mtn-momo/collection/v1_0/account/balance`, {
        headers: { 'Ocp-Apim-Subscription-Key': CREDENTIALS.collectionSubscriptionKey, 'X-Target-Environment': 'sandbox' },
      });
      expect(noToken.status).toBe(401);
      expect(await noToken.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      expect((await mtn('GET', '/collection/v1_0/account/balance', disbursement.access_token)).status).toBe(401);
      expect((await mtn('GET', '/collection/v1_0/account/balance', 'forged.token.value')).status).toBe(401);
      expect((await mtn('GET', '/collection/v1_0/account/balance', collection.access_token, { 'Ocp-Apim-Subscription-Key': 'wrong' })).status).toBe(401);
      const balance = await mtn('GET', '/collection/v1_0/account/balance', collection.access_token);
      expect(balance.status).toBe(200);
      expect(await balance.json()).toEqual({ availableBalance: expect.stringMatching(/^\d+(\.\d+)?$/), currency: 'GHS' });
    });

    it('requesttopay refuses malformed bodies and headers with 400', async () => {
      const { access_token } = await token('collection');
      const attempt = (body: unknown, referenceId = h.ids.uuid()) => mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': referenceId }, body);
      const cases: unknown[] = [
        { ...validBody(), amount: undefined },
        { ...validBody(), amount: 12.5 },
        { ...validBody(), amount: '-3' },
        { ...validBody(), amount: '0.00' },
        { ...validBody(), payer: undefined },
        { ...validBody(), payer: { partyIdType: 'MSISDN', partyId: '+233241234567' } },
        { ...validBody(), payer: { partyIdType: 'PHONE', partyId: WALLET } },
        { ...validBody(), payerMessage: 'x'.repeat(161) },
        { ...validBody(), payeeNote: "Kofi's order" },
        { ...validBody(), currency: undefined },
      ];
      for (const body of cases) {
        const res = await attempt(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(await res.json()).toMatchObject({ code: expect.any(String), message: expect.any(String) });
      }
      expect((await attempt(validBody(), 'not-a-uuid')).status).toBe(400);
      expect((await attempt({ ...validBody(), payerMessage: 'x'.repeat(160) })).status).toBe(202);
    });

    it('a reused X-Reference-Id is 409 RESOURCE_ALREADY_EXIST, and unknown references are 404 RESOURCE_NOT_FOUND', async () => {
      const { access_token } = await token('collection');
      const referenceId = h.ids.uuid();
      expect((await mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': referenceId }, validBody())).status).toBe(202);
      const again = await mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': referenceId }, validBody());
      expect(again.status).toBe(409);
      expect(await again.json()).toEqual({ code: 'RESOURCE_ALREADY_EXIST', message: 'Duplicated reference id. Creation of resource failed.' });
      const missing = await mtn('GET', `/collection/v1_0/requesttopay/${h.ids.uuid()}`, access_token);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ code: 'RESOURCE_NOT_FOUND' });
    });

    it('an unsupported currency is 500 INVALID_CURRENCY and a wrong environment 500 NOT_ALLOWED_TARGET_ENVIRONMENT', async () => {
      const { access_token } = await token('collection');
      const usd = await mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': h.ids.uuid() }, { ...validBody(), currency: 'USD' });
      expect(usd.status).toBe(500);
      expect(await usd.json()).toMatchObject({ code: 'INVALID_CURRENCY' });
      const eur = await mtn('POST', '/collection/v1_0/requesttopay', access_token, { 'X-Reference-Id': h.ids.uuid() }, { ...validBody(), currency: 'EUR' });
      expect(eur.status).toBe(202);
      const env = await mtn('GET', '/collection/v1_0/account/balance', access_token, { 'X-Target-Environment': 'mtnghana' });
      expect(env.status).toBe(500);
      expect(await env.json()).toEqual({ code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', message: 'Access to target environment is forbidden.' });
    });

    it('account holder checks answer {result} and basicuserinfo answers MTN’s fields', async () => {
      const { access_token } = await token('disbursement');
      const active = await mtn('GET', `/disbursement/v1_0/accountholder/msisdn/${WALLET}/active`, access_token);
      expect(await active.json()).toEqual({ result: true });
      h.rule = behave({ respond: 'accept', resolves: false });
      expect(await (await mtn('GET', `/disbursement/v1_0/accountholder/msisdn/${WALLET}/active`, access_token)).json()).toEqual({ result: false });
      const gone = await mtn('GET', `/disbursement/v1_0/accountholder/msisdn/${WALLET}/basicuserinfo`, access_token);
      expect(gone.status).toBe(404);
      h.rule = () => undefined;
      const info = await mtn('GET', `/disbursement/v1_0/accountholder/msisdn/${WALLET}/basicuserinfo`, access_token);
      expect(await info.json()).toEqual({
        given_name: expect.any(String),
        family_name: expect.any(String),
        birthdate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        locale: expect.any(String),
        gender: expect.any(String),
        status: expect.any(String),
      });
    });

    it('sandbox users can be provisioned and then get tokens', async () => {
      const userId = h.ids.uuid();
      const key = CREDENTIALS.disbursementSubscriptionKey;
      const created = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser`, {
        method: 'POST',
        headers: { 'X-Reference-Id': userId, 'Ocp-Apim-Subscription-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ providerCallbackHost: 'railyard.test' }),
      });
      expect(created.status).toBe(201);
      const duplicate = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser`, {
        method: 'POST',
        headers: { 'X-Reference-Id': userId, 'Ocp-Apim-Subscription-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ providerCallbackHost: 'railyard.test' }),
      });
      expect(duplicate.status).toBe(409);
      const user = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser/${userId}`, { headers: { 'Ocp-Apim-Subscription-Key': key } });
      expect(await user.json()).toEqual({ providerCallbackHost: 'railyard.test', targetEnvironment: 'sandbox' });
      const apiKey = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser/${userId}/apikey`, { method: 'POST', headers: { 'Ocp-Apim-Subscription-Key': key } });
      expect(apiKey.status).toBe(201);
      const { apiKey: secret } = (await apiKey.json()) as { apiKey: string };
      const adapter = h.adapter({ apiUser: userId, apiKey: secret });
      expect((await adapter.payout(payoutRequest())).providerReference).toMatch(UUID);
      const unknown = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser/${h.ids.uuid()}`, { headers: { 'Ocp-Apim-Subscription-Key': key } });
      expect(unknown.status).toBe(404);
      const noKey = await fetch(`${h.base}/mocks/mtn-momo/v1_0/apiuser/${userId}`);
      expect(noKey.status).toBe(401);
    });
  });

  describe('MTN’s sandbox test numbers when no scenario rule matches', () => {
    const poll = (adapter: MtnMomoAdapter, operation: 'collect' | 'payout', providerReference: string) => adapter.status({ operation, reference: 'x', providerReference });

    it.each([
      ['collect', '46733123450', 'INTERNAL_PROCESSING_ERROR'],
      ['collect', '46733123451', 'APPROVAL_REJECTED'],
      ['collect', '46733123452', 'EXPIRED'],
      ['collect', '46733123455', 'PAYER_NOT_FOUND'],
      ['collect', '46733123463', 'COULD_NOT_PERFORM_TRANSACTION'],
      ['payout', '46733123450', 'INTERNAL_PROCESSING_ERROR'],
      ['payout', '46733123455', 'NOT_ENOUGH_FUNDS'],
      ['payout', '46733123457', 'PAYEE_NOT_FOUND'],
      ['payout', '46733123463', 'SERVICE_UNAVAILABLE'],
    ] as const)('%s to %s is accepted and then FAILED with %s', async (operation, msisdn, reason) => {
      const adapter = h.adapter();
      const { providerReference } = operation === 'collect' ? await adapter.collect(collectRequest(msisdn)) : await adapter.payout(payoutRequest(msisdn));
      expect(h.queries[0]).toMatchObject({ msisdn }); // not a Ghana number: passed through as sent
      expect(await poll(adapter, operation, providerReference)).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(DEFAULT_CALLBACK_SECONDS * 1000);
      expect(await poll(adapter, operation, providerReference)).toEqual({ status: 'failed', reason });
      expect(adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason });
    });

    it('…453 stays PENDING for good and never calls back', async () => {
      const adapter = h.adapter();
      const { providerReference } = await adapter.collect(collectRequest('46733123453'));
      await h.scheduler.advanceBy(24 * 3_600_000);
      expect(await poll(adapter, 'collect', providerReference)).toEqual({ status: 'pending' });
      expect(h.callbacks).toHaveLength(0);
    });

    it('…454 is PENDING, then SUCCESSFUL after 25 s', async () => {
      const adapter = h.adapter();
      const { providerReference } = await adapter.payout(payoutRequest('46733123454'));
      await h.scheduler.advanceBy(24_999);
      expect(await poll(adapter, 'payout', providerReference)).toEqual({ status: 'pending' });
      await h.scheduler.advanceBy(1);
      expect(await poll(adapter, 'payout', providerReference)).toEqual({ status: 'success' });
      expect(h.callbacks).toHaveLength(1);
    });

    it('account holder checks follow MTN’s column: …450 not found, …451 inactive, …455 unavailable', async () => {
      const { access_token } = await token('collection');
      const active = (msisdn: string) => mtn('GET', `/collection/v1_0/accountholder/msisdn/${msisdn}/active`, access_token);
      const notFound = await active('46733123450');
      expect(notFound.status).toBe(404);
      expect(await notFound.json()).toMatchObject({ code: 'RESOURCE_NOT_FOUND' });
      expect(await (await active('46733123451')).json()).toEqual({ result: false });
      const notAllowed = await active('46733123452');
      expect([notAllowed.status, await notAllowed.json()]).toEqual([500, expect.objectContaining({ code: 'NOT_ALLOWED' })]);
      const unavailable = await active('46733123455');
      expect([unavailable.status, await unavailable.json()]).toEqual([503, expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' })]);
      expect(await (await active('46733123499')).json()).toEqual({ result: true });
      expect(await h.adapter().resolveName({ channel: 'momo', msisdn: '46733123450' })).toBeNull();
    });
  });

  async function token(product: 'collection' | 'disbursement'): Promise<{ access_token: string; token_type: string; expires_in: number }> {
    const res = await fetch(`${h.base}/mocks/mtn-momo/${product}/token/`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${CREDENTIALS.apiUser}:${CREDENTIALS.apiKey}`).toString('base64')}`,
        'Ocp-Apim-Subscription-Key': product === 'collection' ? CREDENTIALS.collectionSubscriptionKey : CREDENTIALS.disbursementSubscriptionKey,
      },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { access_token: string; token_type: string; expires_in: number };
  }

  /** A raw product call with the headers MTN wants; `headers` override them. */
  function mtn(method: string, path: string, accessToken: string, headers: Record<string, string> = {}, body?: unknown) {
    const product = path.startsWith('/collection') ? 'collection' : 'disbursement';
    return fetch(`${h.base}/mocks/mtn-momo${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'Ocp-Apim-Subscription-Key': product === 'collection' ? CREDENTIALS.collectionSubscriptionKey : CREDENTIALS.disbursementSubscriptionKey,
        'X-Target-Environment': 'sandbox',
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }
});

describe('MTN MoMo adapter against a scripted upstream (answers the mock never gives)', () => {
  let server: Server;
  let base: string;
  let tokensIssued: number;
  let productCalls: { method: string; path: string; bearer: string }[];
  let script: (req: express.Request, res: express.Response) => void;
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(3));

  beforeEach(async () => {
    tokensIssued = 0;
    productCalls = [];
    script = (_req, res) => void res.status(202).end();
    const app = express();
    app.post(['/collection/token', '/disbursement/token'], (_req, res) => {
      tokensIssued++;
      res.json({ access_token: `token-${tokensIssued}`, token_type: 'access_token', expires_in: 3600 });
    });
    app.use(['/collection/v1_0', '/disbursement/v1_0'], (req, res) => {
      productCalls.push({ method: req.method, path: req.originalUrl, bearer: req.get('authorization') ?? '' });
      script(req, res);
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    server.closeAllConnections();
    server.close();
  });

  const adapter = () =>
    new MtnMomoAdapter({ ...CREDENTIALS, baseUrl: base, currency: 'EUR', callbackToken: CALLBACK_TOKEN }, { selfBaseUrl: () => 'http://127.0.0.1:1', uuid: () => ids.uuid(), timeoutMs: 300, clock });
  const statusQuery = { operation: 'collect' as const, reference: 'chg_1', providerReference: '6f1b0b7e-2c4d-4e8f-9a1b-2c3d4e5f6a7b' };

  it('a 401 on a cached token gets one fresh token and one retry', async () => {
    const revoked = new Set<string>();
    script = (req, res) => void res.status(revoked.has(req.get('authorization') ?? '') ? 401 : 202).end();
    const rail = adapter();
    await rail.collect(collectRequest());
    revoked.add('Bearer token-1');
    expect((await rail.collect(collectRequest())).providerReference).toMatch(UUID);
    expect(tokensIssued).toBe(2);
    expect(productCalls.map((c) => c.bearer)).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
  });

  it('a 401 on a fresh token is not retried', async () => {
    script = (_req, res) => void res.status(401).json({ code: 'UNAUTHORIZED', message: 'no' });
    const error = await railError(adapter().collect(collectRequest()));
    expect(error.kind).toBe('server');
    expect(error.detail).toEqual({ httpStatus: 401, providerCode: 'UNAUTHORIZED' });
    expect(tokensIssued).toBe(1);
    expect(productCalls).toHaveLength(1);
  });

  it('sends MTN’s request: headers, major-unit amount string, externalId and a sanitised note', async () => {
    let seen: { headers: Record<string, string | undefined>; body: unknown } | undefined;
    script = (req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => {
        seen = {
          headers: {
            reference: req.get('x-reference-id'),
            environment: req.get('x-target-environment'),
            callback: req.get('x-callback-url'),
            key: req.get('ocp-apim-subscription-key'),
            type: req.get('content-type'),
          },
          body: JSON.parse(raw),
        };
        res.status(202).end();
      });
    };
    const { providerReference } = await adapter().collect({ ...collectRequest(), description: `Kofi’s ${'x'.repeat(200)}` });
    expect(seen!.headers).toEqual({
      reference: providerReference,
      environment: 'sandbox',
      callback: `http://127.0.0.1:1/internal/callbacks/mtn-momo/${CALLBACK_TOKEN}`,
      key: CREDENTIALS.collectionSubscriptionKey,
      type: 'application/json',
    });
    const body = seen!.body as Record<string, string>;
    expect(body).toMatchObject({ amount: '10.50', currency: 'EUR', externalId: 'chg_0001', payer: { partyIdType: 'MSISDN', partyId: WALLET } });
    expect(body.payerMessage).toHaveLength(160);
    expect(body.payerMessage).not.toMatch(/['’]/);
  });

  it('status reads reason as {code, message} and the undocumented CREATED as pending', async () => {
    script = (_req, res) => void res.json({ externalId: 'chg_1', status: 'FAILED', reason: { code: 'PAYER_LIMIT_REACHED', message: 'Limit' } });
    expect(await adapter().status(statusQuery)).toEqual({ status: 'failed', reason: 'PAYER_LIMIT_REACHED' });
    script = (_req, res) => void res.json({ externalId: 'chg_1', status: 'CREATED' });
    expect(await adapter().status(statusQuery)).toEqual({ status: 'pending' });
  });

  it('an unreadable or unknown status answer is a protocol error', async () => {
    script = (_req, res) => void res.type('text/html').send('<html>gateway</html>');
    expect((await railError(adapter().status(statusQuery))).kind).toBe('protocol');
    script = (_req, res) => void res.json({ status: 'MAYBE' });
    expect((await railError(adapter().status(statusQuery))).kind).toBe('protocol');
  });

  it('a 5xx without MTN’s body is still a server failure', async () => {
    script = (_req, res) => void res.status(502).send('Bad Gateway');
    const error = await railError(adapter().payout(payoutRequest()));
    expect(error.kind).toBe('server');
    expect(error.detail).toEqual({ httpStatus: 502 });
  });

  it('basicuserinfo with only `name` still resolves', async () => {
    script = (_req, res) => void res.json({ name: 'Yaw Mensah' });
    expect(await adapter().resolveName({ channel: 'momo', msisdn: WALLET })).toEqual({ name: 'Yaw Mensah' });
  });
});
