// No secret reaches the log. A whole flow runs with request logging on (charges settled by MTN's
// and Hubtel's callbacks, a transfer by mobile money and one by the bank rail, webhooks signed
// with a whsec_ secret, a new API key and its signing secret, a dashboard sign-in), and every
// log line is searched for every secret railyard was configured with or handed out.
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackToken } from '../../src/config/config.ts';
import { jsonLogger } from '../../src/kernel/logger.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import type { RailyardConfig } from '../../src/railyard-config.ts';

let sb: TestSandbox;
let receiver: Server;
const lines: string[] = [];
const deliveries: string[] = [];

beforeAll(async () => {
  const app = express();
  app.post('/hooks', express.text({ type: '*/*' }), (req, res) => {
    deliveries.push(String(req.headers['webhook-signature']));
    res.status(200).end();
  });
  receiver = createServer(app);
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const hooks = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  sb = await startTestSandbox(
    {
      log_requests: true,
      webhooks: { sandbox_url: hooks },
      // Credentials as an operator would configure them, each distinct and long enough to find.
      sandbox: { key: 'sk_test_operator_configured_key_0001', signing_secret: 'sig_test_operator_configured_secret' },
      providers: {
        'mtn-momo': {
          api_user: 'mtn-user-0f9e8d7c6b5a',
          api_key: 'mtn-key-1a2b3c4d5e6f',
          collection_subscription_key: 'mtn-coll-sub-99887766',
          disbursement_subscription_key: 'mtn-disb-sub-55443322',
        },
        hubtel: { client_id: 'hubtel-client-31415926', client_secret: 'hubtel-secret-27182818', callback_token: 'hubtel-callback-token-configured' },
        'bank-rail': { client_id: 'bank-client-16180339', client_secret: 'bank-secret-14142135' },
      },
    },
    undefined,
    [],
    { logger: jsonLogger((line) => lines.push(line)) },
  );
});
afterAll(async () => {
  await sb?.close();
  await new Promise<void>((done) => receiver?.close(() => done()));
});

/** Every secret this configuration holds, with the Basic credentials the adapters send. */
function configuredSecrets(config: RailyardConfig): string[] {
  const p = config.providers;
  const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
  return [
    config.sandbox.key,
    config.sandbox.signing_secret,
    ...(['mtn-momo', 'hubtel', 'bank-rail', 'paystack', 'card-processor', 'direct-debit', 'bills'] as const).map((name) => callbackToken(config, name)),
    p['mtn-momo'].api_user,
    p['mtn-momo'].api_key,
    p['mtn-momo'].collection_subscription_key,
    p['mtn-momo'].disbursement_subscription_key,
    basic(p['mtn-momo'].api_user, p['mtn-momo'].api_key),
    p.hubtel.client_secret,
    basic(p.hubtel.client_id, p.hubtel.client_secret),
    p['bank-rail'].client_secret,
    p.paystack.secret_key,
    p['card-processor'].api_key,
    p['card-processor'].webhook_secret,
    p['direct-debit'].api_key,
    p['direct-debit'].signing_secret,
    p.bills.api_key,
    p.bills.signing_secret,
  ];
}

const momo = (msisdn: string) => ({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn });

describe('the log', () => {
  it('holds no configured secret, callback token, key, signing secret or webhook secret after a whole flow', async () => {
    const secrets = configuredSecrets(sb.ry.config);
    // Handed out while running: a new key and its signing secret, a webhook endpoint's secret.
    const issued = await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read', 'collections:write', 'transfers:write'] });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    secrets.push(issued.body.data.key, issued.body.data.signing_secret, `Bearer ${issued.body.data.key}`, `Bearer ${sb.key}`);
    expect(sb.ry.sandbox.webhookSecret).toMatch(/^whsec_/);
    secrets.push(sb.ry.sandbox.webhookSecret!);
    const endpoint = await sb.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/never', event_types: ['charge.success'] });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    secrets.push(endpoint.body.data.secret);

    // Charges by MTN (0551234987) and by Hubtel (a Telecel number), each settled by a callback.
    const mtn = await sb.charge(momo('0551234987'));
    const hubtel = await sb.charge(momo('0201234567'), { key: issued.body.data.key });
    expect([mtn.status, hubtel.status]).toEqual([201, 201]);
    expect([mtn.body.data.provider, hubtel.body.data.provider]).toEqual(['mtn-momo', 'hubtel']);
    await sb.fund(100_000);
    const transfer = await sb.transfer(momo('0551234987'));
    const bank = await sb.transfer({ amount: 10_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' });
    expect([transfer.status, bank.status]).toEqual([201, 201]);
    await sb.advance(10);
    for (const [kind, id] of [
      ['charges', mtn.body.data.id],
      ['charges', hubtel.body.data.id],
      ['transfers', transfer.body.data.id],
      ['transfers', bank.body.data.id],
    ]) {
      expect((await sb.get(`/api/v1/${kind}/${id}`)).body.data.status, id).toBe('success');
    }
    // A forged callback is refused and logged.
    expect((await sb.http.post(`/internal/callbacks/mtn-momo/${callbackToken(sb.ry.config, 'mtn-momo')}x`).send({})).status).toBeGreaterThanOrEqual(400);
    expect(deliveries.length).toBeGreaterThan(0);

    // The dashboard: sign in with the key and its signing secret.
    const agent = (await import('supertest')).default.agent(sb.baseUrl);
    const form = await agent.get('/dashboard/sign-in');
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1];
    const signIn = await agent.post('/dashboard/sign-in').type('form').send({ csrf, api_key: sb.key, signing_secret: sb.signingSecret });
    expect(signIn.status).toBe(303);
    expect((await agent.get('/dashboard')).status).toBe(200);

    // The flow was logged: the callbacks' requests among them.
    const paths = lines
      .map((l) => JSON.parse(l) as { msg: string; path?: string })
      .filter((l) => l.msg === 'request')
      .map((l) => l.path);
    expect(paths.filter((p) => p?.startsWith('/internal/callbacks/mtn-momo/'))).not.toHaveLength(0);
    expect(paths.filter((p) => p?.startsWith('/internal/callbacks/hubtel/'))).not.toHaveLength(0);
    expect(paths.filter((p) => p?.startsWith('/internal/callbacks/bank-rail/'))).not.toHaveLength(0);
    expect(paths).toContain('/dashboard/sign-in');
    expect(paths).toContain('/internal/callbacks/mtn-momo/[redacted]');
    expect(paths).toContain('/mocks/mtn-momo/collection/v1_0/requesttopay');

    const leaks = lines.flatMap((line) => secrets.filter((s) => line.includes(s)).map((s) => `${s} in ${line}`));
    expect(leaks).toEqual([]);
  });
});
