import type { Db, Store } from './db.ts';
import type { ApiKeyRow } from './repositories/api-key-repository.ts';

// Facts about the running sandbox that must outlive its process.

/** Counts this start: 1 on a fresh database, one more on every start after. */
export async function nextBoot(store: Store): Promise<number> {
  return store.transaction(async (tx) => {
    await tx.run("INSERT INTO runtime_state (name, value) VALUES ('boot', 1) ON CONFLICT (name) DO UPDATE SET value = runtime_state.value + 1");
    return (await tx.get<{ value: number }>("SELECT value FROM runtime_state WHERE name = 'boot'"))!.value;
  });
}

/**
 * Where a virtual clock stood when the last process stopped: the time it last saved, or the run
 * time of the latest job it finished if that is later (a process killed in an advance).
 */
export async function lastVirtualTime(db: Db): Promise<number | null> {
  const saved = await db.get<{ value: number }>("SELECT value FROM runtime_state WHERE name = 'virtual_clock'");
  // The last entry of the jobs_finished index (finished jobs only).
  const ran = await db.get<{ at: number | null }>("SELECT MAX(run_at) AS at FROM jobs WHERE state <> 'pending'");
  const times = [saved?.value, ran?.at].filter((t): t is number => typeof t === 'number');
  return times.length ? Math.max(...times) : null;
}

/** The shared virtual clock of a fleet: the saved time, or null before the first advance. */
export async function readVirtualTime(db: Db): Promise<number | null> {
  const row = await db.get<{ value: number }>("SELECT value FROM runtime_state WHERE name = 'virtual_clock'");
  return row?.value ?? null;
}

/** Moves the shared virtual clock to `epochMs` unless it already stands later: it never goes back. */
export async function raiseVirtualTime(db: Db, epochMs: number): Promise<void> {
  await db.run(
    `INSERT INTO runtime_state (name, value) VALUES ('virtual_clock', ?) ON CONFLICT (name) DO UPDATE SET value =
       CASE WHEN excluded.value > runtime_state.value THEN excluded.value ELSE runtime_state.value END`,
    [epochMs],
  );
}

export async function saveVirtualTime(db: Db, epochMs: number): Promise<void> {
  await db.run("INSERT INTO runtime_state (name, value) VALUES ('virtual_clock', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", [epochMs]);
}

// Heartbeats: each live boot on a shared database writes `heartbeat:<boot>` (wall-clock epoch ms)
// every few seconds. A boot whose heartbeat is older than the job lease is dead: its claims and
// in-flight requests may be taken over.

const HEARTBEAT = 'heartbeat:';

export async function saveHeartbeat(db: Db, boot: number, wallMs: number): Promise<void> {
  await db.run('INSERT INTO runtime_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [HEARTBEAT + boot, wallMs]);
}

export async function removeHeartbeat(db: Db, boot: number): Promise<void> {
  await db.run('DELETE FROM runtime_state WHERE name = ?', [HEARTBEAT + boot]);
}

/** The boots whose last heartbeat is at or after `sinceWallMs`. */
export async function liveBoots(db: Db, sinceWallMs: number): Promise<number[]> {
  const rows = await db.all<{ name: string }>("SELECT name FROM runtime_state WHERE name LIKE 'heartbeat:%' AND value >= ?", [sinceWallMs]);
  return rows.map((r) => Number(r.name.slice(HEARTBEAT.length)));
}

/**
 * Takes the fleet's sweep turn until `leaseUntil` (wall-clock ms) if nobody holds it at `wallMs`:
 * true for the one instance that got it. Work every instance could do, done by one at a time.
 */
export async function claimSweep(db: Db, wallMs: number, leaseUntil: number): Promise<boolean> {
  const r = await db.run("INSERT INTO runtime_state (name, value) VALUES ('sweep_lease', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE runtime_state.value < ?", [
    leaseUntil,
    wallMs,
  ]);
  return r.changes > 0;
}

// The fleet's advance turn: one clock advance runs at a time on a shared database, so that two
// advances asked for at once add up. `clock_advance` names the boot whose advance runs.

const ADVANCE_TURN = 'clock_advance';

/**
 * Takes the advance turn for `boot` unless a boot of `live` (other than `boot`) holds it: null
 * when taken, else the boot that holds it. A dead boot's turn is taken over.
 */
export async function claimAdvanceTurn(store: Store, boot: number, live: readonly number[]): Promise<number | null> {
  return store.transaction(async (tx) => {
    const holder = (await tx.get<{ value: number }>('SELECT value FROM runtime_state WHERE name = ?', [ADVANCE_TURN]))?.value;
    if (holder !== undefined && holder !== boot && live.includes(holder)) return holder;
    await tx.run('INSERT INTO runtime_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [ADVANCE_TURN, boot]);
    return null;
  });
}

/** Gives the advance turn back, if `boot` holds it. */
export async function releaseAdvanceTurn(db: Db, boot: number): Promise<void> {
  await db.run('DELETE FROM runtime_state WHERE name = ? AND value = ?', [ADVANCE_TURN, boot]);
}

/** What a request on a shared database starts from: the fleet's clock, market version and provider settings. */
export interface FleetState {
  virtualClock: number | null;
  marketVersion: number | null;
  /** The version of the faults switched on through the sandbox control (null: none ever was). */
  apiFaultsVersion: number | null;
  /** shared_state rows named `provider_…` (outages, the rails' tuning). */
  providers: { name: string; value: string }[];
  /** The api_keys rows of the hashes asked for, by hash: those not revoked. */
  apiKeys: Map<string, ApiKeyRow>;
}

/**
 * The fleet's state a request starts from, in one statement (one round trip): the virtual clock,
 * the version of the switched-on API faults and the market's version by key, and the providers' rows (one per provider at most) by name.
 * Given the hashes of requests' API keys, their rows ride in the same statement (each by its
 * unique hash), so authenticating costs no round trip of its own. PostgreSQL only.
 */
export async function readFleetState(db: Db, apiKeyHashes: readonly string[] = []): Promise<FleetState> {
  const rows = await db.all<{ name: string; n: number | null; t: string | null }>(
    `SELECT name, value AS n, NULL AS t FROM runtime_state WHERE name IN ('virtual_clock', 'api_faults')
     UNION ALL SELECT 'market_version', version, NULL FROM market_state WHERE id = 1
     UNION ALL SELECT name, NULL, value FROM shared_state WHERE substr(name, 1, 9) = 'provider_'${
       apiKeyHashes.length === 0
         ? ''
         : `
     UNION ALL SELECT 'api_key', NULL, CAST(row_to_json(k) AS TEXT) FROM api_keys k WHERE key_hash = ANY(CAST(? AS TEXT[])) AND revoked_at IS NULL`
     }`,
    // A hash is hex, so the array's literal needs no quoting.
    apiKeyHashes.length === 0 ? [] : [`{${apiKeyHashes.join(',')}}`],
  );
  const state: FleetState = { virtualClock: null, marketVersion: null, apiFaultsVersion: null, providers: [], apiKeys: new Map() };
  for (const row of rows) {
    if (row.name === 'virtual_clock') state.virtualClock = row.n === null ? null : Number(row.n);
    else if (row.name === 'api_faults') state.apiFaultsVersion = row.n === null ? null : Number(row.n);
    else if (row.name === 'market_version') state.marketVersion = row.n === null ? null : Number(row.n);
    else if (row.name === 'api_key') {
      const key = JSON.parse(row.t!) as ApiKeyRow;
      state.apiKeys.set(key.key_hash, key);
    } else if (row.t !== null) state.providers.push({ name: row.name, value: row.t });
  }
  return state;
}

/**
 * The fleet's state for the requests of one turn of the event loop, read once: the first to ask
 * opens a read that leaves in the loop's check phase (setImmediate), and those that ask before
 * it leaves share it, their API keys' hashes with it. Each request still reads the state after
 * it arrived, so it sees whatever any instance committed before; under load, a burst of requests
 * costs one statement instead of one each.
 */
export class FleetStateReads {
  private gathering: { hashes: Set<string>; state: Promise<FleetState> } | undefined;

  constructor(private readonly db: Db) {}

  read(apiKeyHash?: string): Promise<FleetState> {
    let read = this.gathering;
    if (!read) {
      const hashes = new Set<string>();
      const state = new Promise<FleetState>((resolve, reject) => {
        setImmediate(() => {
          this.gathering = undefined;
          readFleetState(this.db, [...hashes]).then(resolve, reject);
        });
      });
      read = this.gathering = { hashes, state };
    }
    if (apiKeyHash !== undefined) read.hashes.add(apiKeyHash);
    return read.state;
  }
}
