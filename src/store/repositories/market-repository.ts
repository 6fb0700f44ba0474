import type { Db } from '../db.ts';

/** A market_legs row: a leg's value (decimal string of a fixed-point integer) and when it held. */
export interface MarketLegRow {
  leg: string;
  value: string;
  as_of: number | bigint;
  pinned: number | bigint;
}

/** The simulated market's pinned and frozen legs and its frozen flag: the SQL of the market aggregate. */
export class MarketRepository {
  legs(db: Db): Promise<MarketLegRow[]> {
    return db.all<MarketLegRow>('SELECT leg, value, as_of, pinned FROM market_legs');
  }

  /** When the market froze, or null; undefined before it ever froze or resumed. */
  state(db: Db): Promise<{ frozen_at: number | bigint | null } | undefined> {
    return db.get<{ frozen_at: number | bigint | null }>('SELECT frozen_at FROM market_state WHERE id = 1');
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
}
