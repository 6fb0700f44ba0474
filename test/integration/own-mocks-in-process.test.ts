import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// The adapters reach railyard's own mocks without a socket: the mock sees the same request and
// the charge goes the same way, but no connection to this process is opened for it.

let sb: TestSandbox;

beforeEach(async () => {
  sb = await startTestSandbox();
});

afterEach(async () => {
  await sb.close();
});

describe("calls to railyard's own mocks", () => {
  it('charge and settle with no connection to the served port: the mock is reached in process', async () => {
    let connections = 0;
    sb.server.on('connection', () => connections++);
    const charged = await sb.charge({ amount: 2_500, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(charged.status).toBe(201);
    // The charge's own request is the one connection: the MTN mock was called without one.
    expect(connections).toBe(1);
    await sb.advance(10);
    const charge = await sb.get(`/api/v1/charges/${charged.body.data.id}`);
    expect(charge.body.data).toMatchObject({ status: 'success', provider: 'mtn-momo' });
  });

  it('are still recorded by the requests inspector as mock calls, linked to the charge', async () => {
    const charged = await sb.charge({ amount: 2_500, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    const requests = (await sb.get('/api/v1/requests?page_size=50')).body.data as {
      kind: string;
      provider: string | null;
      method: string;
      path: string;
      status: number | null;
      object_id: string | null;
    }[];
    expect(requests).toContainEqual(
      expect.objectContaining({ kind: 'mock', provider: 'mtn-momo', method: 'POST', path: '/mocks/mtn-momo/collection/v1_0/requesttopay', status: 202, object_id: charged.body.data.id }),
    );
  });
});
