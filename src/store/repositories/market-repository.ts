import type { Db } from '../db.ts';

/** A market_legs row: a leg's value (decimal string of a fixed-point integer) and when it held. */
export interface MarketLegRow {
  leg: string;
  value: string;
  as_of: number | bigint;
  pinned: number | bigint;
}

/** The market_state row: the freeze, the version every change moves, and the walk's origin. */
export interface MarketStateRow {
  frozen_at: number | bigint | null;
  version: number | bigint;
  origin_at: number | bigint | null;
  seed: number | bigint | null;
}

/** A market_walks row: the step in which resume() restarted an asset's walk, and its value there. */
export interface MarketWalkRow {
  asset: string;
  step: number | bigint;
  value: string;
}

/**
 * The simulated market's pinned and frozen legs, its frozen flag, its version and the walks'
 * origin and anchors: the SQL of the market aggregate. Every table here holds one row per leg or
 * asset (or one row), so reading one whole is reading by key.
 */
export class MarketRepository {
  legs(db: Db): Promise<MarketLegRow[]> {
    return db.all<MarketLegRow>('SELECT leg, value, as_of, pinned FROM market_legs');
  }

  walks(db: Db): Promise<MarketWalkRow[]> {
    return db.all<MarketWalkRow>('SELECT asset, step, value FROM market_walks');
  }

  /** The market's state row; undefined before the first start on this database. */
  state(db: Db): Promise<MarketStateRow | undefined> {
    return db.get<MarketStateRow>('SELECT frozen_at, version, origin_at, seed FROM market_state WHERE id = 1');
  }

  /** The version alone: what an instance reads before each price to learn whether the market changed. */
  async version(db: Db): Promise<number | null> {
    const row = await db.get<{ version: number | bigint }>('SELECT version FROM market_state WHERE id = 1');
    return row === undefined ? null : Number(row.version);
  }

  /** Records the walk's origin and seed unless an earlier start (of any instance) already did. */
  async ensureOrigin(db: Db, originAt: number, seed: number): Promise<void> {
    await db.run(
      `INSERT INTO market_state (id, frozen_at, version, origin_at, seed) VALUES (1, NULL, 0, ?, ?)
       ON CONFLICT (id) DO UPDATE SET origin_at = COALESCE(market_state.origin_at, excluded.origin_at), seed = COALESCE(market_state.seed, excluded.seed)
       WHERE market_state.origin_at IS NULL OR market_state.seed IS NULL`,
      [originAt, seed],
    );
  }

  /** Moves the version: every instance re-reads the market before its next price. */
  async bumpVersion(db: Db): Promise<void> {
    await db.run('UPDATE market_state SET version = version + 1 WHERE id = 1');
  }

  async pinUsd(db: Db, asset: string, value: string, asOf: number): Promise<void> {
    await db.run(
      `INSERT INTO market_legs (leg, value, as_of, pinned) VALUES (?, ?, ?, 1)
       ON CONFLICT (leg) DO UPDATE SET value = excluded.value, as_of = excluded.as_of, pinned = 1`,
      [asset, value, asOf],
    );
  }

  async pinFx(db: Db, value: string, asOf: number): Promise<void> {
    await db.run(
      `INSERT INTO market_legs (leg, value, as_of, pinned) VALUES ('FX', ?, ?, 1)
       ON CONFLICT (leg) DO UPDATE SET value = excluded.value, as_of = excluded.as_of, pinned = 1`,
      [value, asOf],
    );
  }

  async setFrozenAt(db: Db, frozenAt: number): Promise<void> {
    await db.run('INSERT INTO market_state (id, frozen_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET frozen_at = excluded.frozen_at', [frozenAt]);
  }

  /** A pinned leg keeps its pin row; only an unpinned leg records its frozen value. */
  async recordFrozenLeg(db: Db, leg: string, value: string, asOf: number): Promise<void> {
    await db.run(
      `INSERT INTO market_legs (leg, value, as_of, pinned) VALUES (?, ?, ?, 0)
             ON CONFLICT (leg) DO UPDATE SET value = excluded.value, as_of = excluded.as_of WHERE market_legs.pinned = 0`,
      [leg, value, asOf],
    );
  }

  async clearFrozen(db: Db): Promise<void> {
    await db.run('INSERT INTO market_state (id, frozen_at) VALUES (1, NULL) ON CONFLICT (id) DO UPDATE SET frozen_at = NULL');
  }

  /** Drops the USD legs (pinned or frozen); the admin FX leg stays. */
  async dropUsdLegs(db: Db): Promise<void> {
    await db.run("DELETE FROM market_legs WHERE leg IN ('USDT', 'USDC')");
  }

  /** Where an asset's walk restarts: in `step`, at `value`. */
  async anchorWalk(db: Db, asset: string, step: number, value: string): Promise<void> {
    await db.run('INSERT INTO market_walks (asset, step, value) VALUES (?, ?, ?) ON CONFLICT (asset) DO UPDATE SET step = excluded.step, value = excluded.value', [asset, step, value]);
  }
}
