// The benchmark price feed: benchmark(ASSET/GHS) = usd(ASSET) × fx(USD/GHS), both legs exact
// 8-decimal fixed-point bigints (rate-math.ts). Staleness is not decided here: the quote service
// compares each leg's asOf with its limits (legAgeSeconds helps).
//
// USD legs: a simulated market on the injected clock. Time is cut into steps of
// `interval_seconds`; step k covers [k·interval, (k+1)·interval) and a leg's asOf is the start
// of its step, so a live leg is never more than one interval old. From one step to the next:
//
//   r        = (u mod (2·V + 1)) − V                  u: next uint32 of the asset's SeededRandom,
//                                                      V: volatility_bps, so r ∈ [−V, +V] bps
//   move     = trunc(value × r / 10 000)              the random step
//   pull     = trunc((start − value) / 10)            mean reversion: 10% of the gap to the start
//   value'   = max(1, value + move + pull)            (1 = 10^-8, the smallest positive rate)
//
// all in bigint (trunc = bigint division, toward zero); no float touches a value. The random
// source of an asset is SeededRandom(seedFromString(`${seed}:${asset}`)) and one number is drawn
// per step, so the walk is a pure function of (seed, asset, start value, number of steps walked):
// the same seed and virtual clock give the same prices on every run. The walk starts at the
// configured usd_start in the step holding the clock's time at construction, and is computed
// lazily: each asset keeps its last (step, value) in memory and only ever walks forward.
//
// freeze(): the USD legs stop at the value and asOf of the step in which freeze() was called (so
// they go stale once usd_max_age has passed); resume() continues the walk from that value in the
// current step (the missed steps are skipped, not replayed). pinUsd() fixes a leg at exactly
// (value, asOf) until resume(), after which the walk continues from the pinned value.
//
// FX leg: admin-managed. Until setFx() it is the configured fx_rate (source 'config') as of the
// most recent UTC midnight at or before now when fx_auto_restamp is on (as if an admin
// re-confirmed it daily), otherwise as of construction. setFx() replaces it (source 'admin') at
// exactly the given asOf, and auto-restamp no longer applies.
//
// Persistence (table market_legs, values as integer text in units of 10^-8):
//   USDT/USDC pinned = 1  a pinned leg (survives restarts until resume());
//   USDT/USDC pinned = 0  the frozen value of a leg, so a restart while frozen keeps it;
//   FX        pinned = 1  the admin-set rate.
// market_state.frozen_at holds the clock time of freeze(), NULL when the market is live. The
// walk itself is not persisted: after a restart with a live market it starts afresh at usd_start.

import type { TradingConfig } from '../config/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { SeededRandom, seedFromString } from '../kernel/ids.ts';
import type { Store } from '../store/db.ts';
import { MarketRepository } from '../store/repositories/market-repository.ts';
import { mulRates, parseRate } from './rate-math.ts';

export const ASSETS = ['USDT', 'USDC'] as const;
export type Asset = (typeof ASSETS)[number];
export type LegName = Asset | 'FX';

export interface Leg {
  name: LegName;
  /** 8-decimal fixed point: USD per asset, or GHS per USD for FX. */
  value: bigint;
  /** Epoch milliseconds. */
  asOf: number;
  source: 'market' | 'pinned' | 'admin' | 'config';
}

export interface Benchmark {
  usd: Leg;
  fx: Leg;
  /** GHS per asset = usd × fx, rounded down. */
  rate: bigint;
}

export interface PriceFeedDeps {
  store: Store;
  clock: Clock;
  seed: number;
  market: TradingConfig['market'];
}

/** How old a leg is at `now`, in seconds (fractional; never negative). */
export function legAgeSeconds(leg: Leg, now: number): number {
  return Math.max(0, (now - leg.asOf) / 1000);
}

export function isAsset(value: unknown): value is Asset {
  return typeof value === 'string' && (ASSETS as readonly string[]).includes(value);
}

const DAY_MS = 24 * 3600 * 1000;
const BPS = 10_000n;
const PULL_DIVISOR = 10n; // mean reversion: 10% of the gap per step

interface Walk {
  step: number;
  value: bigint;
  readonly start: bigint;
  readonly random: SeededRandom;
}

export class PriceFeed {
  private readonly intervalMs: number;
  private readonly volatility: number;
  private readonly createdAt: number;
  private readonly configFx: bigint;
  private readonly walks: Record<Asset, Walk>;
  private readonly pins = new Map<Asset, Leg>();
  /** The legs as they stood when the market froze; empty when live. */
  private readonly frozenLegs = new Map<Asset, Leg>();
  private frozenAt: number | null = null;
  private adminFx: Leg | null = null;
  private loading: Promise<void> | undefined;
  private readonly repo = new MarketRepository();

  constructor(private readonly deps: PriceFeedDeps) {
    const { market, clock, seed } = deps;
    this.intervalMs = market.interval_seconds * 1000;
    this.volatility = market.volatility_bps;
    this.createdAt = clock.now();
    this.configFx = parseRate(market.fx_rate);
    const step = this.stepOf(this.createdAt);
    const walk = (asset: Asset): Walk => {
      const start = parseRate(market.usd_start[asset]);
      return { step, value: start, start, random: new SeededRandom(seedFromString(`${seed}:${asset}`)) };
    };
    this.walks = { USDT: walk('USDT'), USDC: walk('USDC') };
  }

  /** Loads pinned legs, the admin FX rate and the frozen flag from the store. Safe to call more than once. */
  init(): Promise<void> {
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const [rows, state] = await Promise.all([this.repo.legs(this.deps.store), this.repo.state(this.deps.store)]);
    const frozenAt = state?.frozen_at == null ? null : Number(state.frozen_at);
    const snapshots = new Map<Asset, Leg>();
    for (const row of rows) {
      const value = BigInt(row.value);
      const asOf = Number(row.as_of);
      if (row.leg === 'FX') {
        this.adminFx = { name: 'FX', value, asOf, source: 'admin' };
      } else if (isAsset(row.leg)) {
        if (Number(row.pinned) === 1) this.pins.set(row.leg, { name: row.leg, value, asOf, source: 'pinned' });
        else snapshots.set(row.leg, { name: row.leg, value, asOf, source: 'market' });
      }
    }
    if (frozenAt !== null) {
      this.frozenAt = frozenAt;
      for (const asset of ASSETS) {
        // A leg pinned when the market froze has no snapshot row; its walk value then is the start.
        const walk = this.walks[asset];
        const step = this.stepOf(frozenAt);
        this.frozenLegs.set(asset, snapshots.get(asset) ?? { name: asset, value: walk.start, asOf: step * this.intervalMs, source: 'market' });
      }
    }
  }

  isFrozen(): boolean {
    return this.frozenAt !== null;
  }

  async usd(asset: Asset): Promise<Leg> {
    assertAsset(asset);
    await this.init();
    return this.usdNow(asset, this.deps.clock.now());
  }

  async fx(): Promise<Leg> {
    await this.init();
    return this.fxNow(this.deps.clock.now());
  }

  async benchmark(asset: Asset): Promise<Benchmark> {
    assertAsset(asset);
    await this.init();
    const now = this.deps.clock.now();
    const usd = this.usdNow(asset, now);
    const fx = this.fxNow(now);
    return { usd, fx, rate: mulRates(usd.value, fx.value, 'down') };
  }

  async pinUsd(asset: Asset, value: bigint, asOf: number): Promise<Leg> {
    assertAsset(asset);
    assertLeg(value, asOf);
    await this.init();
    await this.repo.pinUsd(this.deps.store, asset, value.toString(), asOf);
    const leg: Leg = { name: asset, value, asOf, source: 'pinned' };
    this.pins.set(asset, leg);
    return leg;
  }

  async setFx(value: bigint, asOf: number): Promise<Leg> {
    assertLeg(value, asOf);
    await this.init();
    await this.repo.pinFx(this.deps.store, value.toString(), asOf);
    this.adminFx = { name: 'FX', value, asOf, source: 'admin' };
    return this.adminFx;
  }

  async freeze(): Promise<void> {
    await this.init();
    if (this.frozenAt !== null) return;
    const now = this.deps.clock.now();
    const legs = new Map<Asset, Leg>();
    for (const asset of ASSETS) legs.set(asset, this.walkTo(asset, now));
    // Memory first, so a concurrent read cannot walk past the snapshot being written.
    this.frozenAt = now;
    for (const [asset, leg] of legs) this.frozenLegs.set(asset, leg);
    try {
      await this.deps.store.transaction(async (tx) => {
        await this.repo.setFrozenAt(tx, now);
        for (const leg of legs.values()) {
          // A pinned leg keeps its pin row; only unpinned legs record their frozen value.
          await this.repo.recordFrozenLeg(tx, leg.name, leg.value.toString(), leg.asOf);
        }
      });
    } catch (err) {
      this.frozenAt = null;
      this.frozenLegs.clear();
      throw err;
    }
  }

  async resume(): Promise<void> {
    await this.init();
    const now = this.deps.clock.now();
    const step = this.stepOf(now);
    await this.deps.store.transaction(async (tx) => {
      await this.repo.clearFrozen(tx);
      await this.repo.dropUsdLegs(tx);
    });
    for (const asset of ASSETS) {
      const walk = this.walks[asset];
      const from = this.pins.get(asset) ?? this.frozenLegs.get(asset) ?? this.walkTo(asset, now);
      walk.value = from.value;
      walk.step = Math.max(step, walk.step);
    }
    this.pins.clear();
    this.frozenLegs.clear();
    this.frozenAt = null;
  }

  private stepOf(epochMs: number): number {
    return Math.floor(epochMs / this.intervalMs);
  }

  private usdNow(asset: Asset, now: number): Leg {
    const pinned = this.pins.get(asset);
    if (pinned) return pinned;
    const frozen = this.frozenLegs.get(asset);
    if (frozen) return frozen;
    return this.walkTo(asset, now);
  }

  private fxNow(now: number): Leg {
    if (this.adminFx) return this.adminFx;
    const asOf = this.deps.market.fx_auto_restamp ? Math.floor(now / DAY_MS) * DAY_MS : this.createdAt;
    return { name: 'FX', value: this.configFx, asOf, source: 'config' };
  }

  /** Walks the asset forward to the step holding `now` (never backwards) and returns the leg. */
  private walkTo(asset: Asset, now: number): Leg {
    const walk = this.walks[asset];
    const target = this.stepOf(now);
    if (target > walk.step) {
      const span = BigInt(2 * this.volatility + 1);
      const volatility = BigInt(this.volatility);
      const start = walk.start;
      let value = walk.value;
      for (let k = walk.step; k < target; k++) {
        const r = (BigInt(walk.random.nextUint32()) % span) - volatility;
        value = value + (value * r) / BPS + (start - value) / PULL_DIVISOR;
        if (value < 1n) value = 1n;
      }
      walk.value = value;
      walk.step = target;
    }
    return { name: asset, value: walk.value, asOf: walk.step * this.intervalMs, source: 'market' };
  }
}

function assertAsset(asset: string): asserts asset is Asset {
  if (!isAsset(asset)) throw new RangeError(`unknown asset ${JSON.stringify(asset)}; expected one of ${ASSETS.join(', ')}`);
}

function assertLeg(value: bigint, asOf: number): void {
  if (value <= 0n) throw new RangeError('a price leg must be greater than zero');
  if (!Number.isSafeInteger(asOf)) throw new RangeError('asOf must be epoch milliseconds');
}
