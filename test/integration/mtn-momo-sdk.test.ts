import express from 'express';
import momo from 'mtn-momo';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VIRTUAL_EPOCH, VirtualClock, SystemClock } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { createMtnMomoMock, type MtnMomoCredentials } from '../../src/providers/mtn-momo/mock.ts';
import { ProviderHealth } from '../../src/rails/provider-health.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { MockTransactionBooks } from '../../src/mocks/engine/mock-transaction-book.ts';

// The independent `mtn-momo` npm client (sparkplug/momoapi-node), used unchanged: it is only
// told the mock's base URL. If this passes, the mock speaks MTN's wire format as clients read it.

const CREDENTIALS: MtnMomoCredentials = {
  apiUser: '0b6a6f7e-3c1d-4e2f-8a9b-7c6d5e4f3a2b',
  apiKey: 'railyard-preprovisioned-key',
  collectionSubscriptionKey: 'sdk-collection-subscription-key',
  disbursementSubscriptionKey: 'sdk-disbursement-subscription-key',
  targetEnvironment: 'sandbox',
};
const CALLBACK_SECONDS = 5;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the mtn-momo SDK, pointed at the MTN MoMo mock, works unchanged', () => {
  const store = new SqliteStore(':memory:');
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const scheduler = new Scheduler({ store, clock, ids: new IdGenerator(clock, new SeededRandom(7)), logger: silentLogger, wallClock: new SystemClock(), boot: 1 });
  const callbacks: { method: string; body: unknown }[] = [];
  let server: Server;
  let base: string;
  let collections: ReturnType<ReturnType<typeof momo.create>['Collections']>;
  let disbursements: ReturnType<ReturnType<typeof momo.create>['Disbursements']>;

  beforeAll(async () => {
    const app = express();
    app.use(
      '/mocks/mtn-momo',
      createMtnMomoMock(
        {
          clock,
          scheduler,
          store,
          scenarios: { decide: () => undefined }, // no rules: MTN's own sandbox behaviour
          health: new ProviderHealth(),
          logger: silentLogger,
          books: new MockTransactionBooks(store, clock),
          maxHoldMs: 1000,
          defaultCallbackSeconds: CALLBACK_SECONDS,
        },
        CREDENTIALS,
      ),
    );
    app.use('/internal/callbacks/mtn-momo', express.json({ type: '*/*' }), (req, res) => {
      callbacks.push({ method: req.method, body: req.body });
      res.status(200).end();
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const client = momo.create({ callbackHost: '127.0.0.1', baseUrl: `${base}/mocks/mtn-momo`, environment: momo.Environment.SANDBOX });
    // Sandbox provisioning through the SDK's own helpers: one API user serves both products.
    const users = client.Users({ primaryKey: CREDENTIALS.collectionSubscriptionKey });
    const userId = await users.create('127.0.0.1');
    const { apiKey } = await users.login(userId);
    expect(userId).toMatch(UUID);
    expect(apiKey).toEqual(expect.any(String));

    collections = client.Collections({ userId, userSecret: apiKey, primaryKey: CREDENTIALS.collectionSubscriptionKey });
    disbursements = client.Disbursements({ userId, userSecret: apiKey, primaryKey: CREDENTIALS.disbursementSubscriptionKey });
  });

  afterAll(async () => {
    await scheduler.stop();
    server.closeAllConnections();
    server.close();
    await store.close();
  });

  const payer = (partyId: string) => ({ partyIdType: momo.PayerType.MSISDN, partyId });

  it('requestToPay is PENDING, then SUCCESSFUL with a financialTransactionId once the callback time passes', async () => {
    const referenceId = await collections.requestToPay({
      amount: '50',
      currency: 'EUR',
      externalId: 'sdk-collect-1',
      payer: payer('233241234567'),
      payerMessage: 'Pay for order 1',
      payeeNote: 'Order 1',
      callbackUrl: `${base}/internal/callbacks/mtn-momo/sdk`,
    });
    expect(referenceId).toMatch(UUID);
    expect(await collections.getTransaction(referenceId)).toMatchObject({ externalId: 'sdk-collect-1', amount: '50', status: 'PENDING' });

    await scheduler.advanceBy(CALLBACK_SECONDS * 1000);

    expect(await collections.getTransaction(referenceId)).toMatchObject({
      status: 'SUCCESSFUL',
      currency: 'EUR',
      payer: payer('233241234567'),
      financialTransactionId: expect.stringMatching(/^\d+$/),
    });
    expect(callbacks.at(-1)).toMatchObject({ method: 'PUT', body: { externalId: 'sdk-collect-1', status: 'SUCCESSFUL' } });
  });

  it('getBalance returns an available balance and its currency', async () => {
    expect(await collections.getBalance()).toEqual({ availableBalance: expect.any(String), currency: expect.any(String) });
    expect(await disbursements.getBalance()).toEqual({ availableBalance: expect.any(String), currency: expect.any(String) });
  });

  it('isPayerActive checks the account holder on both products', async () => {
    // Collections hands back the raw body; Disbursements unwraps `result`.
    expect(await collections.isPayerActive('233241234567')).toEqual({ result: true });
    expect(await disbursements.isPayerActive('233241234567')).toBe(true);
    expect(await disbursements.isPayerActive('46733123451')).toBe(false); // MTN's NotActive number
  });

  it('a disbursement transfer is PENDING, then SUCCESSFUL', async () => {
    const referenceId = await disbursements.transfer({
      amount: '20',
      currency: 'EUR',
      externalId: 'sdk-payout-1',
      payee: payer('233241234567'),
      payerMessage: 'Refund',
      payeeNote: 'Refund',
    });
    expect(referenceId).toMatch(UUID);
    expect(await disbursements.getTransaction(referenceId)).toMatchObject({ status: 'PENDING', payee: payer('233241234567') });
    await scheduler.advanceBy(CALLBACK_SECONDS * 1000);
    expect(await disbursements.getTransaction(referenceId)).toMatchObject({ status: 'SUCCESSFUL', externalId: 'sdk-payout-1' });
  });

  describe('MTN’s sandbox test numbers behave as MTN documents', () => {
    it('46733123450 fails with INTERNAL_PROCESSING_ERROR after the callback time', async () => {
      const referenceId = await collections.requestToPay({ amount: '5', currency: 'EUR', externalId: 'sdk-450', payer: payer('46733123450') });
      expect(await collections.getTransaction(referenceId)).toMatchObject({ status: 'PENDING' });
      await scheduler.advanceBy(CALLBACK_SECONDS * 1000);
      const error = await collections.getTransaction(referenceId).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(momo.InternalProcessingError);
      expect((error as InstanceType<typeof momo.MtnMoMoError>).transaction).toMatchObject({ status: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' });
    });

    it('46733123451 is rejected by the payer: APPROVAL_REJECTED', async () => {
      const referenceId = await collections.requestToPay({ amount: '5', currency: 'EUR', externalId: 'sdk-451', payer: payer('46733123451') });
      await scheduler.advanceBy(CALLBACK_SECONDS * 1000);
      await expect(collections.getTransaction(referenceId)).rejects.toBeInstanceOf(momo.ApprovalRejectedError);
    });

    it('46733123453 stays PENDING', async () => {
      const referenceId = await collections.requestToPay({ amount: '5', currency: 'EUR', externalId: 'sdk-453', payer: payer('46733123453') });
      await scheduler.advanceBy(10 * 60_000);
      expect(await collections.getTransaction(referenceId)).toMatchObject({ status: 'PENDING' });
    });

    it('a transfer to 46733123455 fails with NOT_ENOUGH_FUNDS (the Transfer column)', async () => {
      const referenceId = await disbursements.transfer({ amount: '5', currency: 'EUR', externalId: 'sdk-t455', payee: payer('46733123455') });
      await scheduler.advanceBy(CALLBACK_SECONDS * 1000);
      await expect(disbursements.getTransaction(referenceId)).rejects.toBeInstanceOf(momo.NotEnoughFundsError);
    });
  });

  it('MTN’s synchronous errors reach the SDK as its typed errors', async () => {
    const status = await collections.getTransaction('6f1b0b7e-2c4d-4e8f-9a1b-2c3d4e5f6a7b').catch((err: unknown) => err);
    expect(status).toBeInstanceOf(momo.ResourceNotFoundError);
    const currency = await collections.requestToPay({ amount: '5', currency: 'USD', payer: payer('233241234567') }).catch((err: unknown) => err);
    expect(currency).toBeInstanceOf(momo.InvalidCurrencyError);
  });
});
