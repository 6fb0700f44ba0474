// Risk controls of spec 5.7: a key's IP allowlist (403 ip_not_allowed from any other address) and
// role separation (finance and engineering keys each refused the other's actions, 403
// role_forbidden), both enforced where scopes are, on every route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const ALL_SCOPES = ['read', 'trades:write', 'collections:write', 'transfers:write', 'webhooks:write'];

async function issueKey(sb: TestSandbox, body: Record<string, unknown>): Promise<{ id: string; key: string; signing_secret: string }> {
  const res = await sb.post('/api/v1/keys', { environment: 'test', scopes: ALL_SCOPES, ...body });
  if (res.status !== 201) throw new Error(`key not issued: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

describe('IP allowlist', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox();
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('accepts a request from an address on the list (the test client is 127.0.0.1)', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['127.0.0.1', '2001:db8::/32'] });
    const res = await sb.get('/api/v1/wallet', key);
    expect(res.status).toBe(200);
  });

  it('accepts an address inside a CIDR block on the list', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['127.0.0.0/8'] });
    expect((await sb.get('/api/v1/wallet', key)).status).toBe(200);
  });

  it('refuses a request from an address not on the list with 403 ip_not_allowed naming the address, and changes nothing', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['203.0.113.0/24'] });
    const before = await sb.wallet();
    const res = await sb.post('/api/v1/sandbox/wallet/fund', { amount: 5_000 }, { key });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ status: false, error: { code: 'ip_not_allowed', details: { ip: expect.stringMatching(/127\.0\.0\.1$/) } } });
    expect(res.body.message).toMatch(/allowlist/);
    expect(await sb.wallet()).toEqual(before);
  });

  it('applies to the event stream as well', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['203.0.113.7'] });
    const res = await sb.get('/api/v1/events/stream', key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ip_not_allowed');
  });

  it('takes effect at once when the allowlist is changed over the API, and an empty list accepts any address again', async () => {
    const { id, key } = await issueKey(sb, {});
    expect((await sb.get('/api/v1/wallet', key)).status).toBe(200);

    const narrowed = await sb.http
      .put(`/api/v1/keys/${id}/ip_allowlist`)
      .set('Authorization', `Bearer ${sb.key}`)
      .send({ entries: ['198.51.100.1'] });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.data.ip_allowlist).toEqual(['198.51.100.1']);
    expect((await sb.get('/api/v1/wallet', key)).body.error.code).toBe('ip_not_allowed');

    const cleared = await sb.http.put(`/api/v1/keys/${id}/ip_allowlist`).set('Authorization', `Bearer ${sb.key}`).send({ entries: [] });
    expect(cleared.body.data.ip_allowlist).toEqual([]);
    expect((await sb.get('/api/v1/wallet', key)).status).toBe(200);
  });

  it('ignores X-Forwarded-For unless server.trust_proxy is configured', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['127.0.0.1'] });
    const res = await sb.get('/api/v1/wallet', key).set('X-Forwarded-For', '203.0.113.9');
    expect(res.status).toBe(200);
  });
});

describe('IP allowlist behind a trusted proxy', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ server: { trust_proxy: true } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('checks the client address the proxy forwards: allowed and refused', async () => {
    const { key } = await issueKey(sb, { ip_allowlist: ['203.0.113.0/24'] });
    expect((await sb.get('/api/v1/wallet', key).set('X-Forwarded-For', '203.0.113.9')).status).toBe(200);
    const refused = await sb.get('/api/v1/wallet', key).set('X-Forwarded-For', '198.51.100.20');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ code: 'ip_not_allowed', details: { ip: '198.51.100.20' } });
  });
});

describe('roles', () => {
  let sb: TestSandbox;
  let finance: { id: string; key: string; signing_secret: string };
  let engineering: { id: string; key: string; signing_secret: string };

  beforeAll(async () => {
    sb = await startTestSandbox();
    finance = await issueKey(sb, { role: 'finance' });
    engineering = await issueKey(sb, { role: 'engineering' });
    await sb.fund(1_000_000);
  });
  afterAll(async () => {
    await sb?.close();
  });

  const refusedAs = (res: { status: number; body: any }, role: string, area: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body).toMatchObject({ status: false, error: { code: 'role_forbidden', details: { role, area } } });
  };

  describe('a finance key', () => {
    it('funds the wallet, charges, transfers and pays out', async () => {
      expect((await sb.post('/api/v1/sandbox/wallet/fund', { amount: 1_000 }, { key: finance.key })).status).toBe(200);
      expect((await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: finance.key })).status).toBe(201);
      const transfer = await sb.transfer({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: finance.key, signingSecret: finance.signing_secret });
      expect(transfer.status, JSON.stringify(transfer.body)).toBe(201);
      const payout = await sb.post(
        '/v1/payouts',
        { amount: '5.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
        { key: finance.key, sign: true, signingSecret: finance.signing_secret, idempotencyKey: 'fin-payout-1' },
      );
      expect(payout.status, JSON.stringify(payout.body)).toBe(201);
    });

    it('reads the ledger entries and settlement reports', async () => {
      expect((await sb.get('/v1/ledger/entries', finance.key)).status).toBe(200);
      expect((await sb.get('/v1/settlements', finance.key)).status).toBe(200);
    });

    it('reads shared data: the merchant, the wallet, transactions and events', async () => {
      for (const path of ['/api/v1/merchant', '/api/v1/wallet', '/api/v1/transactions', '/api/v1/events', '/api/v1/webhook_deliveries']) {
        expect((await sb.get(path, finance.key)).status, path).toBe(200);
      }
    });

    it('is refused keys', async () => {
      refusedAs(await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read'] }, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.post(`/api/v1/keys/${engineering.id}/revoke`, {}, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.get(`/api/v1/keys/${finance.id}/signing_secret`, finance.key), 'finance', 'engineering');
    });

    it('is refused webhooks', async () => {
      refusedAs(await sb.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' }, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.get('/api/v1/webhook_endpoints', finance.key), 'finance', 'engineering');
    });

    it('is refused sandbox controls', async () => {
      refusedAs(await sb.post('/api/v1/sandbox/clock/advance', { seconds: 1 }, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true }, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.post('/api/v1/sandbox/market/freeze', {}, { key: finance.key }), 'finance', 'engineering');
      refusedAs(await sb.get('/api/v1/sandbox/scenarios', finance.key), 'finance', 'engineering');
    });

    it('is refused the service ladder, which is for admin keys', async () => {
      refusedAs(await sb.post('/api/v1/merchant/ladder', { action: 'go_live' }, { key: finance.key }), 'finance', 'admin');
    });
  });

  describe('an engineering key', () => {
    it('manages keys, webhooks and sandbox controls', async () => {
      const key = await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read'] }, { key: engineering.key });
      expect(key.status).toBe(201);
      expect(key.body.data.role).toBe('engineering');
      expect((await sb.post('/api/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled: false }, { key: engineering.key })).status).toBe(201);
      expect((await sb.post('/api/v1/sandbox/clock/advance', { seconds: 1 }, { key: engineering.key })).status).toBe(200);
      expect((await sb.get('/api/v1/sandbox/scenarios', engineering.key)).status).toBe(200);
      expect((await sb.get(`/api/v1/keys/${engineering.id}/signing_secret`, engineering.key)).body.data.signing_secret).toBe(engineering.signing_secret);
    });

    it('reads shared data', async () => {
      for (const path of ['/api/v1/merchant', '/api/v1/wallet', '/api/v1/transactions', '/api/v1/events']) {
        expect((await sb.get(path, engineering.key)).status, path).toBe(200);
      }
    });

    it('is refused transfers, payouts, charges and wallet funding, and no money moves', async () => {
      const before = await sb.wallet();
      refusedAs(
        await sb.transfer({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: engineering.key, signingSecret: engineering.signing_secret }),
        'engineering',
        'finance',
      );
      refusedAs(
        await sb.post(
          '/v1/payouts',
          { amount: '5.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
          { key: engineering.key, sign: true, signingSecret: engineering.signing_secret, idempotencyKey: 'eng-payout-1' },
        ),
        'engineering',
        'finance',
      );
      refusedAs(
        await sb.post('/v1/payouts/bulk', { currency: 'GHS', items: [] }, { key: engineering.key, sign: true, signingSecret: engineering.signing_secret, idempotencyKey: 'eng-bulk-1' }),
        'engineering',
        'finance',
      );
      refusedAs(await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { key: engineering.key }), 'engineering', 'finance');
      refusedAs(await sb.post('/api/v1/sandbox/wallet/fund', { amount: 1_000 }, { key: engineering.key }), 'engineering', 'finance');
      refusedAs(
        await sb.post('/v1/collections', { amount: '5.00', currency: 'GHS', channel: 'momo', customer: { msisdn: '0551234987' } }, { key: engineering.key, idempotencyKey: 'eng-col-1' }),
        'engineering',
        'finance',
      );
      expect(await sb.wallet()).toEqual(before);
    });

    it('is refused the ledger entries and settlement reports', async () => {
      refusedAs(await sb.get('/v1/settlements', engineering.key), 'engineering', 'finance');
      refusedAs(await sb.get('/v1/ledger/entries', engineering.key), 'engineering', 'finance');
    });

    it('cannot issue a key of another role, so it cannot make itself a finance or admin key', async () => {
      for (const role of ['finance', 'admin']) {
        const res = await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read'], role }, { key: engineering.key });
        expect(res.status, role).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'forbidden', details: { role: 'engineering', key_role: role } });
      }
    });
  });

  it("documents each route's area in the OpenAPI, with role_forbidden among its errors", async () => {
    const doc = (await sb.http.get('/openapi.json')).body;
    expect(doc.paths['/api/v1/transfers'].post['x-role-area']).toBe('finance');
    expect(doc.paths['/api/v1/webhook_endpoints'].post['x-role-area']).toBe('engineering');
    expect(doc.paths['/api/v1/transfers'].post.responses['403'].description).toMatch(/role_forbidden/);
    expect(doc.paths['/api/v1/wallet'].get['x-role-area']).toBeUndefined();
    expect(doc.paths['/api/v1/wallet'].get.responses['403'].description).toMatch(/ip_not_allowed/);
  });
});
