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
// number of the step from k to k+1 is draw number k − origin of SeededRandom(seedFromString(
// `${seed}:${asset}`)) (SeededRandom.uint32At), so the walk is a pure function of (seed, asset,
// origin, anchor, step): the same seed and virtual clock give the same prices on every run, and
// every instance of a fleet on one database gives the same price at the same instant. The origin
// is the step holding the clock's time when the first feed on the database was constructed; the
// walk starts there at the configured usd_start. Each instance computes it lazily, keeping each
// asset's last (step, value) in memory and walking forward from it.
//
// freeze(): the USD legs stop at the value and asOf of the step in which freeze() was called (so
// they go stale once usd_max_age has passed); resume() continues the walk from that value in the
// current step (the anchor; the missed steps are skipped, not replayed). pinUsd() fixes a leg at
// exactly (value, asOf) until resume(), after which the walk continues from the pinned value.
//
// FX leg: admin-managed. Until setFx() it is the configured fx_rate (source 'config') as of the
// most recent UTC midnight at or before now when fx_auto_restamp is on (as if an admin
// re-confirmed it daily), otherwise as of the origin. setFx() replaces it (source 'admin') at
// exactly the given asOf, and auto-restamp no longer applies.
//
// The market is the database's, so the fleet's (values as integer text in units of 10^-8):
//   market_legs  USDT/USDC pinned = 1  a pinned leg (survives restarts until resume());
//                USDT/USDC pinned = 0  the frozen value of a leg, so a restart while frozen keeps it;
//                FX        pinned = 1  the admin-set rate;
//   market_walks                        each asset's anchor: the step resume() restarted it in, and its value;
//   market_state                        frozen_at (clock time of freeze(), NULL when live), the origin
//                                       and seed, and a version every change moves.
// Every change is one transaction that moves the version. On a shared database (PostgreSQL) each
// price first reads the version (one row by key) and re-reads the market only when it moved; on
// SQLite this process is the only writer and its copy is the market.

import type { TradingConfig } from '../config/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { SeededRandom, seedFromString } from '../kernel/ids.ts';
import type { Db, Store } from '../store/db.ts';
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
  /** Other processes may change the market: check its version before each price. Default: on PostgreSQL. */
  shared?: boolean;
  /** Every request reads the market's version at its start and hands it over (adoptVersion): no read per price. */
  versionPerRequest?: boolean;
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

/** The market as the database holds it: what every instance prices from. */
interface MarketSnapshot {
  version: number;
  originAt: number;
  seed: number;
  frozenAt: number | null;
  pins: Map<Asset, Leg>;
  /** The legs as they stood when the market froze; empty when live. */
  frozenLegs: Map<Asset, Leg>;
  adminFx: Leg | null;
  /** Where resume() restarted a walk; an asset without one walks from the origin at usd_start. */
  anchors: Map<Asset, { step: number; value: bigint }>;
}

/** An asset's walk as this instance last computed it, from one anchor. */
interface WalkMemo {
  seed: number;
  anchorStep: number;
  anchorValue: bigint;
  step: number;
  value: bigint;
}

export class PriceFeed {
  private readonly intervalMs: number;
  private readonly volatility: number;
  private readonly createdAt: number;
  private readonly configFx: bigint;
  private readonly starts: Record<Asset, bigint>;
  private readonly memos = new Map<Asset, WalkMemo>();
  /** Other processes may change the market (PostgreSQL): each price checks the version first. */
  private readonly shared: boolean;
  private market: MarketSnapshot | undefined;
  /** The latest version a request read (adoptVersion). */
  private adopted: number | null = null;
  private loading: Promise<void> | undefined;
  private readonly repo = new MarketRepository();

  constructor(private readonly deps: PriceFeedDeps) {
    const { market, clock } = deps;
    this.intervalMs = market.interval_seconds * 1000;
    this.volatility = market.volatility_bps;
    this.createdAt = clock.now();
    this.configFx = parseRate(market.fx_rate);
    this.starts = { USDT: parseRate(market.usd_start.USDT), USDC: parseRate(market.usd_start.USDC) };
    this.shared = deps.shared ?? deps.store.kind === 'postgres';
  }

  /**
   * Joins the database's market: records the origin (this feed's construction time) and seed
   * unless an earlier start did, and loads pins, the admin FX rate, the freeze and the anchors.
   * Safe to call more than once.
   */
  init(): Promise<void> {
    this.loading ??= (async () => {
      await this.repo.ensureOrigin(this.deps.store, this.createdAt, this.deps.seed >>> 0);
      this.accept(await this.deps.store.transaction((tx) => this.read(tx)));
    })().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private async read(db: Db): Promise<MarketSnapshot> {
    const state = await this.repo.state(db);
    const legs = await this.repo.legs(db);
    const walks = await this.repo.walks(db);
    const snapshot: MarketSnapshot = {
      version: Number(state?.version ?? 0),
      originAt: state?.origin_at == null ? this.createdAt : Number(state.origin_at),
      seed: state?.seed == null ? this.deps.seed >>> 0 : Number(state.seed),
      frozenAt: state?.frozen_at == null ? null : Number(state.frozen_at),
      pins: new Map(),
      frozenLegs: new Map(),
      adminFx: null,
      anchors: new Map(),
    };
    for (const row of legs) {
      const value = BigInt(row.value);
      const asOf = Number(row.as_of);
      if (row.leg === 'FX') snapshot.adminFx = { name: 'FX', value, asOf, source: 'admin' };
      else if (isAsset(row.leg)) {
        if (Number(row.pinned) === 1) snapshot.pins.set(row.leg, { name: row.leg, value, asOf, source: 'pinned' });
        else if (snapshot.frozenAt !== null) snapshot.frozenLegs.set(row.leg, { name: row.leg, value, asOf, source: 'market' });
      }
    }
    for (const row of walks) if (isAsset(row.asset)) snapshot.anchors.set(row.asset, { step: Number(row.step), value: BigInt(row.value) });
    return snapshot;
  }

  /** Keeps a snapshot unless a newer one is already kept (versions only grow). */
  private accept(snapshot: MarketSnapshot): MarketSnapshot {
    if (!this.market || snapshot.version >= this.market.version) this.market = snapshot;
    return this.market;
  }

  /** The market to price from: on a shared database re-read when another instance changed it. */
  private async current(): Promise<MarketSnapshot> {
    await this.init();
    const kept = this.market!;
    if (!this.shared) return kept;
    // Each request reads the version with the fleet's state (adoptVersion); a feed not told so reads it per price.
    const version = this.deps.versionPerRequest ? this.adopted : await this.repo.version(this.deps.store);
    if (version === null || version <= kept.version) return kept;
    return this.accept(await this.deps.store.transaction((tx) => this.read(tx)));
  }

  /**
   * The market's version as a request read it with the rest of the fleet's state (at its start):
   * the prices it asks for re-read the market only if it moved, without a read of their own.
   */
  adoptVersion(version: number | null): void {
    if (version !== null && (this.adopted === null || version > this.adopted)) this.adopted = version;
  }

  /** A change of the market: `write` and a new version in one transaction, and the market it leaves. */
  private async change(write: (tx: Db, market: MarketSnapshot) => Promise<boolean>): Promise<MarketSnapshot> {
    await this.init();
    const after = await this.deps.store.transaction(async (tx) => {
      const before = await this.read(tx);
      if (!(await write(tx, before))) return before;
      await this.repo.bumpVersion(tx);
      return this.read(tx);
    });
    return this.accept(after);
  }

  isFrozen(): boolean {
    return (this.market?.frozenAt ?? null) !== null;
  }

  async usd(asset: Asset): Promise<Leg> {
    assertAsset(asset);
    const market = await this.current();
    return this.usdNow(market, asset, this.deps.clock.now());
  }

  async fx(): Promise<Leg> {
    const market = await this.current();
    return this.fxNow(market, this.deps.clock.now());
  }

  async benchmark(asset: Asset): Promise<Benchmark> {
    assertAsset(asset);
    const market = await this.current();
    const now = this.deps.clock.now();
    const usd = this.usdNow(market, asset, now);
    const fx = this.fxNow(market, now);
    return { usd, fx, rate: mulRates(usd.value, fx.value, 'down') };
  }

  async pinUsd(asset: Asset, value: bigint, asOf: number): Promise<Leg> {
    assertAsset(asset);
    assertLeg(value, asOf);
    await this.change(async (tx) => {
      await this.repo.pinUsd(tx, asset, value.toString(), asOf);
      return true;
    });
    return { name: asset, value, asOf, source: 'pinned' };
  }

  async setFx(value: bigint, asOf: number): Promise<Leg> {
    assertLeg(value, asOf);
    await this.change(async (tx) => {
      await this.repo.pinFx(tx, value.toString(), asOf);
      return true;
    });
    return { name: 'FX', value, asOf, source: 'admin' };
  }

  async freeze(): Promise<void> {
    await this.change(async (tx, market) => {
      if (market.frozenAt !== null) return false;
      const now = this.deps.clock.now();
      await this.repo.setFrozenAt(tx, now);
      for (const asset of ASSETS) {
        // A pinned leg keeps its pin row; only unpinned legs record their frozen value.
        const leg = this.walkTo(market, asset, now);
        await this.repo.recordFrozenLeg(tx, leg.name, leg.value.toString(), leg.asOf);
      }
      return true;
    });
  }

  async resume(): Promise<void> {
    await this.change(async (tx, market) => {
      const now = this.deps.clock.now();
      for (const asset of ASSETS) {
        const from = this.usdNow(market, asset, now);
        const step = Math.max(this.stepOf(now), market.anchors.get(asset)?.step ?? 0);
        await this.repo.anchorWalk(tx, asset, step, from.value.toString());
      }
      await this.repo.clearFrozen(tx);
      await this.repo.dropUsdLegs(tx);
      return true;
    });
  }

  private stepOf(epochMs: number): number {
    return Math.floor(epochMs / this.intervalMs);
  }

  private usdNow(market: MarketSnapshot, asset: Asset, now: number): Leg {
    const pinned = market.pins.get(asset);
    if (pinned) return pinned;
    if (market.frozenAt !== null) return market.frozenLegs.get(asset) ?? this.walkTo(market, asset, market.frozenAt);
    return this.walkTo(market, asset, now);
  }

  private fxNow(market: MarketSnapshot, now: number): Leg {
    if (market.adminFx) return market.adminFx;
    const asOf = this.deps.market.fx_auto_restamp ? Math.floor(now / DAY_MS) * DAY_MS : market.originAt;
    return { name: 'FX', value: this.configFx, asOf, source: 'config' };
  }

  /** The asset's walk in the step holding `now`, from its anchor (or the origin). */
  private walkTo(market: MarketSnapshot, asset: Asset, now: number): Leg {
    const anchor = market.anchors.get(asset) ?? { step: this.stepOf(market.originAt), value: this.starts[asset] };
    const target = Math.max(this.stepOf(now), anchor.step);
    const assetSeed = seedFromString(`${market.seed}:${asset}`);
    const originStep = this.stepOf(market.originAt);
    let memo = this.memos.get(asset);
    if (!memo || memo.seed !== market.seed || memo.anchorStep !== anchor.step || memo.anchorValue !== anchor.value) {
      memo = { seed: market.seed, anchorStep: anchor.step, anchorValue: anchor.value, step: anchor.step, value: anchor.value };
    }
    let value: bigint;
    if (memo.step > target) {
      // An earlier step than the memo's (two reads racing): walked from the anchor, the memo kept.
      value = this.walk(assetSeed, originStep, this.starts[asset], anchor.step, anchor.value, target);
    } else {
      value = this.walk(assetSeed, originStep, this.starts[asset], memo.step, memo.value, target);
      this.memos.set(asset, { ...memo, step: target, value });
    }
    return { name: asset, value, asOf: target * this.intervalMs, source: 'market' };
  }

  /** Walks from `value` in step `from` to step `to`; the move out of step k draws number k − origin. */
  private walk(assetSeed: number, originStep: number, start: bigint, from: number, value: bigint, to: number): bigint {
    const span = BigInt(2 * this.volatility + 1);
    const volatility = BigInt(this.volatility);
    for (let k = from; k < to; k++) {
      const r = (BigInt(SeededRandom.uint32At(assetSeed, k - originStep)) % span) - volatility;
      value = value + (value * r) / BPS + (start - value) / PULL_DIVISOR;
      if (value < 1n) value = 1n;
    }
    return value;
  }
}

function assertAsset(asset: string): asserts asset is Asset {
  if (!isAsset(asset)) throw new RangeError(`unknown asset ${JSON.stringify(asset)}; expected one of ${ASSETS.join(', ')}`);
}

function assertLeg(value: bigint, asOf: number): void {
  if (value <= 0n) throw new RangeError('a price leg must be greater than zero');
  if (!Number.isSafeInteger(asOf)) throw new RangeError('asOf must be epoch milliseconds');
}
