// Any request by an id that names no object is 404 not_found, whatever the id's shape
// (DESIGN.md): Stripe's wording, `No such charge: 'chg_x'`, with the id in error.details.id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteSpec } from '../../src/http/route.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

/** Every route with a path id: what it names, and a body that passes validation. */
const BY_ID: Record<string, { object: string; body?: unknown }> = {
  getCharge: { object: 'charge' },
  getTransfer: { object: 'transfer' },
  getTrade: { object: 'trade' },
  getQuote: { object: 'quote' },
  sandboxReviewTrade: { object: 'trade', body: { decision: 'approve' } },
  sandboxReverseTrade: { object: 'trade' },
  getWebhookEndpoint: { object: 'webhook endpoint' },
  deleteWebhookEndpoint: { object: 'webhook endpoint' },
  rotateWebhookSecret: { object: 'webhook endpoint', body: {} },
  getEvent: { object: 'event' },
  getWebhookDelivery: { object: 'webhook delivery' },
  redeliverWebhook: { object: 'webhook delivery' },
  sandboxSetProviderOutage: { object: 'provider', body: { down: true } },
  sandboxPinUsdRate: { object: 'asset', body: { price: '1.0003' } },
  getCollection: { object: 'collection' },
  submitCollectionOtp: { object: 'collection', body: { otp: '123456' } },
  sandboxApproveCollection: { object: 'collection' },
  sandboxDeclineCollection: { object: 'collection' },
  getPaymentLink: { object: 'payment link' },
  deactivatePaymentLink: { object: 'payment link' },
  getPayout: { object: 'payout' },
  getBulkPayout: { object: 'payout_bulk' },
  getBill: { object: 'bill' },
  getObjectTimeline: { object: 'object' },
  getSettlement: { object: 'settlement' },
  exportSettlementCsv: { object: 'settlement' },
  enableWebhookEndpoint: { object: 'webhook endpoint' },
  disableWebhookEndpoint: { object: 'webhook endpoint' },
  replayFailedWebhooks: { object: 'webhook endpoint', body: {} },
  revokeKey: { object: 'API key' },
  setKeyIpAllowlist: { object: 'API key', body: { entries: [] } },
  revealKeySigningSecret: { object: 'API key' },
  sandboxGetClockAdvance: { object: 'clock advance' },
  sandboxStreamClockAdvance: { object: 'clock advance' },
  sandboxDeleteFault: { object: 'fault' },
};

/** Ids that name nothing, each as sent (percent-encoded) and as the route reads it. */
const ODD_IDS: [label: string, id: string][] = [
  ['well formed, of the wrong kind', 'qt_0000000000aaaaaaaaaa'],
  ['well formed, unknown', 'chg_zzzzzzzzzzzzzzzzzzzz'],
  ['without a prefix', 'doesnotexist'],
  ['in upper case', 'CHG_0000000000AAAAAAAAAA'],
  ['of one character', 'x'],
  ['of 4 000 characters', 'a'.repeat(4_000)],
  ['in Twi with an emoji', 'Ɛyɛ-adeɛ-🇬🇭💸'],
  ['with a NUL byte', 'chg_\u0000'],
  ['with a slash', 'chg_a/b'],
  ['with spaces and quotes', `chg_' OR '1'='1`],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['toString', 'toString'],
  ['that looks like a number', '1e3'],
];

let sb: TestSandbox;

const pathFor = (route: RouteSpec, id: string) => route.path.replace(/:[A-Za-z_]+/, encodeURIComponent(id));

function send(route: RouteSpec, id: string) {
  const path = pathFor(route, id);
  const req = sb.http[route.method](path).set('Authorization', `Bearer ${sb.key}`);
  const body = BY_ID[route.operationId]?.body;
  return body === undefined ? req : req.set('Content-Type', 'application/json').send(JSON.stringify(body));
}

beforeAll(async () => {
  sb = await startTestSandbox();
});

afterAll(async () => {
  await sb?.close();
});

describe('routes that take an id in the path', () => {
  it('are all listed here, so a new one cannot skip these checks', () => {
    const byId = sb.ry.routes.filter((r) => r.params).map((r) => r.operationId);
    expect(byId.sort()).toEqual(Object.keys(BY_ID).sort());
  });

  it('document the id as a string of no particular shape, and the 404 for one that names nothing', async () => {
    const doc = (await sb.http.get('/openapi.json')).body;
    for (const route of sb.ry.routes.filter((r) => r.params)) {
      const op = doc.paths[route.path.replace(/:([A-Za-z_]+)/g, '{$1}')][route.method];
      const [param] = op.parameters.filter((p: { in: string }) => p.in === 'path');
      expect(param.schema.type, route.operationId).toBe('string');
      expect(param.schema, route.operationId).not.toHaveProperty('pattern');
      expect(param.schema, route.operationId).not.toHaveProperty('maxLength');
      expect(param.schema.description, route.operationId).toMatch(/404 not_found/);
      expect(Object.keys(op.responses), route.operationId).toContain('404');
    }
  });
});

describe.each(Object.entries(BY_ID))('%s', (operationId, { object }) => {
  it.each(ODD_IDS)(`answers 404 not_found for an id %s, naming the ${object} and the id`, async (_label, id) => {
    const route = sb.ry.routes.find((r) => r.operationId === operationId)!;
    const res = await send(route, id);
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body).toEqual({ status: false, message: `No such ${object}: '${id}'`, error: { code: 'not_found', details: { id } } });
  });
});

describe('objects of another environment', () => {
  it('are 404 to a live key, with the same wording', async () => {
    const charge = await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(charge.status).toBe(201);
    const id: string = charge.body.data.id;
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] });
    expect(live.status).toBe(201);

    expect((await sb.get(`/api/v1/charges/${id}`)).status).toBe(200);
    const res = await sb.get(`/api/v1/charges/${id}`, live.body.data.key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: false, message: `No such charge: '${id}'`, error: { code: 'not_found', details: { id } } });
  });
});

describe('a path that cannot be decoded into an id', () => {
  it('is bad input, not an unknown id', async () => {
    const res = await sb.get('/api/v1/charges/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });
});
