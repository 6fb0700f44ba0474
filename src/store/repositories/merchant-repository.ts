import type { Db } from '../db.ts';

/** A merchant as the service ladder reads it. */
export interface MerchantRow {
  id: string;
  name: string;
  trading_stage: string;
}

/** Merchants and their place on the service ladder: the SQL of the merchant aggregate. */
export class MerchantRepository {
  /** Creates the merchant, or renames it if it exists. */
  async upsert(db: Db, merchant: { id: string; name: string; now: number }): Promise<void> {
    await db.run('INSERT INTO merchants (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name', [merchant.id, merchant.name, merchant.now]);
  }

  find(db: Db, id: string): Promise<MerchantRow | undefined> {
    return db.get<MerchantRow>('SELECT id, name, trading_stage FROM merchants WHERE id = ?', [id]);
  }

  tradingStage(db: Db, id: string): Promise<{ trading_stage: string } | undefined> {
    return db.get<{ trading_stage: string }>('SELECT trading_stage FROM merchants WHERE id = ?', [id]);
  }

  /** Moves the stage only if it is still `from`; the number of rows changed (0 or 1). */
  async moveStage(db: Db, id: string, from: string, to: string): Promise<number> {
    const { changes } = await db.run('UPDATE merchants SET trading_stage = ? WHERE id = ? AND trading_stage = ?', [to, id, from]);
    return changes;
  }

  /** Sets the stage whatever it was (the sandbox helper). */
  async setStage(db: Db, id: string, stage: string): Promise<void> {
    await db.run('UPDATE merchants SET trading_stage = ? WHERE id = ?', [stage, id]);
  }
}
