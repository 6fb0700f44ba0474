// The service ladder over the API: GET /api/v1/merchant shows the stage, what each environment
// unlocks, the next step and why trading would answer compliance_block; POST
// /api/v1/merchant/ladder takes the steps in order (request_access, enable_sandbox, go_live) and
// refuses any other with 409 ladder_out_of_order.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
let liveKey: string;

beforeEach(async () => {
  sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 } } });
  // Start at the foot of the ladder.
  await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'none' });
  liveKey = (await sb.post('/api/v1/keys', { environment: 'live', scopes: ['read', 'trades:write'] })).body.data.key;
});
afterEach(async () => {
  await sb?.close();
});

const step = (action: string, key = sb.key) => sb.post('/api/v1/merchant/ladder', { action }, { key });
const merchant = async (key = sb.key) => (await sb.get('/api/v1/merchant', key)).body.data;
const quote = (key = sb.key) => sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 }, { key });

describe('GET /api/v1/merchant', () => {
  it('shows a new merchant at stage none, with request_access next and trading blocked, explained', async () => {
    expect(await merchant()).toEqual({
      id: sb.ry.sandbox.merchantId,
      name: 'Sandbox Merchant',
      stage: 'none',
      environments: {
        test: { enabled: false, unlocks: [expect.stringMatching(/sk_test_/)] },
        live: { enabled: false, unlocks: [expect.stringMatching(/sk_live_/)] },
      },
      next_action: 'request_access',
      compliance: { trading_allowed: false, reason: expect.stringMatching(/compliance_block.*stage none/) },
    });
    const refused = await quote();
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'compliance_block', details: { reason: 'service_not_enabled', stage: 'none' } });
  });
});

describe('POST /api/v1/merchant/ladder', () => {
  it('climbs in order: request_access, enable_sandbox, go_live; each step unlocks what it says', async () => {
    const requested = await step('request_access');
    expect(requested.status).toBe(200);
    expect(requested.body.data).toMatchObject({ stage: 'requested', next_action: 'enable_sandbox', environments: { test: { enabled: false }, live: { enabled: false } } });

    const sandbox = await step('enable_sandbox');
    expect(sandbox.body.data).toMatchObject({
      stage: 'sandbox',
      next_action: 'go_live',
      environments: { test: { enabled: true }, live: { enabled: false } },
      compliance: { trading_allowed: true, reason: null },
    });
    expect((await quote()).status).toBe(201);
    // A live key sees the same stage, and why it still cannot trade.
    expect(await merchant(liveKey)).toMatchObject({ stage: 'sandbox', compliance: { trading_allowed: false, reason: expect.stringMatching(/go live/) } });
    expect((await quote(liveKey)).body.error.code).toBe('compliance_block');

    const live = await step('go_live');
    expect(live.body.data).toMatchObject({ stage: 'live', next_action: null, environments: { test: { enabled: true }, live: { enabled: true } } });
    expect(await merchant(liveKey)).toMatchObject({ stage: 'live', compliance: { trading_allowed: true, reason: null } });
    expect((await quote(liveKey)).status).toBe(201);
  });

  it('refuses a step out of order with 409 ladder_out_of_order naming the stage, the action and the expected one, and changes nothing', async () => {
    const skipped = await step('go_live');
    expect(skipped.status).toBe(409);
    expect(skipped.body).toMatchObject({
      status: false,
      message: expect.stringMatching(/next step is request_access/),
      error: { code: 'ladder_out_of_order', details: { stage: 'none', action: 'go_live', expected_action: 'request_access' } },
    });
    expect((await merchant()).stage).toBe('none');

    await step('request_access');
    const again = await step('request_access');
    expect(again.status).toBe(409);
    expect(again.body.error.details).toEqual({ stage: 'requested', action: 'request_access', expected_action: 'enable_sandbox' });
  });

  it('refuses any step once live: there is none left', async () => {
    await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'live' });
    const res = await step('go_live');
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual({ stage: 'live', action: 'go_live', expected_action: null });
  });

  it('works with a live key too: going live is an account step, not a sandbox helper', async () => {
    await step('request_access', liveKey);
    await step('enable_sandbox', liveKey);
    expect((await step('go_live', liveKey)).body.data.stage).toBe('live');
  });

  it('leaves POST /api/v1/sandbox/merchant/trading working for tests that set a stage directly', async () => {
    const res = await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'sandbox' });
    expect(res.status).toBe(200);
    expect((await merchant()).next_action).toBe('go_live');
  });

  it('is documented in the OpenAPI with its 409', async () => {
    const op = (await sb.http.get('/openapi.json')).body.paths['/api/v1/merchant/ladder'].post;
    expect(op.responses['409'].description).toMatch(/ladder_out_of_order/);
    expect(op.description).toMatch(/request_access.*enable_sandbox.*go_live/);
  });
});
