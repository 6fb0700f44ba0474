// Sells: created -> pending_payment -> pending_confirmation -> completed -> settled, the deposit
// window (pending_payment -> failed), confirmations per network on the virtual clock,
// underpayment (pro rata at the quoted rate, rounded down), overpayment (excess held for the
// merchant), deposits on trades not awaiting one, and reversal of a settled sell.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type PostOptions, type TestSandbox } from '../support/test-sandbox.ts';

// Volatility 0: USD legs at exactly 1 and always fresh; FX 15.5. Sells at 15.2675, buys at 15.7325.
const MARKET = { volatility_bps: 0 };
const TRC20 = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const MERCHANT = 'mch_sandbox';
const INITIAL_USDT_TRC20 = 2_000_000_000_000;

let sb: TestSandbox;

const execute = (body: Record<string, unknown>, opts: PostOptions = {}) => sb.execute(body, opts);

async function quote(body: Record<string, unknown>): Promise<string> {
  const res = await sb.post('/api/v1/trades/quote', body);
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.reference;
}

/** Executes a sell and answers the pending_payment trade. */
async function sell(amount: { asset_amount?: number; fiat_amount?: number }, asset = 'USDT', network = 'TRC20') {
  const res = await execute({ quote_reference: await quote({ side: 'sell', asset, network, ...amount }) });
  if (res.status !== 201) throw new Error(`sell failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const deposit = (trade_reference: string, asset_amount: number) => sb.post('/api/v1/sandbox/deposits', { trade_reference, asset_amount });
const getTrade = async (reference: string) => (await sb.get(`/api/v1/trades/${reference}`)).body.data;
const reverse = (reference: string) => sb.post(`/api/v1/sandbox/trades/${reference}/reverse`, undefined);
const balance = (account: string, currency: string) => sb.ry.ledger.balance(sb.ry.store, 'test', account, currency);
const statuses = (trade: { status_history: { status: string }[] }) => trade.status_history.map((h) => h.status);

async function books(asset = 'USDT', network = 'TRC20') {
  return {
    wallet: await sb.wallet(),
    inventory: await balance(`treasury:inventory:${asset}:${network}`, asset),
    chain: await balance(`external:chain:${network}`, asset),
    excess: await balance(`merchant:${MERCHANT}:excess:${asset}:${network}`, asset),
    treasury: await balance('treasury:cedis', 'GHS'),
    spread: await balance('revenue:spread', 'GHS'),
  };
}

const untouched = { wallet: { currency: 'GHS', available: 0, reserved: 0 }, inventory: INITIAL_USDT_TRC20, chain: 0, excess: 0, treasury: 0, spread: 0 };

describe('A sell: created -> pending_payment -> pending_confirmation -> completed -> settled', () => {
  beforeEach(async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
  });
  afterEach(() => sb.close());

  it('answers pending_payment with a deposit address on the quote network, needing no wallet funds', async () => {
    const ref = await quote({ side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: 100_000_000 });
    const res = await execute({ quote_reference: ref });
    expect(res.status).toBe(201);
    const trade = res.body.data;
    expect(trade).toMatchObject({
      object: 'trade',
      status: 'pending_payment',
      side: 'sell',
      asset: 'USDT',
      network: 'TRC20',
      asset_amount: 100_000_000,
      net_fiat_amount: 152_675,
      settled_fiat_amount: null,
      applied_rate: 15.2675,
      quote_reference: ref,
      delivery_address: null,
      deposit_address: expect.stringMatching(/^T[1-9A-HJ-NP-Za-km-z]{33}$/),
      transaction_id: null,
      deposited_amount: null,
      excess_amount: null,
      confirmations: 0,
      required_confirmations: 19,
      failure_reason: null,
      livemode: false,
    });
    expect(res.body.message).toContain('100000000');
    expect(trade.status_history).toEqual([expect.objectContaining({ status: 'created', note: null }), expect.objectContaining({ status: 'pending_payment', note: 'awaiting the on-chain deposit' })]);
    expect(await books()).toEqual(untouched);
  });

  it('announces trade.created and trade.pending_payment on execute', async () => {
    const trade = await sell({ asset_amount: 100_000_000 });
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.pending_payment']);
  });

  it("gives deposit addresses in each network's format", async () => {
    expect((await sell({ asset_amount: 1_000_000 }, 'USDT', 'ERC20')).deposit_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect((await sell({ asset_amount: 1_000_000 }, 'USDC', 'SOL')).deposit_address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it('walks the deposit through its confirmations and then credits the wallet, with every event in order', async () => {
    const trade = await sell({ asset_amount: 100_000_000 });
    const seen = await deposit(trade.reference, 100_000_000);
    expect(seen.status).toBe(200);
    expect(seen.body.data).toMatchObject({
      status: 'pending_confirmation',
      deposited_amount: 100_000_000,
      transaction_id: expect.stringMatching(/^[0-9a-f]{64}$/),
      confirmations: 0,
      required_confirmations: 19,
    });
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.pending_payment', 'trade.pending_confirmation']);
    expect(await books()).toEqual(untouched);

    // TRC20: 19 confirmations of 3 s blocks = 57 s
    await sb.advance(30);
    expect(await getTrade(trade.reference)).toMatchObject({ status: 'pending_confirmation', confirmations: 10 });
    await sb.advance(26);
    expect(await getTrade(trade.reference)).toMatchObject({ status: 'pending_confirmation', confirmations: 18 });
    expect(await books()).toEqual(untouched);
    await sb.advance(1);

    const settled = await getTrade(trade.reference);
    expect(settled).toMatchObject({ status: 'settled', confirmations: 19, settled_fiat_amount: 152_675, deposited_amount: 100_000_000, excess_amount: 0 });
    expect(settled.status_history.map((h: { status: string; note: string | null }) => [h.status, h.note])).toEqual([
      ['created', null],
      ['pending_payment', 'awaiting the on-chain deposit'],
      ['pending_confirmation', 'deposit of 100000000 seen on chain'],
      ['completed', null],
      ['settled', null],
    ]);
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.pending_payment', 'trade.pending_confirmation', 'deposit.confirmed', 'trade.completed', 'trade.settled']);
    const events = await sb.ry.outbox.forObject(sb.ry.store, trade.reference);
    expect(events.find((e) => e.type === 'deposit.confirmed')!.data.object).toMatchObject({ status: 'pending_confirmation', confirmations: 19 });
    expect(events.at(-1)!.data.object).toEqual(settled);

    // 100 USDT at the 15.5 benchmark is 1 550 GHS out of the treasury; 1 526.75 to the merchant
    expect(await books()).toEqual({
      wallet: { currency: 'GHS', available: 152_675, reserved: 0 },
      inventory: INITIAL_USDT_TRC20 + 100_000_000,
      chain: -100_000_000,
      excess: 0,
      treasury: -155_000,
      spread: 2_325,
    });
    expectBalanced(await sb.trialBalance());
  });

  for (const [asset, network, required, seconds] of [
    ['USDT', 'ERC20', 12, 144],
    ['USDC', 'ERC20', 12, 144],
    ['USDC', 'SOL', 32, 16],
  ] as const) {
    it(`settles a ${asset} deposit on ${network} after ${required} confirmations (${seconds} s)`, async () => {
      const trade = await sell({ asset_amount: 10_000_000 }, asset, network);
      expect(trade.required_confirmations).toBe(required);
      await deposit(trade.reference, 10_000_000);
      await sb.advance(seconds - 1);
      expect(await getTrade(trade.reference)).toMatchObject({ status: 'pending_confirmation', confirmations: required - Math.ceil(required / seconds) });
      await sb.advance(1);
      expect(await getTrade(trade.reference)).toMatchObject({ status: 'settled', confirmations: required, settled_fiat_amount: 15_267 });
      expect(await balance(`treasury:inventory:${asset}:${network}`, asset)).toBeGreaterThan(0);
      expectBalanced(await sb.trialBalance());
    });
  }

  it('credits exactly the quoted cedis for a sell quoted by fiat_amount, whose asset amount was rounded up', async () => {
    const trade = await sell({ fiat_amount: 100_000 });
    expect(trade).toMatchObject({ asset_amount: 65_498_609, net_fiat_amount: 100_000 });
    await deposit(trade.reference, 65_498_609);
    await sb.advance(57);
    expect(await getTrade(trade.reference)).toMatchObject({ status: 'settled', settled_fiat_amount: 100_000 });
    expect((await sb.wallet()).available).toBe(100_000);
    // 65.498609 USDT at 15.5 = 1 015.228... GHS: the house keeps the difference
    expect(await balance('revenue:spread', 'GHS')).toBe(101_522 - 100_000);
    expectBalanced(await sb.trialBalance());
  });
});

describe('The deposit window: pending_payment -> failed', () => {
  afterEach(() => sb.close());

  it('fails a sell with no deposit after 3600 s, announcing trade.failed and moving no money', async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
    const trade = await sell({ asset_amount: 100_000_000 });
    await sb.advance(3_599);
    expect((await getTrade(trade.reference)).status).toBe('pending_payment');
    await sb.advance(1);
    const failed = await getTrade(trade.reference);
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'deposit_not_received', settled_fiat_amount: null, deposited_amount: null });
    expect(statuses(failed)).toEqual(['created', 'pending_payment', 'failed']);
    expect(failed.status_history[2].note).toBe('no deposit within the window');
    expect(await sb.events(trade.reference)).toEqual(['trade.created', 'trade.pending_payment', 'trade.failed']);
    expect(await books()).toEqual(untouched);
    expectBalanced(await sb.trialBalance());
  });

  it('refuses a deposit that arrives after the window closed', async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
    const trade = await sell({ asset_amount: 100_000_000 });
    await sb.advance(3_600);
    const res = await deposit(trade.reference, 100_000_000);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_error', details: { fields: [{ field: 'trade_reference', message: 'not awaiting a deposit' }] } });
    expect(await books()).toEqual(untouched);
  });

  it('settles a deposit seen in the last second even though its confirmations end after the window', async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
    const trade = await sell({ asset_amount: 100_000_000 });
    await sb.advance(3_599);
    expect((await deposit(trade.reference, 100_000_000)).status).toBe(200);
    await sb.advance(60);
    const settled = await getTrade(trade.reference);
    expect(settled.status).toBe('settled');
    expect(statuses(settled)).not.toContain('failed');
    expect(await sb.events(trade.reference)).not.toContain('trade.failed');
  });

  it('honours a configured window', async () => {
    sb = await startTestSandbox({ trading: { market: MARKET, deposit_window_seconds: 600 } });
    const trade = await sell({ asset_amount: 1_000_000 });
    await sb.advance(600);
    expect(await getTrade(trade.reference)).toMatchObject({ status: 'failed', failure_reason: 'deposit_not_received' });
  });
});

describe('Deposits that do not match the quote', () => {
  beforeEach(async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
  });
  afterEach(() => sb.close());

  it('settles an underpayment pro rata at the quoted rate, rounded down', async () => {
    const trade = await sell({ asset_amount: 100_000_000 });
    await deposit(trade.reference, 33_333_333);
    await sb.advance(57);
    const settled = await getTrade(trade.reference);
    // 33.333333 × 15.2675 = 508.916661... GHS
    expect(settled).toMatchObject({ status: 'settled', asset_amount: 100_000_000, net_fiat_amount: 152_675, deposited_amount: 33_333_333, settled_fiat_amount: 50_891, excess_amount: 0 });
    expect(settled.status_history.find((h: { status: string }) => h.status === 'completed').note).toBe('underpaid: settled 33333333 of 100000000 pro rata');
    // 33.333333 × 15.5 = 516.666661... GHS from the treasury
    expect(await books()).toEqual({
      wallet: { currency: 'GHS', available: 50_891, reserved: 0 },
      inventory: INITIAL_USDT_TRC20 + 33_333_333,
      chain: -33_333_333,
      excess: 0,
      treasury: -51_666,
      spread: 51_666 - 50_891,
    });
    expect(await sb.events(trade.reference)).toContain('trade.settled');
    expectBalanced(await sb.trialBalance());
  });

  it('settles an overpayment as quoted and holds the excess for the merchant', async () => {
    const trade = await sell({ asset_amount: 100_000_000 });
    await deposit(trade.reference, 120_000_000);
    await sb.advance(57);
    const settled = await getTrade(trade.reference);
    expect(settled).toMatchObject({ status: 'settled', deposited_amount: 120_000_000, settled_fiat_amount: 152_675, excess_amount: 20_000_000 });
    expect(settled.status_history.find((h: { status: string }) => h.status === 'completed').note).toBe('overpaid by 20000000: held for the merchant');
    expect(await books()).toEqual({
      wallet: { currency: 'GHS', available: 152_675, reserved: 0 },
      inventory: INITIAL_USDT_TRC20 + 100_000_000,
      chain: -120_000_000,
      excess: 20_000_000,
      treasury: -155_000,
      spread: 2_325,
    });
    expectBalanced(await sb.trialBalance());
  });

  it('settles a one-micro-unit deposit, worth less than a pesewa, for nothing and keeps the books balanced', async () => {
    const trade = await sell({ asset_amount: 10_000_000 });
    await deposit(trade.reference, 1);
    await sb.advance(57);
    expect(await getTrade(trade.reference)).toMatchObject({ status: 'settled', settled_fiat_amount: 0, deposited_amount: 1 });
    expect((await sb.wallet()).available).toBe(0);
    expectBalanced(await sb.trialBalance());
  });
});

describe('POST /api/v1/sandbox/deposits on a trade not awaiting one', () => {
  beforeEach(async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
    await sb.fund(100_000);
  });
  afterEach(() => sb.close());

  const notAwaiting = { code: 'validation_error', details: { fields: [{ field: 'trade_reference', message: 'not awaiting a deposit' }] } };

  it('refuses a deposit on a buy', async () => {
    const res = await execute({ quote_reference: await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 10_000 }), delivery_address: TRC20 });
    const dep = await deposit(res.body.data.reference, 1_000_000);
    expect(dep.status).toBe(400);
    expect(dep.body.error).toEqual(notAwaiting);
  });

  it('refuses a second deposit, while confirming and once settled', async () => {
    const trade = await sell({ asset_amount: 10_000_000 });
    expect((await deposit(trade.reference, 10_000_000)).status).toBe(200);
    const again = await deposit(trade.reference, 10_000_000);
    expect(again.status).toBe(400);
    expect(again.body.error).toEqual(notAwaiting);
    await sb.advance(57);
    expect((await deposit(trade.reference, 10_000_000)).body.error).toEqual(notAwaiting);
    expect((await getTrade(trade.reference)).deposited_amount).toBe(10_000_000);
    expect((await sb.wallet()).available).toBe(100_000 + 15_267);
  });

  it('answers 404 for an unknown trade and 400 for a malformed reference or amount', async () => {
    const unknown = await deposit('trd_00000000000000000000', 1_000);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect((await deposit('qt_00000000000000000000', 1_000)).status).toBe(400);
    const trade = await sell({ asset_amount: 10_000_000 });
    for (const amount of [0, -1, 1.5]) {
      const res = await deposit(trade.reference, amount);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields[0].field).toBe('asset_amount');
    }
    expect((await getTrade(trade.reference)).status).toBe('pending_payment');
  });

  it('refuses the deposit helper to a live key', async () => {
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'trades:write'] });
    const trade = await sell({ asset_amount: 10_000_000 });
    const res = await sb.post('/api/v1/sandbox/deposits', { trade_reference: trade.reference, asset_amount: 10_000_000 }, { key: live.body.data.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });
});

describe('Reversal: settled -> reversed (sell)', () => {
  beforeEach(async () => {
    sb = await startTestSandbox({ trading: { market: MARKET } });
  });
  afterEach(() => sb.close());

  async function settledSell(deposited = 100_000_000) {
    const trade = await sell({ asset_amount: 100_000_000 });
    await deposit(trade.reference, deposited);
    await sb.advance(57);
    return trade.reference as string;
  }

  it('takes back the cedis and returns the asset: every book as before the sell', async () => {
    const reference = await settledSell();
    const res = await reverse(reference);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('reversed');
    expect(statuses(res.body.data)).toEqual(['created', 'pending_payment', 'pending_confirmation', 'completed', 'settled', 'reversed']);
    expect((await sb.events(reference)).at(-1)).toBe('trade.reversed');
    expect(await books()).toEqual(untouched);
    expectBalanced(await sb.trialBalance());
  });

  it("also returns an overpayment's excess", async () => {
    const reference = await settledSell(120_000_000);
    expect(await balance(`merchant:${MERCHANT}:excess:USDT:TRC20`, 'USDT')).toBe(20_000_000);
    expect((await reverse(reference)).status).toBe(200);
    expect(await books()).toEqual(untouched);
    expectBalanced(await sb.trialBalance());
  });

  it('refuses with insufficient_funds when the credited cedis were spent, and stays settled', async () => {
    const reference = await settledSell();
    const spend = await execute({ quote_reference: await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 150_000 }), delivery_address: TRC20 });
    expect(spend.status).toBe(201);
    const before = await books();
    const res = await reverse(reference);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'insufficient_funds', details: { available: 2_675, required: 152_675, currency: 'GHS' } });
    expect((await getTrade(reference)).status).toBe('settled');
    expect(await books()).toEqual(before);
    expect(await sb.events(reference)).not.toContain('trade.reversed');
  });

  it('refuses to reverse a sell still pending, confirming or failed', async () => {
    const pending = await sell({ asset_amount: 1_000_000 });
    expect((await reverse(pending.reference)).status).toBe(400);
    await deposit(pending.reference, 1_000_000);
    expect((await reverse(pending.reference)).status).toBe(400);
    const lapsed = await sell({ asset_amount: 1_000_000 });
    await sb.advance(3_600);
    expect((await getTrade(lapsed.reference)).status).toBe('failed');
    const res = await reverse(lapsed.reference);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'reference', message: 'not settled' }]);
  });
});

describe('Sells and the treasury exposure cap', () => {
  afterEach(() => sb.close());

  it('never lets the cap on buys exceed its configured value when sells grow the inventory beyond its start', async () => {
    sb = await startTestSandbox({
      trading: {
        market: MARKET,
        inventory: { USDT: { TRC20: 1_000_000_000, ERC20: 1_000_000_000 }, USDC: { ERC20: 1_000_000_000, SOL: 1_000_000_000 } },
        exposure_cap: { USDT: 1_000_000, USDC: 1_000_000 },
      },
    });
    await sb.fund(5_000_000);
    // 500 USDT sold to the house: inventory 1500 USDT, half again its start
    const trade = await sell({ asset_amount: 500_000_000 });
    await deposit(trade.reference, 500_000_000);
    await sb.advance(57);
    expect(await balance('treasury:inventory:USDT:TRC20', 'USDT')).toBe(1_500_000_000);
    const res = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 1_200_000 });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toMatchObject({ limit: 'exposure_cap', limit_amount: 1_000_000 });
  });
});
