import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRailyard, startRailyard, type RailyardSandbox } from '../../src/testing/index.ts';
import { portAccepts } from '../support/port-accepts.ts';

// railyard/testing as a merchant's suite uses it: one in-process sandbox, merchants of its own.

const SUCCESS = '0551234987';
const charge = (msisdn = SUCCESS, amount = 10_000) => ({ amount, currency: 'GHS', channel: 'momo', msisdn });

let sandbox: RailyardSandbox;
beforeAll(async () => {
  sandbox = await startRailyard();
});
afterAll(() => sandbox.stop());

describe('startRailyard()', () => {
  it('listens on a loopback port of its own and hands out the sandbox key and its signing secret', async () => {
    expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.key).toMatch(/^sk_test_/);
    expect(sandbox.signingSecret.length).toBeGreaterThanOrEqual(16);
    const health = await sandbox.get('/healthz');
    expect(health.body).toMatchObject({ status: 'ok', clock: 'virtual' });
  });

  it('signs a transfer and gives it an Idempotency-Key without being told', async () => {
    const merchant = await sandbox.newMerchant();
    await merchant.fund(50_000);
    const transfer = await merchant.post('/api/v1/transfers', charge(SUCCESS, 2_000));
    expect(transfer.status).toBe(201);
    expect(transfer.body.data).toMatchObject({ object: 'transfer', status: 'pending' });
  });

  it('sends the Idempotency-Key it is given, so a retry gets the stored answer', async () => {
    const merchant = await sandbox.newMerchant();
    await merchant.fund(50_000);
    const first = await merchant.post('/api/v1/transfers', charge(SUCCESS, 2_000), { idempotencyKey: 'order-42' });
    const retry = await merchant.post('/api/v1/transfers', charge(SUCCESS, 2_000), { idempotencyKey: 'order-42' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data.id).toBe(first.body.data.id);
    expect((await merchant.get('/api/v1/wallet')).body.data).toMatchObject({ available: 47_900, reserved: 2_100 });
  });

  it('moves business time with clock.advance, and the provider callback settles the charge', async () => {
    const merchant = await sandbox.newMerchant();
    const created = await merchant.post('/api/v1/charges', charge());
    expect(created.body.data.status).toBe('pending_provider');
    const before = Date.parse(await sandbox.clock.now());
    const advanced = await sandbox.clock.advance('5s');
    expect(Date.parse(advanced.now) - before).toBe(5_000);
    expect((await merchant.get(`/api/v1/charges/${created.body.data.id}`)).body.data.status).toBe('success');
  });

  it('refuses what is not a duration', async () => {
    await expect(sandbox.clock.advance('soon')).rejects.toThrow(/not a duration: "soon"/);
  });

  it("delivers each merchant's webhooks, signed, to its own inbox, where waitFor finds them", async () => {
    const [a, b] = [await sandbox.newMerchant(), await sandbox.newMerchant()];
    const created = await a.post('/api/v1/charges', charge());
    await sandbox.clock.advance(5);
    const event = await a.webhooks.waitFor<{ id: string; amount: number }>('charge.success', (c) => c.id === created.body.data.id);
    expect(event.data.object).toMatchObject({ id: created.body.data.id, amount: 10_000 });
    expect(b.webhooks.received).toEqual([]);
  });

  it('waits for a webhook that has not come yet, and gives up after its timeout naming what did come', async () => {
    const merchant = await sandbox.newMerchant();
    const pending = merchant.webhooks.waitFor('charge.success');
    await merchant.post('/api/v1/charges', charge());
    await sandbox.clock.advance('5s');
    expect((await pending).type).toBe('charge.success');
    await expect(merchant.webhooks.waitFor('charge.failed', undefined, { timeout: 50 })).rejects.toThrow('no charge.failed webhook within 50 ms (received: charge.pending, charge.success)');
  });

  it('refuses a delivery whose signature does not verify, and keeps it out of the inbox', async () => {
    const merchant = await sandbox.newMerchant();
    const forged = await fetch(merchant.webhooks.url, {
      method: 'POST',
      headers: { 'webhook-id': 'evt_forged', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJl' },
      body: JSON.stringify({ id: 'evt_forged', type: 'charge.success', data: { object: {} } }),
    });
    expect(forged.status).toBe(401);
    expect(merchant.webhooks.received).toEqual([]);
  });

  it('gives every new merchant its own key, signing secret and empty wallet', async () => {
    const [a, b] = [await sandbox.newMerchant(), await sandbox.newMerchant({ name: 'Second shop' })];
    expect(a.id).not.toBe(b.id);
    expect(a.key).not.toBe(b.key);
    expect(a.signingSecret).not.toBe(b.signingSecret);
    await a.fund(1_000);
    expect((await a.get('/api/v1/wallet')).body.data.available).toBe(1_000);
    expect((await b.get('/api/v1/wallet')).body.data.available).toBe(0);
    expect((await b.get('/api/v1/merchant')).body.data.name).toBe('Second shop');
  });
});

describe('scenarios.use()', () => {
  const failing = `
version: 1
name: declines
rules:
  - name: the success number declines
    match: { msisdn: "${SUCCESS}" }
    collect:
      any: { respond: accept, callback: { after_seconds: 1, status: failed, reason: NOT_ENOUGH_FUNDS } }
`;

  it('takes YAML text whose rules win over those loaded at start, and reset() takes them back', async () => {
    const merchant = await sandbox.newMerchant();
    sandbox.scenarios.use(failing);
    const declined = await merchant.post('/api/v1/charges', charge());
    await sandbox.clock.advance('1s');
    await merchant.webhooks.waitFor('charge.failed', (c: { id: string }) => c.id === declined.body.data.id);
    sandbox.scenarios.reset();
    const settled = await merchant.post('/api/v1/charges', charge());
    await sandbox.clock.advance('5s');
    await merchant.webhooks.waitFor('charge.success', (c: { id: string }) => c.id === settled.body.data.id);
  });

  it('is scoped to its sandbox: another sandbox keeps the shipped behaviour', async () => {
    const other = await startRailyard({ webhooks: false });
    try {
      sandbox.scenarios.use(failing);
      const created = await other.post('/api/v1/charges', charge());
      await other.clock.advance('5s');
      expect((await other.get(`/api/v1/charges/${created.body.data.id}`)).body.data.status).toBe('success');
    } finally {
      sandbox.scenarios.reset();
      await other.stop();
    }
  });

  it("applies a file's api: faults to railyard's own API too: a lost answer, and the retry gets the stored one", async () => {
    const merchant = await sandbox.newMerchant();
    sandbox.scenarios.use(`
version: 1
name: lost answers
api:
  - name: the first charge's answer is lost after the commit
    match: { route: /api/v1/charges, method: POST }
    drop: after_commit
    times: 1
`);
    try {
      await expect(merchant.post('/api/v1/charges', charge(), { idempotencyKey: 'lost-answer-1' })).rejects.toThrow();
      const retry = await merchant.post('/api/v1/charges', charge(), { idempotencyKey: 'lost-answer-1' });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    } finally {
      sandbox.scenarios.reset();
    }
    // reset() takes the fault back with the rest.
    expect((await merchant.post('/api/v1/charges', charge())).status).toBe(201);
  });

  it('reports a bad file with its place', () => {
    expect(() => sandbox.scenarios.use('version: 1\nname: bad\nrules:\n  - match: { msisdn: 0551234987 }\n')).toThrow(/scenarios\.use #\d+:4:/);
  });
});

describe('the store and stop()', () => {
  it('keeps a temporary SQLite file while it runs and removes it on stop(), closing the port', async () => {
    const temp = await startRailyard({ store: 'temp', webhooks: false });
    const file = temp.railyard.config.db;
    expect(existsSync(file)).toBe(true);
    const port = Number(new URL(temp.baseUrl).port);
    await temp.stop();
    expect(existsSync(file)).toBe(false);
    expect(await portAccepts(port)).toBe(false);
  });
});

describe('connectRailyard()', () => {
  it('reaches a running sandbox from the environment a global setup hands on, and makes merchants there', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, sandbox.env);
    try {
      const connection = await connectRailyard();
      try {
        expect(connection.id).toBe('mch_sandbox');
        const merchant = await connection.newMerchant();
        await merchant.fund(10_000);
        const transfer = await merchant.post('/api/v1/transfers', charge(SUCCESS, 2_000));
        expect(transfer.status).toBe(201);
        await connection.clock.advance('5s');
        await merchant.webhooks.waitFor('transfer.success', (t: { id: string }) => t.id === transfer.body.data.id);
        expect(() => connection.webhooks.received).toThrow(/no webhook endpoint/);
      } finally {
        await connection.close();
      }
    } finally {
      process.env = saved;
    }
  });

  it('says what it needs when nothing tells it where railyard is', async () => {
    await expect(connectRailyard({ baseUrl: '', key: '', signingSecret: '' })).rejects.toThrow(/needs baseUrl, key and signingSecret/);
  });
});
