// POST /api/v1/trades/quote: pricing in the house's favour, every error of spec 4.1, the
// staleness of each benchmark leg, the 45 s lifetime on the virtual clock, the per-trade limit
// and the service ladder. Trades (execute) are in trading-trades.test.ts and trading-sells.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type PostOptions, type TestSandbox } from '../support/test-sandbox.ts';

// With volatility 0 the simulated USD market sits at exactly 1 and is always fresh; the FX leg is
// the configured 15.5 re-stamped at each UTC midnight. Benchmark 15.5 GHS per asset; with the
// 150 bps spread a buy is priced at 15.7325 and a sell at 15.2675.
const STILL_MARKET = { trading: { market: { volatility_bps: 0 } } };

const TRC20 = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';

let sb: TestSandbox;

const execute = (body: Record<string, unknown>, opts: PostOptions = {}) => sb.execute(body, opts);

const quote = (body: Record<string, unknown>, key?: string) => sb.post('/api/v1/trades/quote', body, key ? { key } : {});

async function quoteRow(reference: string) {
  return sb.ry.store.get<{ status: string; trade_id: string | null }>('SELECT status, trade_id FROM quotes WHERE id = ?', [reference]);
}

async function quoteCount(): Promise<number> {
  return Number((await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM quotes'))!.n);
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('POST /api/v1/trades/quote: pricing', () => {
  beforeEach(async () => {
    sb = await startTestSandbox(STILL_MARKET);
  });
  afterEach(() => sb.close());

  it('prices a buy by fiat_amount at benchmark plus spread and rounds the asset delivered down', async () => {
    const res = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
    expect(res.status).toBe(201);
    const now = sb.ry.clock.now();
    expect(res.body.status).toBe(true);
    expect(res.body.data).toEqual({
      reference: expect.stringMatching(/^qt_[0-9a-z]{20}$/),
      object: 'quote',
      status: 'created',
      side: 'buy',
      asset: 'USDT',
      network: 'TRC20',
      applied_rate: 15.7325,
      benchmark_rate: 15.5,
      usd_price: 1,
      fx_rate: 15.5,
      // 1000 GHS / 15.7325 = 63.5626887... USDT, rounded down to the micro-unit
      asset_amount: 63_562_688,
      net_fiat_amount: 100_000,
      expires_at: iso(now + 45_000),
      created_at: iso(now),
      livemode: false,
    });
  });

  it('prices a buy by asset_amount and rounds the cedis charged up', async () => {
    const res = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', asset_amount: 50_000_000 });
    expect(res.status).toBe(201);
    // 50 × 15.7325 = 786.625 GHS: 78 662.5 pesewas, rounded up
    expect(res.body.data).toMatchObject({ applied_rate: 15.7325, asset_amount: 50_000_000, net_fiat_amount: 78_663 });
  });

  it('prices a sell by asset_amount at benchmark minus spread', async () => {
    const res = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 100_000_000 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ side: 'sell', applied_rate: 15.2675, benchmark_rate: 15.5, asset_amount: 100_000_000, net_fiat_amount: 152_675 });
  });

  it('prices a sell by fiat_amount and rounds the asset required up', async () => {
    const res = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
    expect(res.status).toBe(201);
    // 1000 / 15.2675 = 65.4986081... USDT, rounded up
    expect(res.body.data).toMatchObject({ applied_rate: 15.2675, asset_amount: 65_498_609, net_fiat_amount: 100_000 });
  });

  it('quotes every asset on each of its networks: USDT on TRC20 and ERC20, USDC on ERC20 and SOL', async () => {
    for (const [asset, network] of [
      ['USDT', 'TRC20'],
      ['USDT', 'ERC20'],
      ['USDC', 'ERC20'],
      ['USDC', 'SOL'],
    ]) {
      const res = await quote({ side: 'buy', asset, network, fiat_amount: 10_000 });
      expect(res.status, `${asset} on ${network}`).toBe(201);
      expect(res.body.data).toMatchObject({ asset, network, benchmark_rate: 15.5 });
    }
  });

  it('uses the pinned USD price and the admin FX rate: benchmark = usd × fx, rounded down', async () => {
    expect((await sb.http.put('/api/v1/sandbox/rates/usd/USDC').set('Authorization', `Bearer ${sb.key}`).send({ price: '0.99987654' })).status).toBe(200);
    expect((await sb.http.put('/api/v1/sandbox/rates/fx').set('Authorization', `Bearer ${sb.key}`).send({ rate: '15.12345678' })).status).toBe(200);
    const res = await quote({ side: 'buy', asset: 'USDC', network: 'SOL', fiat_amount: 10_000 });
    expect(res.status).toBe(201);
    const stored = await sb.ry.store.get<{ applied_rate: string; benchmark_rate: string; usd_price: string; fx_rate: string }>(
      'SELECT applied_rate, benchmark_rate, usd_price, fx_rate FROM quotes WHERE id = ?',
      [res.body.data.reference],
    );
    const benchmark = (99_987_654n * 1_512_345_678n) / 100_000_000n;
    expect(stored).toEqual({
      usd_price: '99987654',
      fx_rate: '1512345678',
      benchmark_rate: benchmark.toString(),
      // + 150 bps, rounded up
      applied_rate: ((benchmark * 10_150n + 9_999n) / 10_000n).toString(),
    });
  });

  it('records quote.created with a snapshot of the quote and touches no money', async () => {
    await sb.fund(5_000);
    const res = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 10_000 });
    expect(await sb.events(res.body.data.reference)).toEqual(['quote.created']);
    const [event] = await sb.ry.outbox.forObject(sb.ry.store, res.body.data.reference);
    expect(event!.data.object).toEqual(res.body.data);
    expect(await sb.wallet()).toMatchObject({ available: 5_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('lets any valid key quote, even one with only the read scope', async () => {
    const issued = await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] });
    expect(issued.status).toBe(201);
    const res = await quote({ side: 'sell', asset: 'USDC', network: 'ERC20', asset_amount: 1_000_000 }, issued.body.data.key);
    expect(res.status).toBe(201);
  });

  it('refuses a request without a valid key', async () => {
    const res = await sb.http.post('/api/v1/trades/quote').send({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100 });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});

describe('POST /api/v1/trades/quote: validation_error', () => {
  beforeEach(async () => {
    sb = await startTestSandbox(STILL_MARKET);
  });
  afterEach(() => sb.close());

  const base = { side: 'buy', asset: 'USDT', network: 'TRC20' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['a side that is neither buy nor sell', { ...base, side: 'hold', fiat_amount: 100 }, 'side'],
    ['a missing side', { asset: 'USDT', network: 'TRC20', fiat_amount: 100 }, 'side'],
    ['an unknown asset', { ...base, asset: 'DAI', fiat_amount: 100 }, 'asset'],
    ['an unknown network', { ...base, network: 'BTC', fiat_amount: 100 }, 'network'],
    ['a zero fiat_amount', { ...base, fiat_amount: 0 }, 'fiat_amount'],
    ['a negative fiat_amount', { ...base, fiat_amount: -100 }, 'fiat_amount'],
    ['a fractional fiat_amount', { ...base, fiat_amount: 100.5 }, 'fiat_amount'],
    ['a fiat_amount given as a string', { ...base, fiat_amount: '100' }, 'fiat_amount'],
    ['a zero asset_amount', { ...base, asset_amount: 0 }, 'asset_amount'],
    ['a fractional asset_amount', { ...base, asset_amount: 1.5 }, 'asset_amount'],
    ['an asset_amount beyond the maximum', { ...base, asset_amount: 100_000_000_000_001 }, 'asset_amount'],
    ['both fiat_amount and asset_amount', { ...base, fiat_amount: 100, asset_amount: 1_000_000 }, 'fiat_amount'],
    ['neither fiat_amount nor asset_amount', { ...base }, 'fiat_amount'],
    ['an unknown field', { ...base, fiat_amount: 100, price: '1' }, 'price'],
  ];

  for (const [what, body, field] of cases) {
    it(`answers 400 validation_error naming ${field} for ${what}`, async () => {
      const res = await quote(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: false, error: { code: 'validation_error' } });
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(await quoteCount()).toBe(0);
    });
  }

  it('says "exactly one" when both or neither amount is given', async () => {
    for (const body of [{ ...base, fiat_amount: 100, asset_amount: 1_000_000 }, base]) {
      const res = await quote(body);
      expect(res.body.error.details.fields).toContainEqual({ field: 'fiat_amount', message: 'give exactly one of fiat_amount and asset_amount' });
    }
  });

  for (const [asset, network, allowed] of [
    ['USDT', 'SOL', 'TRC20, ERC20'],
    ['USDC', 'TRC20', 'ERC20, SOL'],
  ]) {
    it(`refuses ${asset} on ${network}, a network the asset does not trade on, naming network`, async () => {
      const res = await quote({ side: 'sell', asset, network, asset_amount: 1_000_000 });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'network', message: `must be one of ${allowed} for ${asset}` }] } });
      expect(await quoteCount()).toBe(0);
    });
  }

  it('refuses a sell too small to pay a single pesewa', async () => {
    // 1 micro-USDT × 15.2675 = 0.0000152675 GHS: rounds down to nothing
    const res = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'asset_amount', message: 'too small to trade' }] } });
  });

  it('answers validation_error, not an internal error, to a sell by fiat_amount when the sell rate rounds to zero', async () => {
    // benchmark 0.00000001 GHS per USDT: minus 150 bps it rounds down to 0
    await sb.http.put('/api/v1/sandbox/rates/usd/USDT').set('Authorization', `Bearer ${sb.key}`).send({ price: '0.00000001' });
    await sb.http.put('/api/v1/sandbox/rates/fx').set('Authorization', `Bearer ${sb.key}`).send({ rate: '1' });
    const res = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 100 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(await quoteCount()).toBe(0);
  });

  it('charges at least one pesewa for the smallest buy rather than nothing', async () => {
    const res = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', asset_amount: 1 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ asset_amount: 1, net_fiat_amount: 1 });
  });
});

describe('POST /api/v1/trades/quote: stale benchmark legs halt quoting with rate_expired', () => {
  beforeEach(async () => {
    sb = await startTestSandbox(STILL_MARKET);
  });
  afterEach(() => sb.close());

  const put = (path: string, body: object) => sb.http.put(path).set('Authorization', `Bearer ${sb.key}`).send(body);
  const buy = (asset = 'USDT', network = 'TRC20') => quote({ side: 'buy', asset, network, fiat_amount: 10_000 });

  it('still quotes a frozen market at exactly 90 s and refuses at 91 s, naming the USD leg', async () => {
    expect((await sb.post('/api/v1/sandbox/market/freeze', {})).status).toBe(200);
    const frozenAt = sb.ry.clock.now();
    await sb.advance(90);
    expect((await buy()).status).toBe(201);
    await sb.advance(1);
    const res = await buy();
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('USDT/USD');
    expect(res.body.error).toEqual({
      code: 'rate_expired',
      details: { leg: 'USDT', as_of: iso(frozenAt), age_seconds: 91, max_age_seconds: 90 },
    });
    // every USD leg froze with it
    const usdc = await buy('USDC', 'SOL');
    expect(usdc.status).toBe(409);
    expect(usdc.body.error.details.leg).toBe('USDC');
  });

  it('quotes again once the market is resumed', async () => {
    await sb.post('/api/v1/sandbox/market/freeze', {});
    await sb.advance(120);
    expect((await buy()).status).toBe(409);
    expect((await sb.post('/api/v1/sandbox/market/resume', {})).status).toBe(200);
    const res = await buy();
    expect(res.status).toBe(201);
    expect(res.body.data.benchmark_rate).toBe(15.5);
  });

  it('refuses a USD price pinned with an as_of older than 90 s, only for that asset', async () => {
    const asOf = sb.ry.clock.now() - 91_000;
    expect((await put('/api/v1/sandbox/rates/usd/USDT', { price: '1', as_of: iso(asOf) })).status).toBe(200);
    const res = await buy();
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'rate_expired', details: { leg: 'USDT', as_of: iso(asOf), age_seconds: 91, max_age_seconds: 90 } });
    expect((await buy('USDC', 'ERC20')).status).toBe(201);
    // pinned afresh, it quotes
    expect((await put('/api/v1/sandbox/rates/usd/USDT', { price: '1' })).status).toBe(200);
    expect((await buy()).status).toBe(201);
  });

  it('refuses when the FX rate was set more than 24 h ago, naming the FX leg, and quotes once it is set afresh', async () => {
    const asOf = sb.ry.clock.now() - (24 * 3600 + 1) * 1000;
    expect((await put('/api/v1/sandbox/rates/fx', { rate: '15.5', as_of: iso(asOf) })).status).toBe(200);
    for (const [asset, network] of [
      ['USDT', 'TRC20'],
      ['USDC', 'SOL'],
    ]) {
      const res = await buy(asset, network);
      expect(res.status).toBe(409);
      expect(res.body.message).toContain('USD/GHS');
      expect(res.body.error).toEqual({ code: 'rate_expired', details: { leg: 'FX', as_of: iso(asOf), age_seconds: 86_401, max_age_seconds: 86_400 } });
    }
    expect((await put('/api/v1/sandbox/rates/fx', { rate: '15.6' })).status).toBe(200);
    const res = await buy();
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ fx_rate: 15.6, benchmark_rate: 15.6 });
  });

  it('accepts an FX rate exactly 24 h old', async () => {
    const asOf = sb.ry.clock.now() - 24 * 3600 * 1000;
    await put('/api/v1/sandbox/rates/fx', { rate: '15.5', as_of: iso(asOf) });
    expect((await buy()).status).toBe(201);
  });

  it('lets an admin FX rate go stale on the clock: fresh at 24 h, rate_expired one second later', async () => {
    await put('/api/v1/sandbox/rates/fx', { rate: '15.5' });
    await sb.advance(24 * 3600);
    // the still USD market stays fresh: its as-of is the start of the current 10 s step
    expect((await buy()).status).toBe(201);
    await sb.advance(1);
    const res = await buy();
    expect(res.status).toBe(409);
    expect(res.body.error.details).toMatchObject({ leg: 'FX', age_seconds: 86_401 });
  });

  it('keeps the configured FX rate fresh across days by re-stamping it at each UTC midnight', async () => {
    await sb.advance(3 * 24 * 3600 + 7);
    expect((await buy()).status).toBe(201);
  });

  it('refuses to execute a quote whose USD leg went stale after it was issued', async () => {
    await sb.fund(100_000);
    // pinned 80 s ago: the quote is fresh now, the leg is 91 s old 11 s later
    await put('/api/v1/sandbox/rates/usd/USDT', { price: '1', as_of: iso(sb.ry.clock.now() - 80_000) });
    const q = await buy();
    expect(q.status).toBe(201);
    await sb.advance(11);
    const res = await execute({ quote_reference: q.body.data.reference, delivery_address: TRC20 });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'rate_expired', details: { leg: 'USDT', age_seconds: 91 } });
    expect(await quoteRow(q.body.data.reference)).toEqual({ status: 'created', trade_id: null });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });
});

describe('A quote lives 45 seconds on the virtual clock', () => {
  beforeEach(async () => {
    sb = await startTestSandbox(STILL_MARKET);
    await sb.fund(1_000_000);
  });
  afterEach(() => sb.close());

  const buyQuote = async () => {
    const res = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 10_000 });
    expect(res.status).toBe(201);
    return res.body.data.reference as string;
  };

  it('is still created at 44 s and expires at 45 s with quote.expired', async () => {
    const ref = await buyQuote();
    await sb.advance(44);
    expect(await quoteRow(ref)).toMatchObject({ status: 'created' });
    expect(await sb.events(ref)).toEqual(['quote.created']);
    await sb.advance(1);
    expect(await quoteRow(ref)).toMatchObject({ status: 'expired' });
    expect(await sb.events(ref)).toEqual(['quote.created', 'quote.expired']);
    const events = await sb.ry.outbox.forObject(sb.ry.store, ref);
    expect(events[1]!.data.object).toMatchObject({ reference: ref, status: 'expired' });
  });

  it('executes at 44 s, and the consumed quote never expires', async () => {
    const ref = await buyQuote();
    await sb.advance(44);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('settled');
    await sb.advance(60);
    expect(await quoteRow(ref)).toEqual({ status: 'consumed', trade_id: res.body.data.reference });
    expect(await sb.events(ref)).toEqual(['quote.created']);
  });

  it('answers 409 rate_expired to an execute at 45 s and after, and moves no money', async () => {
    const ref = await buyQuote();
    const expiresAt = iso(sb.ry.clock.now() + 45_000);
    await sb.advance(45);
    const atExpiry = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(atExpiry.status).toBe(409);
    expect(atExpiry.body.error).toEqual({ code: 'rate_expired', details: { quote_reference: ref, expired_at: expiresAt } });
    await sb.advance(300);
    const later = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(later.status).toBe(409);
    expect(later.body.error.code).toBe('rate_expired');
    expect(await sb.wallet()).toMatchObject({ available: 1_000_000, reserved: 0 });
    expect((await sb.get('/api/v1/trades')).body.data).toEqual([]);
  });

  it('honours a configured lifetime', async () => {
    await sb.close();
    sb = await startTestSandbox({ trading: { quote_ttl_seconds: 10, market: { volatility_bps: 0 } } });
    const res = await quote({ side: 'sell', asset: 'USDC', network: 'SOL', asset_amount: 1_000_000 });
    expect(res.body.data.expires_at).toBe(iso(sb.ry.clock.now() + 10_000));
    await sb.advance(10);
    expect(await sb.events(res.body.data.reference)).toEqual(['quote.created', 'quote.expired']);
  });
});

describe('POST /api/v1/trades/quote: limit_exceeded', () => {
  afterEach(() => sb.close());

  it('refuses a quote above the per-trade limit with the limit details, and accepts one at the limit', async () => {
    sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 }, limits: { per_trade: 1_000_000 } } });
    const over = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_001 });
    expect(over.status).toBe(422);
    expect(over.body.error).toEqual({
      code: 'limit_exceeded',
      details: { limit: 'per_trade', limit_amount: 1_000_000, used: 0, requested: 1_000_001, remaining: 1_000_000, currency: 'GHS' },
    });
    expect(await quoteCount()).toBe(0);
    expect((await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(201);
  });

  it("judges the merchant's stage before the limits: a quote both would refuse is a compliance_block", async () => {
    sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 }, limits: { per_trade: 1_000_000 } } });
    expect((await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'requested' })).status).toBe(200);
    const blocked = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_001 });
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('compliance_block');
    expect((await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'sandbox' })).status).toBe(200);
    const over = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_001 });
    expect(over.status).toBe(422);
    expect(over.body.error.details).toMatchObject({ limit: 'per_trade' });
    expect(await quoteCount()).toBe(0);
  });

  it('applies the per-trade limit to the cedi value of an asset_amount quote, buy or sell', async () => {
    sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 }, limits: { per_trade: 1_000_000 } } });
    // 700 USDT sells for 10 687.25 GHS
    const sell = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 700_000_000 });
    expect(sell.status).toBe(422);
    expect(sell.body.error.details).toMatchObject({ limit: 'per_trade', requested: 1_068_725 });
    // 636 USDT costs 10 005.87 GHS
    const buy = await quote({ side: 'buy', asset: 'USDT', network: 'ERC20', asset_amount: 636_000_000 });
    expect(buy.status).toBe(422);
    expect(buy.body.error.details).toMatchObject({ limit: 'per_trade', requested: 1_000_587 });
  });

  it('refuses by default above 500 000 GHS per trade', async () => {
    sb = await startTestSandbox(STILL_MARKET);
    const res = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 50_000_001 });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toMatchObject({ limit: 'per_trade', limit_amount: 50_000_000 });
  });
});

describe('The service ladder: quotes answer compliance_block until trading is enabled', () => {
  beforeEach(async () => {
    sb = await startTestSandbox(STILL_MARKET);
  });
  afterEach(() => sb.close());

  const stage = async (value: string) => {
    const res = await sb.post('/api/v1/sandbox/merchant/trading', { stage: value });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ stage: value });
  };
  const body = { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 10_000 };

  for (const value of ['none', 'requested']) {
    it(`refuses a test key's quote at stage ${value}`, async () => {
      await stage(value);
      const res = await quote(body);
      expect(res.status).toBe(403);
      expect(res.body.error).toEqual({ code: 'compliance_block', details: { reason: 'service_not_enabled', stage: value, environment: 'test' } });
      expect(await quoteCount()).toBe(0);
    });
  }

  it('quotes with a test key from the sandbox stage on (the seeded merchant starts there)', async () => {
    expect((await quote(body)).status).toBe(201);
    await stage('requested');
    expect((await quote(body)).status).toBe(403);
    await stage('sandbox');
    expect((await quote(body)).status).toBe(201);
    await stage('live');
    expect((await quote(body)).status).toBe(201);
  });

  it('refuses a live key until the stage is live, then quotes in live mode', async () => {
    const issued = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'trades:write'] });
    expect(issued.status).toBe(201);
    const liveKey = issued.body.data.key as string;
    const refused = await quote(body, liveKey);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ code: 'compliance_block', details: { reason: 'service_not_enabled', stage: 'sandbox', environment: 'live' } });
    await stage('live');
    const res = await quote(body, liveKey);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ livemode: true, status: 'created' });
  });

  it('refuses to execute a quote issued before the stage was lowered', async () => {
    await sb.fund(100_000);
    const q = await quote(body);
    await stage('requested');
    const res = await execute({ quote_reference: q.body.data.reference, delivery_address: TRC20 });
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'compliance_block', details: { reason: 'service_not_enabled', stage: 'requested', environment: 'test' } });
    expect(await quoteRow(q.body.data.reference)).toMatchObject({ status: 'created' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });
});
