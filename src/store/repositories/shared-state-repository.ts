import type { Db } from '../db.ts';

/**
 * Named text values that the instances sharing one database keep together (scenario counters
 * and states, provider outages): the SQL of the shared-state aggregate.
 */
export class SharedStateRepository {
  async get(db: Db, name: string): Promise<string | undefined> {
    return (await db.get<{ value: string }>('SELECT value FROM shared_state WHERE name = ?', [name]))?.value;
  }

  /** Every value whose name starts with `prefix`. */
  async withPrefix(db: Db, prefix: string): Promise<{ name: string; value: string }[]> {
    return db.all<{ name: string; value: string }>('SELECT name, value FROM shared_state WHERE substr(name, 1, ?) = ?', [prefix.length, prefix]);
  }

  /**
   * The value of `name` (stored as `initial` if it had none), its row locked until the
   * transaction ends: a concurrent lock of it, from any instance, waits for that. One statement
   * once the row exists. PostgreSQL only (a shared store): SQLite has no row locks, nor needs them.
   */
  async lock(tx: Db, name: string, initial: string): Promise<string> {
    const locked = () => tx.get<{ value: string }>('SELECT value FROM shared_state WHERE name = ? FOR UPDATE', [name]);
    const found = await locked();
    if (found) return found.value;
    // The first: of two creating it at once, one inserts; the other waits for it, then locks its row.
    await tx.run('INSERT INTO shared_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, initial]);
    return (await locked())!.value;
  }

  async put(db: Db, name: string, value: string): Promise<void> {
    await db.run('INSERT INTO shared_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [name, value]);
  }
}
