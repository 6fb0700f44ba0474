// POST /api/v1/trades for buys: settlement from the wallet and its ledger, every error of spec
// 4.2, compliance review (approve and reject), screening blocks, reversal, idempotency, the
// per-trade/daily/monthly limits and the shrinking exposure cap at quote and execute, and
// reading trades back (GET one, GET the list with filters and cursors, /transactions).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type PostOptions, type TestSandbox } from '../support/test-sandbox.ts';

// Volatility 0: USD legs at exactly 1 and always fresh; FX 15.5. Benchmark 15.5, buys at 15.7325.
const MARKET = { volatility_bps: 0 };
const INVENTORY = { USDT: { TRC20: 2_000_000_000_000, ERC20: 1_000_000_000_000 }, USDC: { ERC20: 1_000_000_000_000, SOL: 500_000_000_000 } };

const TRC20 = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const TRC20_REVIEW = 'TReviewMeP1easeReviewMeP1easeRevie';
const TRC20_BLOCKED = 'TB1ockedAddressB1ockedAddressB1ock';
const ERC20 = '0x52908400098527886E0F7030069857D2E4169EE7';
const ERC20_BLOCKED = '0xde0b295669a9fd93d5f28d9ec85e40f4cb697bae';
const SOL = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';

const MERCHANT = 'mch_sandbox';
const INVENTORY_USDT_TRC20 = 'treasury:inventory:USDT:TRC20';

let sb: TestSandbox;

async function sandbox(trading: Record<string, unknown> = {}): Promise<TestSandbox> {
  sb = await startTestSandbox({
    trading: { market: MARKET, screening: { blocked: [TRC20_BLOCKED, ERC20_BLOCKED], review: [TRC20_REVIEW] }, ...trading },
  });
  return sb;
}

const execute = (body: Record<string, unknown>, opts: PostOptions = {}) => sb.execute(body, opts);

async function quote(body: Record<string, unknown>, key?: string): Promise<string> {
  const res = await sb.post('/api/v1/trades/quote', body, key ? { key } : {});
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.reference;
}

const buyQuote = (fiat_amount: number, asset = 'USDT', network = 'TRC20') => quote({ side: 'buy', asset, network, fiat_amount });

async function buy(fiat_amount: number, address = TRC20, asset = 'USDT', network = 'TRC20') {
  const res = await execute({ quote_reference: await buyQuote(fiat_amount, asset, network), delivery_address: address });
  if (res.status !== 201) throw new Error(`buy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const balance = (account: string, currency: string, environment: 'test' | 'live' = 'test') => sb.ry.ledger.balance(sb.ry.store, environment, account, currency);

async function books() {
  return {
    wallet: await sb.wallet(),
    inventory: await balance(INVENTORY_USDT_TRC20, 'USDT'),
    chain: await balance('external:chain:TRC20', 'USDT'),
    treasury: await balance('treasury:cedis', 'GHS'),
    spread: await balance('revenue:spread', 'GHS'),
  };
}

const quoteStatus = async (reference: string) => (await sb.ry.store.get<{ status: string }>('SELECT status FROM quotes WHERE id = ?', [reference]))!.status;

const tradeCount = async () => Number((await sb.ry.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM trades'))!.n);

const statuses = (trade: { status_history: { status: string }[] }) => trade.status_history.map((h) => h.status);

describe('A buy: created -> completed -> settled, from the wallet at once', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  it('settles, answers the trade and records its history', async () => {
    const ref = await buyQuote(100_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
    const now = new Date(sb.ry.clock.now()).toISOString();
    expect(res.body.data).toEqual({
      reference: expect.stringMatching(/^trd_[0-9a-z]{20}$/),
      object: 'trade',
      status: 'settled',
      side: 'buy',
      asset: 'USDT',
      network: 'TRC20',
      asset_amount: 63_562_688,
      net_fiat_amount: 100_000,
      settled_fiat_amount: 100_000,
      applied_rate: 15.7325,
      quote_reference: ref,
      delivery_address: TRC20,
      deposit_address: null,
      transaction_id: expect.stringMatching(/^[0-9a-f]{64}$/),
      deposited_amount: null,
      excess_amount: null,
      confirmations: 0,
      required_confirmations: 0,
      failure_reason: null,
      livemode: false,
      created_at: now,
      updated_at: now,
      status_history: [
        { status: 'created', at: now, note: null },
        { status: 'completed', at: now, note: 'asset sent on chain' },
        { status: 'settled', at: now, note: null },
      ],
    });
    expect(await quoteStatus(ref)).toBe('consumed');
  });

  it('announces trade.created, trade.completed and trade.settled, each with a snapshot', async () => {
    const trade = await buy(100_000);
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.completed', 'trade.settled']);
    const events = await sb.ry.outbox.forObject(sb.ry.store, trade.reference);
    expect(events.map((e) => (e.data.object as { status: string }).status)).toEqual(['created', 'completed', 'settled']);
    expect(events[2]!.data.object).toEqual(trade);
  });

  it('moves the cedis to the treasury at the benchmark, the spread to revenue and the asset out of inventory', async () => {
    const before = await books();
    expect(before).toEqual({ wallet: { currency: 'GHS', available: 200_000, reserved: 0 }, inventory: 2_000_000_000_000, chain: 0, treasury: 0, spread: 0 });
    const trade = await buy(100_000);
    // 63.562688 USDT at the 15.5 benchmark is 985.22 GHS (rounded down); the rest is spread
    expect(await books()).toEqual({
      wallet: { currency: 'GHS', available: 100_000, reserved: 0 },
      inventory: 2_000_000_000_000 - trade.asset_amount,
      chain: trade.asset_amount,
      treasury: 98_522,
      spread: 1_478,
    });
    expectBalanced(await sb.trialBalance());
  });

  it("delivers on ERC20 and SOL with a transaction id in each network's form", async () => {
    const erc = await buy(10_000, ERC20, 'USDT', 'ERC20');
    expect(erc.transaction_id).toMatch(/^0x[0-9a-f]{64}$/);
    const sol = await buy(10_000, SOL, 'USDC', 'SOL');
    expect(sol.transaction_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{88}$/);
    expect(await balance('treasury:inventory:USDC:SOL', 'USDC')).toBe(500_000_000_000 - sol.asset_amount);
    expectBalanced(await sb.trialBalance());
  });

  it('settles the smallest buy a quote allows: one micro-unit for one pesewa, all of it spread', async () => {
    // at the 15.5 benchmark, 1 micro-USDT is worth 0.00155 pesewas: nothing goes to the treasury
    const ref = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', asset_amount: 1 });
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'settled', asset_amount: 1, net_fiat_amount: 1, settled_fiat_amount: 1 });
    expect(await books()).toMatchObject({ wallet: { currency: 'GHS', available: 199_999, reserved: 0 }, treasury: 0, spread: 1, chain: 1 });
    expectBalanced(await sb.trialBalance());
  });

  it('settles a one-pesewa buy by fiat_amount', async () => {
    // 1 pesewa buys 635 micro-USDT, worth 0.98 pesewa at the benchmark: rounds to nothing for the treasury
    const ref = await buyQuote(1);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'settled', asset_amount: 635, net_fiat_amount: 1 });
    expect(await books()).toMatchObject({ treasury: 0, spread: 1 });
    expectBalanced(await sb.trialBalance());
  });

  it('settles at the quoted rate when the market moved within the 50 bps tolerance', async () => {
    await sb.http.put('/api/v1/sandbox/rates/usd/USDT').set('Authorization', `Bearer ${sb.key}`).send({ price: '1' });
    const ref = await buyQuote(100_000);
    // 1.005 × 15.5 = 15.5775: exactly 50 bps above the quoted benchmark
    await sb.http.put('/api/v1/sandbox/rates/usd/USDT').set('Authorization', `Bearer ${sb.key}`).send({ price: '1.005' });
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'settled', applied_rate: 15.7325, asset_amount: 63_562_688, settled_fiat_amount: 100_000 });
  });
});

describe('POST /api/v1/trades: validation_error', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  const fields = (res: { body: { error: { details: { fields: { field: string; message: string }[] } } } }) => res.body.error.details.fields;

  it('refuses an unknown quote reference', async () => {
    const res = await execute({ quote_reference: 'qt_0000000000000000zzzz', delivery_address: TRC20 });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'quote_reference', message: 'no such quote' }] } });
  });

  it('refuses a malformed or missing quote_reference and unknown fields', async () => {
    for (const body of [{ quote_reference: 'quote-1', delivery_address: TRC20 }, { delivery_address: TRC20 }, { quote_reference: 42 }]) {
      const res = await execute(body);
      expect(res.status).toBe(400);
      expect(fields(res).map((f) => f.field)).toContain('quote_reference');
    }
    const ref = await buyQuote(1_000);
    const extra = await execute({ quote_reference: ref, delivery_address: TRC20, memo: 'x' });
    expect(extra.status).toBe(400);
    expect(fields(extra)).toContainEqual({ field: 'memo', message: 'unknown field' });
  });

  it('refuses a quote that was already executed, naming it consumed', async () => {
    const ref = await buyQuote(10_000);
    const first = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(first.status).toBe(201);
    const again = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(again.status).toBe(400);
    expect(again.body.message).toContain(first.body.data.reference);
    expect(again.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'quote_reference', message: 'quote already consumed' }] } });
    expect(await tradeCount()).toBe(1);
    expect((await sb.wallet()).available).toBe(190_000);
  });

  it('requires a delivery_address on a buy', async () => {
    const ref = await buyQuote(10_000);
    const res = await execute({ quote_reference: ref });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([{ field: 'delivery_address', message: 'required for a buy' }]);
    expect(await quoteStatus(ref)).toBe('created');
  });

  const wrongAddresses: [string, string, string, string][] = [
    ['USDT', 'TRC20', ERC20, 'an ERC20 address'],
    ['USDT', 'TRC20', `T${'a'.repeat(32)}`, 'a T address one character short'],
    ['USDT', 'TRC20', `T${'a'.repeat(32)}0`, 'a T address with a non-base58 0'],
    ['USDT', 'TRC20', `X${'a'.repeat(33)}`, 'a 34-character address not starting with T'],
    ['USDT', 'ERC20', TRC20, 'a TRC20 address'],
    ['USDC', 'ERC20', `0x${'a'.repeat(39)}`, '0x with 39 hex digits'],
    ['USDC', 'ERC20', `0x${'g'.repeat(40)}`, '0x with non-hex digits'],
    ['USDC', 'SOL', ERC20, 'an ERC20 address'],
    ['USDC', 'SOL', 'a'.repeat(31), '31 base58 characters'],
    ['USDC', 'SOL', 'a'.repeat(45), '45 base58 characters'],
    ['USDC', 'SOL', 'l'.repeat(40), 'characters outside base58 (l)'],
  ];
  for (const [asset, network, address, what] of wrongAddresses) {
    it(`refuses a ${network} buy of ${asset} delivered to ${what}`, async () => {
      const ref = await buyQuote(10_000, asset, network);
      const res = await execute({ quote_reference: ref, delivery_address: address });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(fields(res)).toEqual([{ field: 'delivery_address', message: expect.stringContaining(`not a ${network} address`) }]);
      expect(await quoteStatus(ref)).toBe('created');
      expect(await sb.wallet()).toMatchObject({ available: 200_000, reserved: 0 });
    });
  }

  it('refuses an empty delivery_address', async () => {
    const res = await execute({ quote_reference: await buyQuote(10_000), delivery_address: '' });
    expect(res.status).toBe(400);
    expect(fields(res).map((f) => f.field)).toEqual(['delivery_address']);
  });

  it('refuses a delivery_address on a sell', async () => {
    const ref = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 1_000_000 });
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([{ field: 'delivery_address', message: 'only for buys' }]);
    expect(await quoteStatus(ref)).toBe('created');
  });

  it('does not find a quote issued in the other environment', async () => {
    await sb.post('/api/v1/sandbox/merchant/trading', { stage: 'live' });
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'trades:write'] });
    const liveQuote = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 1_000_000 }, live.body.data.key);
    const res = await execute({ quote_reference: liveQuote });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual([{ field: 'quote_reference', message: 'no such quote' }]);
  });

  it('leaves the quote executable after every refusal', async () => {
    const ref = await buyQuote(10_000);
    await execute({ quote_reference: ref });
    await execute({ quote_reference: ref, delivery_address: ERC20 });
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(201);
  });

  it('requires the trades:write scope, a signature and an Idempotency-Key', async () => {
    const ref = await buyQuote(10_000);
    const readOnly = await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] });
    const noScope = await execute({ quote_reference: ref, delivery_address: TRC20 }, { key: readOnly.body.data.key, signingSecret: readOnly.body.data.signing_secret });
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe('forbidden');
    const unsigned = await sb.post('/api/v1/trades', { quote_reference: ref, delivery_address: TRC20 }, { idempotencyKey: 'k-unsigned' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.code).toBe('invalid_signature');
    const noKey = await sb.post('/api/v1/trades', { quote_reference: ref, delivery_address: TRC20 }, { sign: true });
    expect(noKey.status).toBe(400);
    expect(fields(noKey)).toEqual([{ field: 'Idempotency-Key', message: 'required' }]);
    expect(await quoteStatus(ref)).toBe('created');
  });
});

describe('POST /api/v1/trades: insufficient_funds', () => {
  afterEach(() => sb.close());

  it('refuses a buy the wallet cannot pay for, stores nothing and leaves the quote executable', async () => {
    await sandbox();
    await sb.fund(50_000);
    const ref = await buyQuote(100_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 }, { idempotencyKey: 'k-poor' });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'insufficient_funds', details: { available: 50_000, required: 100_000, currency: 'GHS' } });
    expect(await quoteStatus(ref)).toBe('created');
    expect(await tradeCount()).toBe(0);
    expect(await sb.wallet()).toMatchObject({ available: 50_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
    // the refusal was not stored under the key: after funding, the same key executes afresh
    await sb.fund(50_000);
    await sb.advance(1);
    const retry = await sb.post('/api/v1/trades', { quote_reference: ref, delivery_address: TRC20 }, { sign: true, idempotencyKey: 'k-poor' });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });
  });

  it('refuses a buy the treasury inventory cannot fill, naming the inventory', async () => {
    await sandbox({ inventory: { ...INVENTORY, USDT: { TRC20: 10_000_000, ERC20: 1_000_000_000_000 } } });
    await sb.fund(100_000);
    // 500 GHS buys 31.78 USDT; the treasury holds 10 on TRC20
    const ref = await buyQuote(50_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({
      code: 'insufficient_funds',
      details: { available: 10_000_000, required: 31_781_344, currency: 'USDT', source: 'inventory' },
    });
    expect(await quoteStatus(ref)).toBe('created');
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await balance(INVENTORY_USDT_TRC20, 'USDT')).toBe(10_000_000);
    // the other network's inventory fills it
    expect((await buy(50_000, ERC20, 'USDT', 'ERC20')).status).toBe('settled');
  });
});

describe('POST /api/v1/trades: rate_expired when the market moved beyond tolerance', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  const pin = (price: string) => sb.http.put('/api/v1/sandbox/rates/usd/USDT').set('Authorization', `Bearer ${sb.key}`).send({ price });

  for (const [price, direction] of [
    ['1.0051', 'up'],
    ['0.9949', 'down'],
  ] as const) {
    it(`refuses with moved_bps when the benchmark moved 51 bps ${direction}, then executes once back within tolerance`, async () => {
      await pin('1');
      const ref = await buyQuote(100_000);
      await pin(price);
      const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
      expect(res.status).toBe(409);
      expect(res.body.error).toEqual({ code: 'rate_expired', details: { quote_reference: ref, moved_bps: 51, tolerance_bps: 50 } });
      expect(await quoteStatus(ref)).toBe('created');
      expect(await sb.wallet()).toMatchObject({ available: 200_000, reserved: 0 });
      await pin('1.002');
      expect((await execute({ quote_reference: ref, delivery_address: TRC20 })).status).toBe(201);
    });
  }

  it('measures the move on the FX leg too', async () => {
    await pin('1');
    const ref = await buyQuote(100_000);
    await sb.http.put('/api/v1/sandbox/rates/fx').set('Authorization', `Bearer ${sb.key}`).send({ rate: '15.6' });
    const res = await execute({ quote_reference: ref, delivery_address: TRC20 });
    expect(res.status).toBe(409);
    // 15.6 vs 15.5: 64.5 bps, truncated
    expect(res.body.error.details).toMatchObject({ moved_bps: 64, tolerance_bps: 50 });
  });
});

describe('Screening: compliance_block', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  it('refuses delivery to a blocked address and changes nothing', async () => {
    const ref = await buyQuote(100_000);
    const before = await books();
    const res = await execute({ quote_reference: ref, delivery_address: TRC20_BLOCKED });
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({ code: 'compliance_block', details: { reason: 'blocked_address', delivery_address: TRC20_BLOCKED } });
    expect(await books()).toEqual(before);
    expect(await tradeCount()).toBe(0);
    expect(await quoteStatus(ref)).toBe('created');
    expect(await sb.events(ref)).toEqual(['quote.created']);
  });

  it('matches EVM addresses whatever their case', async () => {
    const ref = await buyQuote(10_000, 'USDC', 'ERC20');
    const res = await execute({ quote_reference: ref, delivery_address: `0x${ERC20_BLOCKED.slice(2).toUpperCase()}` });
    expect(res.status).toBe(403);
    expect(res.body.error.details.reason).toBe('blocked_address');
  });

  it('treats base58 addresses as case-sensitive', async () => {
    const ref = await buyQuote(10_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20_BLOCKED.replace('B1ocked', 'b1ocked') });
    expect(res.status).toBe(201);
  });
});

describe('Compliance review: created -> under_review -> (approve) completed -> settled, or (reject) failed', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  const review = (reference: string, decision: string) => sb.post(`/api/v1/sandbox/trades/${reference}/review`, { decision });

  async function parked() {
    const ref = await buyQuote(100_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20_REVIEW });
    expect(res.status).toBe(403);
    return { res, reference: res.body.error.details.order_reference as string, quoteRef: ref };
  }

  it('answers 403 compliance_block with the order reference and status under_review, and holds the cedis', async () => {
    const { res, reference, quoteRef } = await parked();
    expect(res.body.error).toEqual({ code: 'compliance_block', details: { order_reference: expect.stringMatching(/^trd_[0-9a-z]{20}$/), status: 'under_review' } });
    expect(await sb.events(reference)).toEqual(['trade.created', 'compliance.review_required']);
    const snapshot = (await sb.ry.outbox.forObject(sb.ry.store, reference))[1]!.data.object;
    expect(snapshot).toMatchObject({ reference, status: 'under_review' });
    const trade = (await sb.get(`/api/v1/trades/${reference}`)).body.data;
    expect(trade).toMatchObject({ status: 'under_review', delivery_address: TRC20_REVIEW, settled_fiat_amount: null, transaction_id: null });
    expect(trade.status_history).toEqual([expect.objectContaining({ status: 'created' }), expect.objectContaining({ status: 'under_review', note: 'delivery address flagged for review' })]);
    expect(await quoteStatus(quoteRef)).toBe('consumed');
    expect(await books()).toEqual({ wallet: { currency: 'GHS', available: 100_000, reserved: 100_000 }, inventory: 2_000_000_000_000, chain: 0, treasury: 0, spread: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('settles from the held cedis when approved', async () => {
    const { reference } = await parked();
    const res = await review(reference, 'approve');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ reference, status: 'settled', settled_fiat_amount: 100_000, transaction_id: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(statuses(res.body.data)).toEqual(['created', 'under_review', 'completed', 'settled']);
    expect(await sb.events(reference)).toEqual(['trade.created', 'compliance.review_required', 'trade.completed', 'trade.settled']);
    expect(await books()).toEqual({
      wallet: { currency: 'GHS', available: 100_000, reserved: 0 },
      inventory: 2_000_000_000_000 - 63_562_688,
      chain: 63_562_688,
      treasury: 98_522,
      spread: 1_478,
    });
    expectBalanced(await sb.trialBalance());
  });

  it('fails and releases the held cedis when rejected', async () => {
    const { reference } = await parked();
    const res = await review(reference, 'reject');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ reference, status: 'failed', failure_reason: 'rejected_by_compliance', settled_fiat_amount: null });
    expect(statuses(res.body.data)).toEqual(['created', 'under_review', 'failed']);
    expect(await sb.events(reference)).toEqual(['trade.created', 'compliance.review_required', 'trade.failed']);
    expect(await books()).toEqual({ wallet: { currency: 'GHS', available: 200_000, reserved: 0 }, inventory: 2_000_000_000_000, chain: 0, treasury: 0, spread: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('decides a review only once', async () => {
    const { reference } = await parked();
    await review(reference, 'reject');
    for (const decision of ['approve', 'reject']) {
      const res = await review(reference, decision);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'reference', message: 'not under review' }] } });
    }
    const settled = await buy(10_000);
    expect((await review(settled.reference, 'approve')).status).toBe(400);
  });

  it('refuses a decision other than approve or reject, and an unknown trade', async () => {
    const { reference } = await parked();
    expect((await review(reference, 'maybe')).status).toBe(400);
    const unknown = await review('trd_00000000000000000000', 'approve');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
  });

  it('refuses a buy to review when the wallet cannot cover the hold', async () => {
    const ref = await buyQuote(300_000);
    const res = await execute({ quote_reference: ref, delivery_address: TRC20_REVIEW });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('insufficient_funds');
    expect(await tradeCount()).toBe(0);
  });

  it('replays the stored 403 for the same Idempotency-Key and body', async () => {
    const ref = await buyQuote(100_000);
    const first = await sb.post('/api/v1/trades', { quote_reference: ref, delivery_address: TRC20_REVIEW }, { sign: true, idempotencyKey: 'k-review' });
    await sb.advance(1);
    const again = await sb.post('/api/v1/trades', { quote_reference: ref, delivery_address: TRC20_REVIEW }, { sign: true, idempotencyKey: 'k-review' });
    expect(again.status).toBe(403);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await tradeCount()).toBe(1);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 100_000 });
  });
});

describe('Reversal: settled -> reversed (buy)', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  const reverse = (reference: string) => sb.post(`/api/v1/sandbox/trades/${reference}/reverse`, undefined);

  it('reverses every settlement journal: wallet, treasury, spread and inventory are as before', async () => {
    const before = await books();
    const trade = await buy(100_000);
    const res = await reverse(trade.reference);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ reference: trade.reference, status: 'reversed' });
    expect(statuses(res.body.data)).toEqual(['created', 'completed', 'settled', 'reversed']);
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.completed', 'trade.settled', 'trade.reversed']);
    expect(await books()).toEqual(before);
    expectBalanced(await sb.trialBalance());
    const journals = await sb.ry.store.all<{ kind: string }>("SELECT kind FROM ledger_journals WHERE ref_type = 'trade' AND ref_id = ? ORDER BY seq", [trade.reference]);
    expect(journals.map((j) => j.kind)).toEqual(['trade.settled', 'trade.reversed']);
  });

  it('reverses a trade only once, and only when settled', async () => {
    const trade = await buy(10_000);
    await reverse(trade.reference);
    const again = await reverse(trade.reference);
    expect(again.status).toBe(400);
    expect(again.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'reference', message: 'not settled' }] } });
    const parked = await execute({ quote_reference: await buyQuote(10_000), delivery_address: TRC20_REVIEW });
    expect((await reverse(parked.body.error.details.order_reference)).status).toBe(400);
    expectBalanced(await sb.trialBalance());
  });

  it('answers 404 for an unknown trade', async () => {
    expect((await reverse('trd_00000000000000000000')).status).toBe(404);
  });
});

describe('Idempotent execution', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(200_000);
  });
  afterEach(() => sb.close());

  it('replays the stored response for the same key and body: one trade, one debit', async () => {
    const body = { quote_reference: await buyQuote(100_000), delivery_address: TRC20 };
    const first = await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-replay' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    await sb.advance(1);
    const again = await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-replay' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await tradeCount()).toBe(1);
    expect((await sb.get('/api/v1/trades')).body.data).toHaveLength(1);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(first.body.data.reference)).toEqual(['trade.created', 'trade.completed', 'trade.settled']);
  });

  it('answers 422 idempotency_key_reused when the key comes back with another body', async () => {
    const first = await sb.post('/api/v1/trades', { quote_reference: await buyQuote(10_000), delivery_address: TRC20 }, { sign: true, idempotencyKey: 'k-reused' });
    expect(first.status).toBe(201);
    const other = await buyQuote(20_000);
    const res = await sb.post('/api/v1/trades', { quote_reference: other, delivery_address: TRC20 }, { sign: true, idempotencyKey: 'k-reused' });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
    expect(await quoteStatus(other)).toBe('created');
    expect(await tradeCount()).toBe(1);
    expect((await sb.wallet()).available).toBe(190_000);
  });

  it('refuses a second execution of the same quote under a new key as consumed', async () => {
    const body = { quote_reference: await buyQuote(10_000), delivery_address: TRC20 };
    expect((await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-one' })).status).toBe(201);
    await sb.advance(1);
    const res = await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-two' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'quote_reference', message: 'quote already consumed' }]);
    expect(await tradeCount()).toBe(1);
  });

  it('answers a byte-identical signed retry in the same second from the store: the signature covers the key', async () => {
    const body = { quote_reference: await buyQuote(10_000), delivery_address: TRC20 };
    const timestamp = Math.floor(sb.ry.wallClock.now() / 1000);
    const first = await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-same', timestamp });
    expect(first.status).toBe(201);
    const res = await sb.post('/api/v1/trades', body, { sign: true, idempotencyKey: 'k-same', timestamp });
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(res.body).toEqual(first.body);
    expect(await tradeCount()).toBe(1);
  });
});

describe('Limits at quote and at execute', () => {
  afterEach(() => sb.close());

  const quoteRes = (body: Record<string, unknown>) => sb.post('/api/v1/trades/quote', body);
  const limitDetails = (limit: string, limit_amount: number, used: number, requested: number) => ({
    limit,
    limit_amount,
    used,
    requested,
    remaining: Math.max(0, limit_amount - used),
    currency: 'GHS',
  });

  it('adds up the trades of a UTC day against the daily limit and starts afresh the next day', async () => {
    // a deposit window longer than the test, so the pending sell never fails
    await sandbox({ limits: { per_trade: 1_000_000, daily: 2_500_000, monthly: 100_000_000 }, deposit_window_seconds: 7 * 24 * 3600 });
    await sb.fund(10_000_000);
    await buy(1_000_000);
    await sb.advance(3_600);
    // a pending sell counts as well as a settled buy
    const sell = await execute({ quote_reference: await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 }) });
    expect(sell.body.data.status).toBe('pending_payment');
    const over = await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 });
    expect(over.status).toBe(422);
    expect(over.body.error).toEqual({ code: 'limit_exceeded', details: limitDetails('daily', 2_500_000, 2_000_000, 1_000_000) });
    // up to the limit exactly
    await buy(500_000);
    const full = await quoteRes({ side: 'sell', asset: 'USDC', network: 'SOL', fiat_amount: 1 });
    expect(full.status).toBe(422);
    expect(full.body.error.details).toEqual(limitDetails('daily', 2_500_000, 2_500_000, 1));
    // 23:59:59 is still the same day
    await sb.advance(24 * 3600 - 3_600 - 1);
    expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1 })).status).toBe(422);
    await sb.advance(1);
    expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(201);
  });

  it('does not count failed or reversed trades toward the daily limit', async () => {
    await sandbox({ limits: { per_trade: 1_000_000, daily: 1_500_000 } });
    await sb.fund(10_000_000);
    const first = await buy(1_000_000);
    expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(422);
    await sb.post(`/api/v1/sandbox/trades/${first.reference}/reverse`, undefined);
    const parked = await execute({ quote_reference: await buyQuote(1_000_000), delivery_address: TRC20_REVIEW });
    expect(parked.status).toBe(403);
    // a trade under review counts
    expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(422);
    await sb.post(`/api/v1/sandbox/trades/${parked.body.error.details.order_reference}/review`, { decision: 'reject' });
    expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(201);
  });

  it('refuses at execute a quote that fit the daily limit when issued but no longer does', async () => {
    await sandbox({ limits: { per_trade: 1_000_000, daily: 1_500_000 } });
    await sb.fund(10_000_000);
    const q1 = await buyQuote(1_000_000);
    const q2 = await buyQuote(1_000_000);
    expect((await execute({ quote_reference: q1, delivery_address: TRC20 })).status).toBe(201);
    const res = await execute({ quote_reference: q2, delivery_address: TRC20 });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'limit_exceeded', details: limitDetails('daily', 1_500_000, 1_000_000, 1_000_000) });
    expect(await quoteStatus(q2)).toBe('created');
    expect(await tradeCount()).toBe(1);
    expect((await sb.wallet()).available).toBe(9_000_000);
  });

  it('adds up a UTC month against the monthly limit, at quote and at execute, and starts afresh the next month', async () => {
    await sandbox({ limits: { per_trade: 1_000_000, daily: 2_000_000, monthly: 3_500_000 } });
    await sb.fund(10_000_000);
    await buy(1_000_000);
    await buy(1_000_000);
    await sb.advance(24 * 3600);
    const held = await buyQuote(1_000_000);
    await buy(1_000_000);
    // the month has 3 000 000 used: the quote issued earlier no longer fits
    const res = await execute({ quote_reference: held, delivery_address: TRC20 });
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'limit_exceeded', details: limitDetails('monthly', 3_500_000, 3_000_000, 1_000_000) });
    await buy(500_000);
    const over = await quoteRes({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 100 });
    expect(over.status).toBe(422);
    expect(over.body.error.details).toEqual(limitDetails('monthly', 3_500_000, 3_500_000, 100));
    // 2026-01-02 -> 2026-02-01
    await sb.advance(30 * 24 * 3600);
    expect(new Date(sb.ry.clock.now()).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect((await quoteRes({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_000 })).status).toBe(201);
  });

  describe('the exposure cap shrinks as the inventory depletes', () => {
    // 1000 USDT on TRC20 and a cap of 10 000 GHS per USDT buy when full
    const capped = () => sandbox({ inventory: { ...INVENTORY, USDT: { TRC20: 1_000_000_000, ERC20: 1_000_000_000_000 } }, exposure_cap: { USDT: 1_000_000, USDC: 50_000_000 } });

    it('refuses at quote a buy that fit at the start once earlier buys depleted the inventory', async () => {
      await capped();
      await sb.fund(10_000_000);
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_000_001 })).body.error.details).toEqual(limitDetails('exposure_cap', 1_000_000, 0, 1_000_001));
      const first = await buy(800_000);
      expect(first.asset_amount).toBe(508_501_509);
      const inventory = 1_000_000_000 - 508_501_509;
      expect(await balance(INVENTORY_USDT_TRC20, 'USDT')).toBe(inventory);
      const cap = Math.floor((1_000_000 * inventory) / 1_000_000_000);
      expect(cap).toBe(491_498);
      const res = await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 800_000 });
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({ code: 'limit_exceeded', details: limitDetails('exposure_cap', cap, 0, 800_000) });
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: cap })).status).toBe(201);
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: cap + 1 })).status).toBe(422);
      // sells are not capped, and the other network keeps its own inventory
      expect((await quoteRes({ side: 'sell', asset: 'USDT', network: 'TRC20', fiat_amount: 800_000 })).status).toBe(201);
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'ERC20', fiat_amount: 800_000 })).status).toBe(201);
    });

    it('refuses at execute a quoted buy that the cap no longer allows', async () => {
      await capped();
      await sb.fund(10_000_000);
      const q1 = await buyQuote(700_000);
      const q2 = await buyQuote(700_000);
      const first = await execute({ quote_reference: q1, delivery_address: TRC20 });
      expect(first.status).toBe(201);
      const cap = Math.floor((1_000_000 * (1_000_000_000 - first.body.data.asset_amount)) / 1_000_000_000);
      expect(cap).toBeLessThan(700_000);
      const res = await execute({ quote_reference: q2, delivery_address: TRC20 });
      expect(res.status).toBe(422);
      expect(res.body.error).toEqual({ code: 'limit_exceeded', details: limitDetails('exposure_cap', cap, 0, 700_000) });
      expect(await quoteStatus(q2)).toBe('created');
    });

    it('widens again when a reversal returns the asset to inventory', async () => {
      await capped();
      await sb.fund(10_000_000);
      const first = await buy(800_000);
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 800_000 })).status).toBe(422);
      await sb.post(`/api/v1/sandbox/trades/${first.reference}/reverse`, undefined);
      expect((await quoteRes({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 800_000 })).status).toBe(201);
    });
  });
});

describe('Reading trades', () => {
  beforeEach(async () => {
    await sandbox();
    await sb.fund(1_000_000);
  });
  afterEach(() => sb.close());

  it('GET /api/v1/trades/{reference} answers the trade as executed', async () => {
    const trade = await buy(10_000);
    const res = await sb.get(`/api/v1/trades/${trade.reference}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: 'Trade', data: trade });
  });

  it('answers 404 for an unknown trade, a trade of the other environment and a reference of any other shape', async () => {
    const trade = await buy(10_000);
    const unknown = await sb.get('/api/v1/trades/trd_00000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] });
    const other = await sb.get(`/api/v1/trades/${trade.reference}`, live.body.data.key);
    expect(other.status).toBe(404);
    expect((await sb.get('/api/v1/trades', live.body.data.key)).body.data).toEqual([]);
    const malformed = await sb.get('/api/v1/trades/not-a-reference');
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual({ status: false, message: "No such trade: 'not-a-reference'", error: { code: 'not_found', details: { id: 'not-a-reference' } } });
  });

  it('lists newest first, filters by status, side, asset and creation time, and pages with a cursor', async () => {
    const t0 = sb.ry.clock.now();
    const a = await buy(10_000); // settled buy USDT, t0
    await sb.advance(60);
    const b = (await execute({ quote_reference: await quote({ side: 'sell', asset: 'USDC', network: 'SOL', asset_amount: 5_000_000 }) })).body.data; // pending sell USDC, t0+60
    await sb.advance(60);
    const c = await buy(20_000, ERC20, 'USDC', 'ERC20'); // settled buy USDC, t0+120
    await sb.advance(60);
    const d = (await execute({ quote_reference: await buyQuote(30_000), delivery_address: TRC20_REVIEW })).body.error.details.order_reference; // under_review buy USDT, t0+180
    await sb.advance(60);
    const e = (await execute({ quote_reference: await quote({ side: 'sell', asset: 'USDT', network: 'ERC20', asset_amount: 2_000_000 }) })).body.data; // pending sell USDT, t0+240

    const refs = async (query: string) => {
      const res = await sb.get(`/api/v1/trades${query}`);
      expect(res.status, query).toBe(200);
      return res.body.data.map((t: { reference: string }) => t.reference);
    };
    const at = (seconds: number) => encodeURIComponent(new Date(t0 + seconds * 1000).toISOString());

    expect(await refs('')).toEqual([e.reference, d, c.reference, b.reference, a.reference]);
    expect(await refs('?status=settled')).toEqual([c.reference, a.reference]);
    expect(await refs('?status=pending_payment')).toEqual([e.reference, b.reference]);
    expect(await refs('?status=under_review')).toEqual([d]);
    expect(await refs('?status=failed')).toEqual([]);
    expect(await refs('?side=sell')).toEqual([e.reference, b.reference]);
    expect(await refs('?side=buy')).toEqual([d, c.reference, a.reference]);
    expect(await refs('?asset=USDC')).toEqual([c.reference, b.reference]);
    expect(await refs('?asset=USDT&side=buy')).toEqual([d, a.reference]);
    // created_from inclusive, created_to exclusive
    expect(await refs(`?created_from=${at(60)}`)).toEqual([e.reference, d, c.reference, b.reference]);
    expect(await refs(`?created_to=${at(60)}`)).toEqual([a.reference]);
    expect(await refs(`?created_from=${at(60)}&created_to=${at(180)}`)).toEqual([c.reference, b.reference]);
    expect(await refs(`?created_from=${at(60)}&created_to=${at(180)}&side=sell`)).toEqual([b.reference]);

    // cursor pagination, two per page
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await sb.get(`/api/v1/trades?page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((t: { reference: string }) => t.reference));
      cursor = res.body.meta.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([e.reference, d, c.reference, b.reference, a.reference]);

    // filters and cursors together
    const first = await sb.get('/api/v1/trades?page_size=1&side=buy');
    expect(first.body.data.map((t: { reference: string }) => t.reference)).toEqual([d]);
    const second = await sb.get(`/api/v1/trades?page_size=1&side=buy&cursor=${encodeURIComponent(first.body.meta.next_cursor)}`);
    expect(second.body.data.map((t: { reference: string }) => t.reference)).toEqual([c.reference]);
  });

  it('refuses unknown filter values and page sizes over 100', async () => {
    for (const query of ['?status=pending', '?side=hold', '?asset=DAI', '?created_from=yesterday', '?page_size=101', '?colour=red']) {
      const res = await sb.get(`/api/v1/trades${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
  });

  it('shows trades in GET /api/v1/transactions: a buy as a debit, a sell as a credit', async () => {
    const bought = await buy(10_000);
    const sold = (await execute({ quote_reference: await quote({ side: 'sell', asset: 'USDC', network: 'SOL', asset_amount: 5_000_000 }) })).body.data;
    const res = await sb.get('/api/v1/transactions?type=trade');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        id: sold.reference,
        type: 'trade',
        direction: 'credit',
        status: 'pending_payment',
        amount: sold.net_fiat_amount,
        fees: 0,
        currency: 'GHS',
        channel: 'USDC:SOL',
        provider: null,
        created_at: sold.created_at,
        updated_at: sold.updated_at,
      },
      {
        id: bought.reference,
        type: 'trade',
        direction: 'debit',
        status: 'settled',
        amount: 10_000,
        fees: 0,
        currency: 'GHS',
        channel: 'USDT:TRC20',
        provider: null,
        created_at: bought.created_at,
        updated_at: bought.updated_at,
      },
    ]);
    const all = await sb.get('/api/v1/transactions');
    expect(all.body.data.map((t: { id: string }) => t.id)).toEqual([sold.reference, bought.reference]);
    expect((await sb.get('/api/v1/transactions?type=charge')).body.data).toEqual([]);
  });

  it('keeps a trade refused before creation out of the lists', async () => {
    await execute({ quote_reference: await buyQuote(10_000), delivery_address: TRC20_BLOCKED });
    expect((await sb.get('/api/v1/trades')).body.data).toEqual([]);
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });
});

describe('Merchant accounts in the ledger', () => {
  afterEach(() => sb.close());

  it('names the sandbox merchant wallet accounts the balances are read from', async () => {
    await sandbox();
    await sb.fund(50_000);
    await buy(10_000);
    expect(await balance(`merchant:${MERCHANT}:wallet:available`, 'GHS')).toBe(40_000);
    expect(await balance(`merchant:${MERCHANT}:wallet:reserved`, 'GHS')).toBe(0);
  });
});
