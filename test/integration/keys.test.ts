// Key management over the API: list (never a key or a secret; current marks the caller), issue
// (key and signing secret shown once), revoke (401 from then on), the IP allowlist, and the
// explicit reveal of a signing secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;

beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(async () => {
  await sb?.close();
});

const issue = (body: Record<string, unknown>, key = sb.key) => sb.post('/api/v1/keys', { environment: 'test', scopes: ['read'], ...body }, { key });
const list = async (key = sb.key) => (await sb.get('/api/v1/keys', key)).body.data as Record<string, unknown>[];
const put = (path: string, body: object, key = sb.key) => sb.http.put(path).set('Authorization', `Bearer ${key}`).send(body);

describe('POST /api/v1/keys', () => {
  it('issues a key with scopes, role and allowlist, showing the key and its signing secret once', async () => {
    const res = await issue({ environment: 'live', scopes: ['read', 'transfers:write'], role: 'finance', ip_allowlist: ['203.0.113.0/24'] });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^key_/),
      object: 'api_key',
      environment: 'live',
      key_hint: expect.stringMatching(/^sk_live_.{4}….{4}$/),
      scopes: ['read', 'transfers:write'],
      role: 'finance',
      ip_allowlist: ['203.0.113.0/24'],
      created_at: expect.any(String),
      revoked_at: null,
      current: false,
      key: expect.stringMatching(/^sk_live_/),
      signing_secret: expect.stringMatching(/^sig_live_/),
    });
  });

  it("defaults the role to the calling key's", async () => {
    expect((await issue({})).body.data.role).toBe('admin');
  });

  it('refuses scopes the calling key does not hold', async () => {
    const readOnly = (await issue({ scopes: ['read'] })).body.data.key;
    const res = await issue({ scopes: ['read', 'transfers:write'] }, readOnly);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'forbidden', details: { scopes: ['transfers:write'] } });
  });
});

describe('GET /api/v1/keys', () => {
  it('lists the keys of both environments without any key or secret, and marks the calling one current', async () => {
    const issued = (await issue({ environment: 'live' })).body.data;
    const keys = await list();
    expect(keys.map((k) => k.id)).toEqual(expect.arrayContaining(['key_sandbox_test', issued.id]));
    expect(keys.find((k) => k.id === 'key_sandbox_test')).toMatchObject({ current: true, role: 'admin', environment: 'test' });
    expect(keys.find((k) => k.id === issued.id)).toMatchObject({ current: false, environment: 'live' });
    const text = JSON.stringify(keys);
    expect(text).not.toContain(issued.key);
    expect(text).not.toContain(issued.signing_secret);
    expect(text).not.toContain(sb.signingSecret);
    for (const k of keys) expect(Object.keys(k).sort()).toEqual(['created_at', 'current', 'environment', 'id', 'ip_allowlist', 'key_hint', 'object', 'revoked_at', 'role', 'scopes']);
  });

  it('shows a finance key only itself, so it learns its own role and allowlist', async () => {
    const finance = (await issue({ role: 'finance', ip_allowlist: ['127.0.0.1'] })).body.data;
    expect(await list(finance.key)).toEqual([expect.objectContaining({ id: finance.id, current: true, role: 'finance', ip_allowlist: ['127.0.0.1'] })]);
  });
});

describe('POST /api/v1/keys/:id/revoke', () => {
  it('revokes a key: its next request is 401, and revoking again changes nothing', async () => {
    const issued = (await issue({})).body.data;
    expect((await sb.get('/api/v1/wallet', issued.key)).status).toBe(200);

    const res = await sb.post(`/api/v1/keys/${issued.id}/revoke`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: issued.id, revoked_at: expect.any(String) });
    const denied = await sb.get('/api/v1/wallet', issued.key);
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe('unauthorized');

    const again = await sb.post(`/api/v1/keys/${issued.id}/revoke`, {});
    expect(again.body.data.revoked_at).toBe(res.body.data.revoked_at);
    expect((await list()).find((k) => k.id === issued.id)!.revoked_at).toBe(res.body.data.revoked_at);
  });

  it('refuses to revoke a key with scopes the caller does not hold', async () => {
    const readOnly = (await issue({ scopes: ['read'] })).body.data.key;
    const res = await sb.post('/api/v1/keys/key_sandbox_test/revoke', {}, { key: readOnly });
    expect(res.status).toBe(403);
    expect((await sb.get('/api/v1/wallet')).status).toBe(200);
  });

  it("answers 404 for another merchant's key id or an id of nothing", async () => {
    const res = await sb.post('/api/v1/keys/key_nope/revoke', {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: false, message: "No such API key: 'key_nope'", error: { code: 'not_found', details: { id: 'key_nope' } } });
  });
});

describe('PUT /api/v1/keys/:id/ip_allowlist', () => {
  it('replaces the allowlist, accepting IPv4, IPv6 and CIDR entries', async () => {
    const issued = (await issue({})).body.data;
    const res = await put(`/api/v1/keys/${issued.id}/ip_allowlist`, { entries: ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1'] });
    expect(res.status).toBe(200);
    expect(res.body.data.ip_allowlist).toEqual(['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1']);
  });

  it('refuses an entry that is not an address or CIDR block, naming it, and keeps the old list', async () => {
    const issued = (await issue({ ip_allowlist: ['127.0.0.1'] })).body.data;
    const res = await put(`/api/v1/keys/${issued.id}/ip_allowlist`, { entries: ['127.0.0.1', 'example.com'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'entries.1', message: expect.stringMatching(/"example.com" must be an IPv4 or IPv6 address/) }]);
    expect((await list()).find((k) => k.id === issued.id)!.ip_allowlist).toEqual(['127.0.0.1']);
  });
});

describe('GET /api/v1/keys/:id/signing_secret', () => {
  it('reveals the signing secret of a key on explicit request', async () => {
    const issued = (await issue({})).body.data;
    const res = await sb.get(`/api/v1/keys/${issued.id}/signing_secret`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: issued.id, signing_secret: issued.signing_secret });
  });

  it("never reveals a live key's secret to a test key", async () => {
    const live = (await issue({ environment: 'live' })).body.data;
    const res = await sb.get(`/api/v1/keys/${live.id}/signing_secret`);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'forbidden', details: { environment: 'live' } });
    expect(JSON.stringify(res.body)).not.toContain(live.signing_secret);
  });
});
