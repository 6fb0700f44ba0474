// railyard's own API client (src/kernel/api-client.ts), which the dashboard, the CLI, the replay,
// the contracts' remote run, the bench and the tests share: it speaks to the API as a merchant's
// code does, so the server accepts what it signs and answers its retries from the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, envelopeOfAnswer, merchantHeaders } from '../../src/kernel/api-client.ts';
import { HttpConnectionError } from '../../src/kernel/http-exchange.ts';
import { signRequest } from '../../src/kernel/sign-request.ts';
import { freePort } from '../support/serve-process.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
let api: ApiClient;

beforeAll(async () => {
  sb = await startTestSandbox();
  api = new ApiClient({ baseUrl: sb.baseUrl, key: sb.key, signingSecret: sb.signingSecret, now: () => sb.ry.wallClock.now() });
  await sb.fund(100_000);
});
afterAll(() => sb.close());

const transfer = { amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };

describe('the API client', () => {
  it('sends a signed, idempotent transfer that the server accepts, and reads the envelope', async () => {
    const res = await api.request({ method: 'POST', path: '/api/v1/transfers', body: transfer, idempotencyKey: 'client-1', sign: true });
    expect(res.status).toBe(201);
    const envelope = envelopeOfAnswer<{ id: string; status: string }>(res);
    expect(envelope.status).toBe(true);
    expect(envelope.data?.id).toMatch(/^trf_/);
  });

  it('sends a retry under the same Idempotency-Key that the server answers from the store', async () => {
    const first = await api.request({ method: 'POST', path: '/api/v1/transfers', body: transfer, idempotencyKey: 'client-2', sign: true });
    const again = await api.request({ method: 'POST', path: '/api/v1/transfers', body: transfer, idempotencyKey: 'client-2', sign: true });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('leaves a request unsigned unless asked, which a signed route refuses', async () => {
    const res = await api.request({ method: 'POST', path: '/api/v1/transfers', body: transfer, idempotencyKey: 'client-3' });
    expect(res.status).toBe(401);
    expect(envelopeOfAnswer(res).error?.code).toBe('invalid_signature');
  });

  it('takes the key of one call over its own (a dashboard session), and parses no JSON out of an empty or foreign body', async () => {
    const anonymous = new ApiClient({ baseUrl: sb.baseUrl });
    expect((await anonymous.request({ method: 'GET', path: '/api/v1/wallet' })).status).toBe(401);
    const res = await anonymous.request({ method: 'GET', path: '/api/v1/wallet', key: sb.key });
    expect(res.status).toBe(200);
    expect(envelopeOfAnswer<{ currency: string }>(res).data?.currency).toBe('GHS');
  });

  it('signs with the string of the decisions table, over the exact bytes sent', () => {
    const raw = '{"amount":100}';
    const headers = merchantHeaders({ method: 'post', path: '/api/v1/transfers?x=1', key: 'sk_test_k', idempotencyKey: 'idem-1', sign: true, signingSecret: 'sig_s' }, raw, 1_767_225_600_000);
    expect(headers).toEqual({
      authorization: 'Bearer sk_test_k',
      'idempotency-key': 'idem-1',
      'x-service-timestamp': '1767225600',
      'x-service-signature': signRequest('sig_s', '1767225600', { method: 'POST', pathAndQuery: '/api/v1/transfers?x=1', idempotencyKey: 'idem-1', rawBody: raw }),
    });
  });

  it('throws a connection error when nothing answers, and when its caller stops it', async () => {
    const nowhere = new ApiClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    await expect(nowhere.request({ method: 'GET', path: '/api/v1/wallet' })).rejects.toBeInstanceOf(HttpConnectionError);
    const stop = new AbortController();
    stop.abort();
    await expect(api.request({ method: 'GET', path: '/api/v1/wallet', signal: stop.signal })).rejects.toThrow('stopped');
  });
});
