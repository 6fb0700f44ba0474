import type { Db, Store } from '../db.ts';

/** The runtime_state row whose value moves with every change to the switched-on faults. */
const VERSION = 'api_faults';

/** A fault switched on through the sandbox control: its number (flt_<seq>) and its rule as JSON. */
export interface StoredApiFault {
  seq: number;
  rule: string;
}

/**
 * Faults on the merchant API that the instances sharing one database keep together: the faults
 * switched on through the sandbox control, and every rule's counts, rate-limit windows and named
 * states. Each count moves in one atomic statement (an upsert that answers the new value), so two
 * instances deciding at once never both take the last of a `times` or a window.
 */
export class ApiFaultRepository {
  /** Switches a fault on: its number, and the faults' new version, in one transaction. */
  async add(store: Store, rule: string): Promise<{ seq: number; version: number }> {
    return store.transaction(async (tx) => {
      const { seq } = (await tx.get<{ seq: number }>('INSERT INTO api_faults (rule) VALUES (?) RETURNING seq', [rule]))!;
      return { seq: Number(seq), version: await this.bump(tx) };
    });
  }

  /** Switches one fault off (by number), or all of them; forgets their counts and windows. */
  async remove(store: Store, seq?: number): Promise<{ removed: number; version: number | null }> {
    return store.transaction(async (tx) => {
      if (seq === undefined) {
        const { changes } = await tx.run('DELETE FROM api_faults');
        if (!changes) return { removed: 0, version: null };
        await tx.run("DELETE FROM api_fault_counts WHERE substr(rule_key, 1, 4) = 'flt_'");
        await tx.run("DELETE FROM api_fault_windows WHERE substr(rule_key, 1, 4) = 'flt_'");
        return { removed: changes, version: await this.bump(tx) };
      }
      const { changes } = await tx.run('DELETE FROM api_faults WHERE seq = ?', [seq]);
      if (!changes) return { removed: 0, version: null };
      await tx.run('DELETE FROM api_fault_counts WHERE rule_key = ?', [`flt_${seq}`]);
      await tx.run('DELETE FROM api_fault_windows WHERE rule_key = ?', [`flt_${seq}`]);
      return { removed: changes, version: await this.bump(tx) };
    });
  }

  private async bump(tx: Db): Promise<number> {
    const row = await tx.get<{ value: number }>('INSERT INTO runtime_state (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = runtime_state.value + 1 RETURNING value', [VERSION]);
    return Number(row!.value);
  }

  /** The faults switched on, in the order they were (a handful: they are switched on by hand). */
  async list(db: Db): Promise<StoredApiFault[]> {
    const rows = await db.all<StoredApiFault>('SELECT seq, rule FROM api_faults ORDER BY seq');
    return rows.map((r) => ({ seq: Number(r.seq), rule: r.rule }));
  }

  /**
   * Counts one more request a rule matched (and one more firing with `fires`): the counts after it.
   */
  async match(db: Db, ruleKey: string, fires: boolean): Promise<{ matched: number; fired: number }> {
    const row = await db.get<{ matched: number; fired: number }>(
      `INSERT INTO api_fault_counts (rule_key, matched, fired) VALUES (?, 1, ?)
       ON CONFLICT (rule_key) DO UPDATE SET matched = api_fault_counts.matched + 1, fired = api_fault_counts.fired + excluded.fired
       RETURNING matched, fired`,
      [ruleKey, fires ? 1 : 0],
    );
    return { matched: Number(row!.matched), fired: Number(row!.fired) };
  }

  /** Counts one more firing unless the rule fired `cap` times already: the count after it, or undefined. */
  async fire(db: Db, ruleKey: string, cap: number = Number.MAX_SAFE_INTEGER): Promise<number | undefined> {
    const row = await db.get<{ fired: number }>(
      `INSERT INTO api_fault_counts (rule_key, matched, fired) VALUES (?, 1, 1)
       ON CONFLICT (rule_key) DO UPDATE SET fired = api_fault_counts.fired + 1 WHERE api_fault_counts.fired < ?
       RETURNING fired`,
      [ruleKey, cap],
    );
    return row === undefined ? undefined : Number(row.fired);
  }

  /**
   * Counts a request in its rule's window for its API key: the requests counted in the window,
   * this one included, and where the window starts. A window later than the stored one starts
   * afresh; an instance whose clock lags counts in the stored, later one.
   */
  async takeWindow(db: Db, ruleKey: string, keyId: string, windowStart: number): Promise<{ used: number; windowStart: number }> {
    const row = await db.get<{ used: number; window_start: number }>(
      `INSERT INTO api_fault_windows (rule_key, key_id, window_start, used) VALUES (?, ?, ?, 1)
       ON CONFLICT (rule_key, key_id) DO UPDATE SET
         used = CASE WHEN excluded.window_start > api_fault_windows.window_start THEN 1 ELSE api_fault_windows.used + 1 END,
         window_start = CASE WHEN excluded.window_start > api_fault_windows.window_start THEN excluded.window_start ELSE api_fault_windows.window_start END
       RETURNING used, window_start`,
      [ruleKey, keyId, windowStart],
    );
    return { used: Number(row!.used), windowStart: Number(row!.window_start) };
  }

  /** The state a named machine of api rules is in, undefined before any rule set one. */
  async state(db: Db, scenario: string): Promise<string | undefined> {
    return (await db.get<{ state: string }>('SELECT state FROM api_fault_states WHERE scenario = ?', [scenario]))?.state;
  }

  async setState(db: Db, scenario: string, state: string): Promise<void> {
    await db.run('INSERT INTO api_fault_states (scenario, state) VALUES (?, ?) ON CONFLICT (scenario) DO UPDATE SET state = excluded.state', [scenario, state]);
  }

  /** The counts of these rules (those in force), by key: a rule that never matched has no row. */
  async counts(db: Db, ruleKeys: readonly string[]): Promise<{ ruleKey: string; matched: number; fired: number }[]> {
    if (ruleKeys.length === 0) return [];
    const rows = await db.all<{ rule_key: string; matched: number; fired: number }>(`SELECT rule_key, matched, fired FROM api_fault_counts WHERE rule_key IN (${ruleKeys.map(() => '?').join(', ')})`, [
      ...ruleKeys,
    ]);
    return rows.map((r) => ({ ruleKey: r.rule_key, matched: Number(r.matched), fired: Number(r.fired) }));
  }

  /** Starts every count, window and state afresh, for the whole fleet. */
  async restart(store: Store): Promise<void> {
    await store.transaction(async (tx) => {
      await tx.run('DELETE FROM api_fault_counts');
      await tx.run('DELETE FROM api_fault_windows');
      await tx.run('DELETE FROM api_fault_states');
    });
  }
}
