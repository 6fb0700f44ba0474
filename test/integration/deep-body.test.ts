// A body nested thousands of levels deep, signed with a timestamp out of the window, is refused
// like any stale signature (401) and changes nothing: before, railyard hashed it recursively (to
// look for a stored retry under its Idempotency-Key) and answered 500 when the stack ran out. Only a
// body that passes validation was ever stored, so one that fails it is no retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(() => sb?.close());

function nested(depth: number): unknown {
  let body: unknown = 1;
  for (let i = 0; i < depth; i++) body = { a: body };
  return body;
}

describe('a body nested too deeply', () => {
  it.each(['/v1/payouts/bulk', '/api/v1/transfers'])('is refused 401 at %s, signed with a timestamp from the future', async (path) => {
    const res = await sb.post(path, nested(3_000), { sign: true, idempotencyKey: `deep-${path}`, timestamp: Math.floor(Date.now() / 1000) + 100_000 });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: false, error: { code: 'invalid_signature' } });
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });
});
