// The market sandbox helpers, mounted on their own express app with the real auth, signature and
// idempotency services (the composition root does not wire them yet).
import express, { type Express, type Request } from 'express';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/auth/api-key-service.ts';
import { RequestSignatureVerifier } from '../../src/auth/request-signature.ts';
import { SCOPES } from '../../src/auth/scopes.ts';
import type { Config } from '../../src/config/config.ts';
import { failure } from '../../src/http/envelope.ts';
import { errorHandler } from '../../src/http/error-mapper.ts';
import { buildOpenApi } from '../../src/http/openapi.ts';
import { mountRoutes } from '../../src/http/route.ts';
import { IdempotencyService } from '../../src/idempotency/idempotency-service.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { marketRoutes } from '../../src/trading/market.routes.ts';
import { PriceFeed } from '../../src/trading/price-feed.ts';
import { buildConfig } from '../../src/railyard-config.ts';

const KEY = 'sk_test_market_routes_0000000000000000';
const MERCHANT = 'mch_market';

interface Harness {
  app: Express;
  clock: VirtualClock;
  store: SqliteStore;
  feed: PriceFeed;
  config: Config;
  liveKey: string;
  get(path: string, key?: string): supertest.Test;
  put(path: string, body: unknown, key?: string): supertest.Test;
  post(path: string, body?: unknown, key?: string): supertest.Test;
  advance(seconds: number): void;
}

async function harness(overrides: Record<string, unknown> = {}): Promise<Harness> {
  const config = buildConfig({ db: ':memory:', clock: 'virtual', seed: 7, log_requests: false, ...overrides });
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const store = new SqliteStore(':memory:');
  const ids = new IdGenerator(clock, new SeededRandom(7));
  const apiKeys = new ApiKeyService({ clock, ids, store });
  const signatures = new RequestSignatureVerifier({ clock });
  const idempotency = new IdempotencyService({ clock, boot: 1 });
  const feed = new PriceFeed({ store, clock, seed: 7, market: config.trading.market });
  await feed.init();

  const liveKey = await store.transaction(async (tx) => {
    await tx.run('INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?)', [MERCHANT, 'Market Merchant', clock.now()]);
    await apiKeys.issue(tx, { id: 'key_market_test', merchantId: MERCHANT, environment: 'test', scopes: [...SCOPES], key: KEY });
    return (await apiKeys.issue(tx, { merchantId: MERCHANT, environment: 'live', scopes: [...SCOPES] })).key;
  });

  const app = express();
  const api = express.Router();
  api.use(
    express.json({
      limit: '100kb',
      type: () => true,
      verify: (req, _res, buf) => {
        (req as Request & { rawBody?: string }).rawBody = buf.toString('utf8');
      },
    }),
  );
  mountRoutes(api, marketRoutes({ feed, clock, config }), { store, apiKeys, signatures, idempotency });
  app.use(api);
  app.use((req, res) => {
    res.status(404).json(failure('not_found', `No route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(silentLogger));

  const http = supertest(app);
  return {
    app,
    clock,
    store,
    feed,
    config,
    liveKey,
    get: (path, key = KEY) => http.get(path).set('Authorization', `Bearer ${key}`),
    put: (path, body, key = KEY) =>
      http
        .put(path)
        .set('Authorization', `Bearer ${key}`)
        .send(body as object),
    post: (path, body, key = KEY) => {
      const req = http.post(path).set('Authorization', `Bearer ${key}`);
      return body === undefined ? req : req.send(body as object);
    },
    advance: (seconds) => clock.set(clock.now() + seconds * 1000),
  };
}

let h: Harness;
beforeEach(async () => {
  h = await harness();
});
afterEach(() => h.store.close());

const legOf = (body: { data: { legs: { leg: string }[] } }, leg: string) => body.data.legs.find((l) => l.leg === leg)!;
const fieldsOf = (body: { error: { details?: { fields?: { field: string }[] } } }) => (body.error.details?.fields ?? []).map((f) => f.field);

describe('GET /api/v1/sandbox/market', () => {
  it('shows both USD legs, the FX leg and the benchmarks', async () => {
    const res = await h.get('/api/v1/sandbox/market');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: true,
      message: 'Market',
      data: {
        frozen: false,
        legs: [
          { leg: 'USDT', value: '1', as_of: '2026-01-01T00:00:00.000Z', age_seconds: 0, max_age_seconds: 90, stale: false, source: 'market' },
          { leg: 'USDC', value: '1', as_of: '2026-01-01T00:00:00.000Z', age_seconds: 0, max_age_seconds: 90, stale: false, source: 'market' },
          { leg: 'FX', value: '15.5', as_of: '2026-01-01T00:00:00.000Z', age_seconds: 0, max_age_seconds: 86400, stale: false, source: 'config' },
        ],
        benchmarks: [
          { asset: 'USDT', rate: '15.5' },
          { asset: 'USDC', rate: '15.5' },
        ],
      },
    });
  });

  it('follows the market as the clock moves: a live USD leg is at most one interval old', async () => {
    h.advance(3_600 + 7);
    const res = await h.get('/api/v1/sandbox/market');
    const usdt = legOf(res.body, 'USDT') as Record<string, unknown>;
    expect(usdt).toMatchObject({ as_of: '2026-01-01T01:00:00.000Z', age_seconds: 7, stale: false, source: 'market' });
    expect(usdt.value).toMatch(/^\d+(\.\d{1,8})?$/);
    expect(usdt.value).not.toBe('1'); // 360 steps moved it
    const rate = res.body.data.benchmarks[0].rate as string;
    expect(rate).toMatch(/^15\.\d{1,8}$/);
  });

  it('matches the zod response schema it documents', async () => {
    const route = marketRoutes({ feed: h.feed, clock: h.clock, config: h.config }).find((r) => r.operationId === 'sandboxGetMarket')!;
    const res = await h.get('/api/v1/sandbox/market');
    expect(route.response.schema.safeParse(res.body).success).toBe(true);
  });
});

describe('PUT /api/v1/sandbox/rates/usd/:asset', () => {
  it('pins the leg at exactly that price, as of now by default', async () => {
    h.advance(42);
    const res = await h.put('/api/v1/sandbox/rates/usd/USDC', { price: '1.0003' });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('USDC USD price pinned at 1.0003');
    expect(legOf(res.body, 'USDC')).toEqual({ leg: 'USDC', value: '1.0003', as_of: '2026-01-01T00:00:42.000Z', age_seconds: 0, max_age_seconds: 90, stale: false, source: 'pinned' });
    expect(res.body.data.benchmarks[1]).toEqual({ asset: 'USDC', rate: '15.50465' });
    h.advance(600);
    const later = await h.get('/api/v1/sandbox/market');
    expect(legOf(later.body, 'USDC')).toMatchObject({ value: '1.0003', age_seconds: 600, stale: true, source: 'pinned' });
  });

  it('takes an as_of in the past, with an offset, so a test can pin a stale price', async () => {
    h.advance(3_600);
    const res = await h.put('/api/v1/sandbox/rates/usd/USDT', { price: '0.99991234', as_of: '2026-01-01T02:58:00+02:00' });
    expect(res.status).toBe(200);
    expect(legOf(res.body, 'USDT')).toMatchObject({ value: '0.99991234', as_of: '2026-01-01T00:58:00.000Z', age_seconds: 120, stale: true });
  });

  it.each([
    ['an unknown asset', 'DAI'],
    ['a lowercase asset', 'usdt'],
  ])('answers 404 not_found for %s, naming it', async (_label, asset) => {
    const res = await h.put(`/api/v1/sandbox/rates/usd/${asset}`, { price: '1.0003' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: false, message: `No such asset: '${asset}'`, error: { code: 'not_found', details: { id: asset } } });
  });

  it.each([
    ['a number', 1.0003],
    ['missing', undefined],
    ['empty', ''],
    ['zero', '0'],
    ['zero with decimals', '0.00000000'],
    ['negative', '-1'],
    ['with 9 decimal places', '1.000000001'],
    ['in exponent form', '1e0'],
    ['with a thousands separator', '1,000'],
    ['with 13 integer digits', '1000000000000'],
  ])('names price when the price is %s', async (_label, price) => {
    const res = await h.put('/api/v1/sandbox/rates/usd/USDT', price === undefined ? {} : { price });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(fieldsOf(res.body)).toEqual(['price']);
  });

  it.each([
    ['in the future', '2026-01-01T00:00:01Z'],
    ['not a date-time', 'yesterday'],
    ['a date only', '2026-01-01'],
    ['a number', 1767225600000],
  ])('names as_of when it is %s, and pins nothing', async (_label, as_of) => {
    const res = await h.put('/api/v1/sandbox/rates/usd/USDT', { price: '1.0003', as_of });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(fieldsOf(res.body)).toEqual(['as_of']);
    expect(legOf((await h.get('/api/v1/sandbox/market')).body, 'USDT')).toMatchObject({ value: '1', source: 'market' });
  });

  it('names an unknown field', async () => {
    const res = await h.put('/api/v1/sandbox/rates/usd/USDT', { price: '1.0003', surprise: true });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(['surprise']);
  });
});

describe('PUT /api/v1/sandbox/rates/fx', () => {
  it('sets USD/GHS as an admin rate, which is no longer re-stamped at midnight', async () => {
    const res = await h.put('/api/v1/sandbox/rates/fx', { rate: '15.62', as_of: '2026-01-01T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('USD/GHS set at 15.62');
    expect(legOf(res.body, 'FX')).toEqual({ leg: 'FX', value: '15.62', as_of: '2026-01-01T00:00:00.000Z', age_seconds: 0, max_age_seconds: 86400, stale: false, source: 'admin' });
    expect(res.body.data.benchmarks).toEqual([
      { asset: 'USDT', rate: '15.62' },
      { asset: 'USDC', rate: '15.62' },
    ]);
    h.advance(86_400 + 1);
    const later = await h.get('/api/v1/sandbox/market');
    expect(legOf(later.body, 'FX')).toMatchObject({ value: '15.62', as_of: '2026-01-01T00:00:00.000Z', age_seconds: 86_401, stale: true, source: 'admin' });
  });

  it('keeps a configured FX rate fresh by re-stamping it at each UTC midnight', async () => {
    h.advance(3 * 86_400 + 60);
    const res = await h.get('/api/v1/sandbox/market');
    expect(legOf(res.body, 'FX')).toMatchObject({ value: '15.5', as_of: '2026-01-04T00:00:00.000Z', age_seconds: 60, stale: false, source: 'config' });
  });

  it.each([
    ['a number', 15.5, 'rate'],
    ['missing', undefined, 'rate'],
    ['zero', '0.0', 'rate'],
    ['with a currency', '15.5 GHS', 'rate'],
  ])('names rate when the rate is %s', async (_label, rate, field) => {
    const res = await h.put('/api/v1/sandbox/rates/fx', rate === undefined ? {} : { rate });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(fieldsOf(res.body)).toEqual([field]);
  });

  it('names as_of when it is in the future, and changes nothing', async () => {
    const res = await h.put('/api/v1/sandbox/rates/fx', { rate: '16', as_of: '2026-01-02T00:00:00Z' });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(['as_of']);
    expect(legOf((await h.get('/api/v1/sandbox/market')).body, 'FX')).toMatchObject({ value: '15.5', source: 'config' });
  });
});

describe('POST /api/v1/sandbox/market/freeze and /resume', () => {
  it('freezing makes the USD legs age past 90 s, and stale; resuming makes them fresh again', async () => {
    h.advance(25);
    const frozen = await h.post('/api/v1/sandbox/market/freeze', {});
    expect(frozen.status).toBe(200);
    expect(frozen.body.message).toBe('Market frozen');
    expect(frozen.body.data.frozen).toBe(true);
    const at = legOf(frozen.body, 'USDT') as Record<string, unknown>;
    expect(at).toMatchObject({ as_of: '2026-01-01T00:00:20.000Z', age_seconds: 5, stale: false });

    h.advance(85);
    const edge = await h.get('/api/v1/sandbox/market');
    expect(legOf(edge.body, 'USDT')).toMatchObject({ value: at.value, as_of: at.as_of, age_seconds: 90, stale: false });
    h.advance(1);
    const stale = await h.get('/api/v1/sandbox/market');
    expect(stale.body.data.frozen).toBe(true);
    for (const leg of ['USDT', 'USDC']) expect(legOf(stale.body, leg), leg).toMatchObject({ age_seconds: 91, stale: true, source: 'market' });
    expect(legOf(stale.body, 'USDT')).toMatchObject({ value: at.value, as_of: at.as_of });
    expect(legOf(stale.body, 'FX')).toMatchObject({ stale: false });

    const resumed = await h.post('/api/v1/sandbox/market/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.message).toBe('Market resumed');
    expect(resumed.body.data.frozen).toBe(false);
    expect(legOf(resumed.body, 'USDT')).toMatchObject({ value: at.value, as_of: '2026-01-01T00:01:50.000Z', age_seconds: 1, stale: false, source: 'market' });
  });

  it('resume unpins a pinned leg, and the walk continues from the pinned price', async () => {
    await h.put('/api/v1/sandbox/rates/usd/USDT', { price: '1.01' });
    const res = await h.post('/api/v1/sandbox/market/resume', {});
    expect(legOf(res.body, 'USDT')).toMatchObject({ value: '1.01', source: 'market' });
  });

  it('accepts no body or {}, and names an unknown field', async () => {
    expect((await h.post('/api/v1/sandbox/market/freeze')).status).toBe(200);
    expect((await h.post('/api/v1/sandbox/market/freeze', {})).status).toBe(200);
    const res = await h.post('/api/v1/sandbox/market/resume', { now: true });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(['now']);
    expect(h.feed.isFrozen()).toBe(true);
  });

  it('keeps a freeze across a restart', async () => {
    await h.post('/api/v1/sandbox/market/freeze');
    const restarted = new PriceFeed({ store: h.store, clock: h.clock, seed: 7, market: h.config.trading.market });
    await restarted.init();
    expect(restarted.isFrozen()).toBe(true);
  });
});

describe('auth', () => {
  it.each([
    ['get', '/api/v1/sandbox/market', undefined],
    ['put', '/api/v1/sandbox/rates/usd/USDT', { price: '1.0003' }],
    ['put', '/api/v1/sandbox/rates/fx', { rate: '15.6' }],
    ['post', '/api/v1/sandbox/market/freeze', {}],
    ['post', '/api/v1/sandbox/market/resume', {}],
  ] as const)('refuses a live key on %s %s with 403 and changes nothing', async (method, path, body) => {
    const res = method === 'get' ? await h.get(path, h.liveKey) : method === 'put' ? await h.put(path, body, h.liveKey) : await h.post(path, body, h.liveKey);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    const state = (await h.get('/api/v1/sandbox/market')).body.data;
    expect(state.frozen).toBe(false);
    expect(state.legs.map((l: { source: string }) => l.source)).toEqual(['market', 'market', 'config']);
  });

  it('refuses a missing key with 401', async () => {
    const res = await supertest(h.app).get('/api/v1/sandbox/market');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});

describe('OpenAPI', () => {
  it('documents each route with its operationId, tag, path parameter and body', () => {
    const doc = buildOpenApi(marketRoutes({ feed: h.feed, clock: h.clock, config: h.config }), { version: 'test' }) as { paths: Record<string, Record<string, any>> };
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/sandbox/market',
      '/api/v1/sandbox/market/freeze',
      '/api/v1/sandbox/market/resume',
      '/api/v1/sandbox/rates/fx',
      '/api/v1/sandbox/rates/usd/{asset}',
    ]);
    const pin = doc.paths['/api/v1/sandbox/rates/usd/{asset}']!.put;
    expect(pin.operationId).toBe('sandboxPinUsdRate');
    expect(pin.tags).toEqual(['Sandbox']);
    expect(pin.parameters).toEqual([expect.objectContaining({ name: 'asset', in: 'path', required: true, schema: expect.objectContaining({ enum: ['USDT', 'USDC'] }) })]);
    expect(pin.requestBody.content['application/json'].schema).toMatchObject({ required: ['price'], properties: { price: { type: 'string' }, as_of: { type: 'string', format: 'date-time' } } });
    expect(doc.paths['/api/v1/sandbox/market']!.get.operationId).toBe('sandboxGetMarket');
    expect(doc.paths['/api/v1/sandbox/rates/fx']!.put.operationId).toBe('sandboxSetFxRate');
    expect(doc.paths['/api/v1/sandbox/market/freeze']!.post.operationId).toBe('sandboxFreezeMarket');
    expect(doc.paths['/api/v1/sandbox/market/resume']!.post.operationId).toBe('sandboxResumeMarket');
  });
});
