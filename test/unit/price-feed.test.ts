import { afterEach, describe, expect, it } from 'vitest';
import type { TradingConfig } from '../../src/config/config.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { legAgeSeconds, PriceFeed, type Asset } from '../../src/trading/price-feed.ts';
import { mulRates, parseRate, RATE_SCALE } from '../../src/trading/rate-math.ts';
import { buildConfig } from '../../src/railyard-config.ts';

const DAY = 24 * 3600 * 1000;
const INTERVAL = 10_000; // the default interval_seconds, in ms

const market = (overrides: Record<string, unknown> = {}): TradingConfig['market'] => buildConfig({ trading: { market: overrides } }).trading.market;

const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

function setup(opts: { seed?: number; start?: number; market?: Record<string, unknown>; store?: SqliteStore; clock?: VirtualClock } = {}) {
  const store = opts.store ?? new SqliteStore(':memory:');
  if (!opts.store) stores.push(store);
  const clock = opts.clock ?? new VirtualClock(opts.start ?? VIRTUAL_EPOCH);
  const feed = new PriceFeed({ store, clock, seed: opts.seed ?? 1, market: market(opts.market) });
  const advance = (ms: number) => clock.set(clock.now() + ms);
  return { store, clock, feed, advance };
}

/** The USD values of `asset` at each of `steps` steps, one interval apart. */
async function series(feed: PriceFeed, advance: (ms: number) => void, asset: Asset, steps: number, interval = INTERVAL): Promise<bigint[]> {
  const values: bigint[] = [];
  for (let i = 0; i < steps; i++) {
    values.push((await feed.usd(asset)).value);
    advance(interval);
  }
  return values;
}

describe('PriceFeed: the simulated USD market', () => {
  it('starts at the configured value, as of the start of the current step', async () => {
    const { feed } = setup({ start: VIRTUAL_EPOCH + 12_345, market: { usd_start: { USDT: '1.0002', USDC: '0.9999' } } });
    await feed.init();
    expect(await feed.usd('USDT')).toEqual({ name: 'USDT', value: parseRate('1.0002'), asOf: VIRTUAL_EPOCH + 10_000, source: 'market' });
    expect(await feed.usd('USDC')).toEqual({ name: 'USDC', value: parseRate('0.9999'), asOf: VIRTUAL_EPOCH + 10_000, source: 'market' });
  });

  it('is deterministic: two feeds with the same seed give identical sequences over 1000 steps', async () => {
    const a = setup({ seed: 42 });
    const b = setup({ seed: 42 });
    const [sa, sb] = [await series(a.feed, a.advance, 'USDT', 1000), await series(b.feed, b.advance, 'USDT', 1000)];
    expect(sa).toEqual(sb);
    expect(new Set(sa.map(String)).size).toBeGreaterThan(50); // it does move
  });

  it('does not depend on how often it is read: one jump of 1000 steps lands where 1000 reads do', async () => {
    const a = setup({ seed: 42 });
    const b = setup({ seed: 42 });
    const stepped = await series(a.feed, a.advance, 'USDC', 1000);
    b.advance(999 * INTERVAL + 9_999);
    expect((await b.feed.usd('USDC')).value).toBe(stepped[999]);
  });

  it('differs between seeds, and between assets under one seed', async () => {
    const a = setup({ seed: 1 });
    const b = setup({ seed: 2 });
    const c = setup({ seed: 1 });
    expect(await series(a.feed, a.advance, 'USDT', 200)).not.toEqual(await series(b.feed, b.advance, 'USDT', 200));
    const usdt: bigint[] = [];
    const usdc: bigint[] = [];
    for (let i = 0; i < 200; i++) {
      usdt.push((await c.feed.usd('USDT')).value);
      usdc.push((await c.feed.usd('USDC')).value);
      c.advance(INTERVAL);
    }
    expect(usdt).not.toEqual(usdc);
  });

  it('mean-reverts: over 100k steps the price stays in a narrow band around 1.00', async () => {
    for (const volatility of [5, 50]) {
      const { feed, advance } = setup({ seed: 9, market: { volatility_bps: volatility } });
      let min = RATE_SCALE * 10n;
      let max = 0n;
      let sum = 0n;
      const steps = 100_000;
      for (let i = 0; i < steps; i++) {
        const { value } = await feed.usd('USDT');
        if (value < min) min = value;
        if (value > max) max = value;
        sum += value;
        advance(INTERVAL);
      }
      // A step moves at most `volatility` bps and 10% of the gap is pulled back each step, so
      // the price cannot drift: it stays within 10 volatilities of the start, and averages ~1.00.
      const band = (RATE_SCALE * BigInt(volatility) * 10n) / 10_000n;
      expect(min, `volatility ${volatility}`).toBeGreaterThanOrEqual(RATE_SCALE - band);
      expect(max, `volatility ${volatility}`).toBeLessThanOrEqual(RATE_SCALE + band);
      const mean = sum / BigInt(steps);
      expect(mean > RATE_SCALE - band / 10n && mean < RATE_SCALE + band / 10n, `mean ${mean}`).toBe(true);
      expect(max - min, 'it does move').toBeGreaterThan(0n);
    }
  });

  it('stays put with zero volatility', async () => {
    const { feed, advance } = setup({ market: { volatility_bps: 0, usd_start: { USDT: '1.0005' } } });
    advance(DAY);
    expect((await feed.usd('USDT')).value).toBe(parseRate('1.0005'));
  });

  it('dates each value at the start of its step, so a live leg is never older than one interval', async () => {
    const { feed, clock, advance } = setup();
    for (const ms of [0, 3_000, 6_999, 10_000, 25_001, 59_999, 1_000_000]) {
      clock.set(VIRTUAL_EPOCH + ms);
      const leg = await feed.usd('USDT');
      expect(leg.asOf).toBe(VIRTUAL_EPOCH + Math.floor(ms / INTERVAL) * INTERVAL);
      expect(legAgeSeconds(leg, clock.now())).toBeLessThan(INTERVAL / 1000);
    }
    advance(1);
    expect((await feed.usd('USDT')).asOf).toBe(VIRTUAL_EPOCH + 1_000_000);
  });

  it('walks one day of virtual time (8640 steps) in one read', async () => {
    const { feed, advance } = setup();
    advance(DAY);
    const leg = await feed.usd('USDT');
    expect(leg.asOf).toBe(VIRTUAL_EPOCH + DAY);
    const again = setup();
    expect((await series(again.feed, again.advance, 'USDT', 8641)).at(-1)).toBe(leg.value);
  });
});

describe('PriceFeed: freeze and resume', () => {
  it('freeze keeps value and asOf, so the leg ages past usd_max_age; resume continues from there', async () => {
    const { feed, clock, advance } = setup({ seed: 3 });
    advance(35_000);
    const before = await feed.usd('USDT');
    await feed.freeze();
    expect(feed.isFrozen()).toBe(true);
    advance(120_000);
    const frozen = await feed.usd('USDT');
    expect(frozen).toEqual(before);
    expect(legAgeSeconds(frozen, clock.now())).toBe(125); // 35 s into step 3 (asOf +30 s), then 120 s
    await feed.freeze(); // idempotent: the frozen legs stay as they were
    expect(await feed.usd('USDT')).toEqual(before);

    await feed.resume();
    expect(feed.isFrozen()).toBe(false);
    const resumed = await feed.usd('USDT');
    expect(resumed).toEqual({ name: 'USDT', value: before.value, asOf: VIRTUAL_EPOCH + 150_000, source: 'market' });
    advance(INTERVAL);
    expect((await feed.usd('USDT')).asOf).toBe(VIRTUAL_EPOCH + 160_000);
  });

  it('freeze and resume are deterministic', async () => {
    const run = async () => {
      const { feed, advance } = setup({ seed: 11 });
      const seen: bigint[] = [...(await series(feed, advance, 'USDC', 50))];
      await feed.freeze();
      advance(500_000);
      await feed.resume();
      seen.push(...(await series(feed, advance, 'USDC', 50)));
      return seen;
    };
    expect(await run()).toEqual(await run());
  });

  it('a restart while frozen keeps the frozen legs and the flag', async () => {
    const { store, clock, feed, advance } = setup({ seed: 5 });
    advance(77_000);
    await feed.usd('USDT');
    await feed.freeze();
    const frozen = { USDT: await feed.usd('USDT'), USDC: await feed.usd('USDC') };
    advance(3_600_000);
    const restarted = new PriceFeed({ store, clock, seed: 5, market: market() });
    await restarted.init();
    expect(restarted.isFrozen()).toBe(true);
    expect(await restarted.usd('USDT')).toEqual(frozen.USDT);
    expect(await restarted.usd('USDC')).toEqual(frozen.USDC);
    await restarted.resume();
    expect(await restarted.usd('USDT')).toEqual({ ...frozen.USDT, asOf: clock.now() - (clock.now() % INTERVAL) });
    const again = new PriceFeed({ store, clock, seed: 5, market: market() });
    await again.init();
    expect(again.isFrozen()).toBe(false);
  });
});

describe('PriceFeed: pinned USD legs', () => {
  it('pinUsd returns exactly what was pinned, until resume', async () => {
    const { feed, advance } = setup();
    const asOf = VIRTUAL_EPOCH - 5_000;
    const pinned = await feed.pinUsd('USDC', parseRate('1.00031234'), asOf);
    expect(pinned).toEqual({ name: 'USDC', value: 100_031_234n, asOf, source: 'pinned' });
    advance(DAY);
    expect(await feed.usd('USDC')).toEqual(pinned);
    expect((await feed.usd('USDT')).source).toBe('market');
    await feed.freeze();
    expect(await feed.usd('USDC')).toEqual(pinned); // a pin outranks a freeze
    await feed.resume();
    expect(await feed.usd('USDC')).toEqual({ name: 'USDC', value: 100_031_234n, asOf: VIRTUAL_EPOCH + DAY, source: 'market' });
  });

  it('a pin survives a restart on the same store, and resume clears it for the next restart too', async () => {
    const { store, clock, feed, advance } = setup();
    await feed.pinUsd('USDT', parseRate('0.9987'), VIRTUAL_EPOCH);
    advance(60_000);
    const restarted = new PriceFeed({ store, clock, seed: 1, market: market() });
    await restarted.init();
    expect(await restarted.usd('USDT')).toEqual({ name: 'USDT', value: parseRate('0.9987'), asOf: VIRTUAL_EPOCH, source: 'pinned' });
    expect((await restarted.usd('USDC')).source).toBe('market');
    await restarted.resume();
    const third = new PriceFeed({ store, clock, seed: 1, market: market() });
    expect((await third.usd('USDT')).source).toBe('market'); // usd() loads the store itself when init() was not called
  });

  it('refuses a non-positive pin or an unknown asset', async () => {
    const { feed } = setup();
    await expect(feed.pinUsd('USDT', 0n, VIRTUAL_EPOCH)).rejects.toThrow(RangeError);
    await expect(feed.usd('DAI' as Asset)).rejects.toThrow(/unknown asset/);
  });
});

describe('PriceFeed: the FX leg', () => {
  it('defaults to the configured rate, re-stamped at the most recent UTC midnight', async () => {
    const { feed, clock } = setup({ start: VIRTUAL_EPOCH + 5 * 3600_000 });
    expect(await feed.fx()).toEqual({ name: 'FX', value: parseRate('15.5'), asOf: VIRTUAL_EPOCH, source: 'config' });
    clock.set(VIRTUAL_EPOCH + 3 * DAY + 1);
    expect((await feed.fx()).asOf).toBe(VIRTUAL_EPOCH + 3 * DAY);
    clock.set(VIRTUAL_EPOCH + 4 * DAY - 1);
    expect((await feed.fx()).asOf).toBe(VIRTUAL_EPOCH + 3 * DAY);
  });

  it('without auto-restamp is as of construction, and goes stale', async () => {
    const { feed, advance } = setup({ start: VIRTUAL_EPOCH + 5 * 3600_000, market: { fx_auto_restamp: false, fx_rate: '12.75' } });
    advance(2 * DAY);
    expect(await feed.fx()).toEqual({ name: 'FX', value: parseRate('12.75'), asOf: VIRTUAL_EPOCH + 5 * 3600_000, source: 'config' });
  });

  it('setFx persists, is exact, and turns off the re-stamp', async () => {
    const { store, clock, feed, advance } = setup();
    const asOf = VIRTUAL_EPOCH + 1_234;
    advance(2_000);
    expect(await feed.setFx(parseRate('15.61'), asOf)).toEqual({ name: 'FX', value: parseRate('15.61'), asOf, source: 'admin' });
    advance(3 * DAY);
    expect(await feed.fx()).toEqual({ name: 'FX', value: parseRate('15.61'), asOf, source: 'admin' });
    expect(legAgeSeconds(await feed.fx(), clock.now())).toBe((3 * DAY + 2_000 - 1_234) / 1000);
    const restarted = new PriceFeed({ store, clock, seed: 1, market: market() });
    await restarted.init();
    expect(await restarted.fx()).toEqual({ name: 'FX', value: parseRate('15.61'), asOf, source: 'admin' });
    await restarted.resume(); // resume concerns the USD legs only
    expect((await restarted.fx()).source).toBe('admin');
  });
});

describe('PriceFeed: benchmark', () => {
  it('is usd × fx rounded down', async () => {
    const { feed } = setup();
    await feed.pinUsd('USDT', parseRate('1.00033333'), VIRTUAL_EPOCH);
    await feed.setFx(parseRate('15.49999999'), VIRTUAL_EPOCH);
    const b = await feed.benchmark('USDT');
    // 1.00033333 × 15.49999999 = 15.5051666049999667 → 15.50516660 (down, not up to ...61)
    expect(b.rate).toBe(1_550_516_660n);
    expect(mulRates(b.usd.value, b.fx.value, 'up')).toBe(1_550_516_661n);
    expect(b.rate).toBe(mulRates(b.usd.value, b.fx.value, 'down'));
    expect(b.usd.source).toBe('pinned');
    expect(b.fx.source).toBe('admin');
    const live = await feed.benchmark('USDC');
    expect(live.rate).toBe((live.usd.value * live.fx.value) / RATE_SCALE);
  });
});

describe('PriceFeed: one market for every feed on the database (a fleet)', () => {
  it("gives two feeds started at different times the same price at the same instant, from the first start's origin and seed", async () => {
    const first = setup({ seed: 21 });
    await first.feed.init();
    first.advance(3_600_000);
    // A second instance joins an hour later, configured with another seed: the database's seed wins.
    const second = new PriceFeed({ store: first.store, clock: first.clock, seed: 99, market: market(), shared: true });
    for (let i = 0; i < 50; i++) {
      for (const asset of ['USDT', 'USDC'] as const) expect(await second.usd(asset)).toEqual(await first.feed.usd(asset));
      first.advance(INTERVAL);
    }
    // The same as a lone feed with that seed walking from the first start.
    const lone = setup({ seed: 21 });
    lone.advance(3_600_000 + 50 * INTERVAL);
    expect(await lone.feed.usd('USDT')).toEqual(await second.usd('USDT'));
  });

  it("sees another feed's pin, FX rate, freeze and resume at its next price when the store is shared", async () => {
    const { store, clock } = setup({ seed: 4 });
    const a = { feed: new PriceFeed({ store, clock, seed: 4, market: market(), shared: true }), clock, advance: (ms: number) => clock.set(clock.now() + ms) };
    const b = new PriceFeed({ store, clock, seed: 4, market: market(), shared: true });
    await a.feed.init();
    await b.init();
    a.advance(95_000);
    await a.feed.pinUsd('USDT', parseRate('1.0101'), a.clock.now());
    expect(await b.usd('USDT')).toEqual({ name: 'USDT', value: parseRate('1.0101'), asOf: a.clock.now(), source: 'pinned' });
    await a.feed.setFx(parseRate('16.25'), a.clock.now());
    expect((await b.fx()).value).toBe(parseRate('16.25'));
    await a.feed.freeze();
    a.advance(600_000);
    const frozen = await a.feed.usd('USDC');
    expect(await b.usd('USDC')).toEqual(frozen);
    expect(b.isFrozen()).toBe(true);
    await b.resume();
    a.advance(7 * INTERVAL);
    // Both walk on from the anchors resume() recorded, to the same values.
    expect(await a.feed.usd('USDC')).toEqual(await b.usd('USDC'));
    expect(await a.feed.usd('USDT')).toEqual(await b.usd('USDT'));
    expect(a.feed.isFrozen()).toBe(false);
  });

  it('prices from memory on a store it owns: a write behind its back (another process) is not re-read', async () => {
    const a = setup({ seed: 4 });
    const before = await a.feed.usd('USDT');
    await a.store.run("INSERT INTO market_legs (leg, value, as_of, pinned) VALUES ('USDT', '5', 0, 1)");
    await a.store.run('UPDATE market_state SET version = version + 1');
    expect(await a.feed.usd('USDT')).toEqual(before);
  });
});

describe('legAgeSeconds', () => {
  it('is fractional seconds since asOf, never negative', () => {
    const leg = { name: 'FX' as const, value: 1n, asOf: 10_000, source: 'admin' as const };
    expect(legAgeSeconds(leg, 100_500)).toBe(90.5);
    expect(legAgeSeconds(leg, 5_000)).toBe(0);
  });
});
