import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRailyardClient } from '../../src/client/index.ts';
import { startRailyard, type RailyardSandbox } from '../../src/testing/index.ts';

// railyard/client's own rules on top of openapi-fetch: Idempotency-Keys and signatures.
let sandbox: RailyardSandbox;
beforeAll(async () => {
  sandbox = await startRailyard({ webhooks: false });
  await sandbox.fund(100_000);
});
afterAll(() => sandbox.stop());

const transfer = { amount: 1_000, currency: 'GHS' as const, channel: 'momo' as const, msisdn: '0551234987' };

describe('createRailyardClient()', () => {
  it('signs a transfer and gives it an Idempotency-Key from the generator it was given', async () => {
    const keys: string[] = [];
    const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key, signingSecret: sandbox.signingSecret, idempotencyKey: () => `order-${keys.push('x')}` });
    const first = await client.POST('/api/v1/transfers', { body: transfer });
    expect(first.response.status).toBe(201);
    expect(first.data?.data).toMatchObject({ object: 'transfer', status: 'pending', amount: 1_000 });
    const again = await client.POST('/api/v1/transfers', { body: transfer, params: { header: { 'Idempotency-Key': 'order-1' } } });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data?.data.id).toBe(first.data?.data.id);
  });

  it('answers a typed error envelope', async () => {
    const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key });
    const { error, response } = await client.GET('/api/v1/charges/{id}', { params: { path: { id: 'chg_nothing' } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ status: false, error: { code: 'not_found' } });
  });

  it('refuses to send a signed operation without the signing secret', async () => {
    const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key });
    await expect(client.POST('/api/v1/transfers', { body: transfer })).rejects.toThrow("POST /api/v1/transfers is signed: give createRailyardClient the key's signingSecret");
  });

  it('is refused 401 when it signs with the wrong secret', async () => {
    const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key, signingSecret: 'not_the_signing_secret_of_this_key' });
    const { error, response } = await client.POST('/api/v1/transfers', { body: transfer });
    expect(response.status).toBe(401);
    expect(error).toMatchObject({ error: { code: 'invalid_signature' } });
  });
});
