import type { Store } from './db.ts';
import { PostgresStore } from './postgres-store.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { WriteTurn } from './write-turn.ts';

/** A postgres:// or postgresql:// URL selects PostgreSQL; anything else is a SQLite path (or :memory:). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/**
 * Opens the store `db` (config `db`, env RAILYARD_DB) names, migrated and ready. `writeTurn`: a
 * SQLite file other threads of this process write too (SqliteStore).
 */
export async function openStore(db: string, options: { writeTurn?: WriteTurn } = {}): Promise<Store> {
  return isPostgresUrl(db) ? PostgresStore.open(db) : new SqliteStore(db, options);
}

/** `db` as it may be shown: a URL's password is never printed. */
export function describeStore(db: string): string {
  if (!isPostgresUrl(db)) return db;
  try {
    const url = new URL(db);
    if (url.password) url.password = '***';
    return `PostgreSQL ${url.toString()}`;
  } catch {
    return 'PostgreSQL (unparsable URL)';
  }
}

/** The newest migration applied to an open (so migrated) store. */
export async function schemaVersion(store: Store): Promise<number> {
  const row = await store.get<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
  return Number(row?.version ?? 0);
}
