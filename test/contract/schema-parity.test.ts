// One migration source, two schemas: the migrations (src/store/migrations.ts, rendered for
// PostgreSQL by postgresMigrationSql) applied to each store must leave the same tables, columns,
// keys, unique constraints and indexes, or a query that works on one backend breaks on the other.
// Types are compared by their family (SQLite's INTEGER is PostgreSQL's BIGINT); CHECK constraints
// are not compared (each backend prints its own rewriting of the expression).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db.ts';
import { PostgresStore } from '../../src/store/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';

interface Column {
  name: string;
  type: string;
  nullable: boolean;
  /** The default as written (casts dropped), `identity` for a key the database hands out, or null. */
  default: string | null;
}

interface Index {
  name: string;
  columns: string[];
  unique: boolean;
  /** A partial index's condition, normalised; null for a whole-table index. */
  where: string | null;
}

interface Table {
  columns: Column[];
  primaryKey: string[];
  /** Each UNIQUE constraint's columns. */
  unique: string[][];
  /** Each foreign key: its columns -> the referenced table and columns. */
  references: string[];
  /** Indexes created by CREATE INDEX, by name. */
  indexes: Index[];
}

type Schema = Record<string, Table>;

/** The stores' own bookkeeping, created by each adapter rather than by a migration. */
const BOOKKEEPING = new Set(['schema_migrations']);

/** Type families: SQLite's INTEGER is PostgreSQL's BIGINT (64-bit both); anything else stays as it is, to be seen. */
function typeFamily(type: string): string {
  const t = type.toLowerCase();
  if (t === 'integer' || t === 'bigint') return 'integer (64-bit)';
  return t;
}

/** A default as written: PostgreSQL adds a cast ('admin'::text), SQLite keeps the text. */
function normaliseDefault(value: string | null): string | null {
  return value === null ? null : value.replace(/::[a-z ]+$/i, '').trim();
}

/** A condition without the parentheses and literal casts ('pending'::text) PostgreSQL adds, in one case and spacing. */
function normaliseCondition(condition: string): string {
  let c = condition
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/('(?:[^']|'')*')::[a-z ]+?(?=\)|\s|$)/g, '$1');
  while (c.startsWith('(') && c.endsWith(')')) c = c.slice(1, -1).trim();
  return c;
}

const byName = <T extends { name: string }>(items: T[]) => items.sort((a, b) => a.name.localeCompare(b.name));
const sortedLists = (lists: string[][]) => lists.sort((a, b) => a.join(',').localeCompare(b.join(',')));

async function sqliteSchema(store: Store): Promise<Schema> {
  const tables = await store.all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  const schema: Schema = {};
  for (const { name: table, sql } of tables) {
    if (BOOKKEEPING.has(table)) continue;
    const info = await store.all<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>(
      'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid',
      [table],
    );
    const autoincrement = /\bAUTOINCREMENT\b/i.test(sql);
    const columns = info.map((c) => ({
      name: c.name,
      type: typeFamily(c.type),
      // A primary key column is never null on PostgreSQL; SQLite lets a non-INTEGER one be (a
      // legacy quirk), but no code writes one, so both count as not null here.
      nullable: c.notnull === 0 && c.pk === 0,
      default: c.pk > 0 && autoincrement ? 'identity' : normaliseDefault(c.dflt_value),
    }));
    const primaryKey = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const indexList = await store.all<{ name: string; unique: number; origin: string; partial: number }>('SELECT name, "unique", origin, partial FROM pragma_index_list(?)', [table]);
    const unique: string[][] = [];
    const indexes: Index[] = [];
    for (const index of indexList) {
      const columns = (await store.all<{ name: string }>('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [index.name])).map((c) => c.name);
      if (index.origin === 'u') unique.push(columns);
      if (index.origin !== 'c') continue;
      const definition = await store.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [index.name]);
      const where = index.partial ? /\bWHERE\b([\s\S]*)$/i.exec(definition!.sql)![1]! : null;
      indexes.push({ name: index.name, columns, unique: index.unique === 1, where: where === null ? null : normaliseCondition(where) });
    }
    const foreignKeys = await store.all<{ id: number; seq: number; table: string; from: string; to: string }>(
      'SELECT id, seq, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq',
      [table],
    );
    const references = [...new Set(foreignKeys.map((f) => f.id))].map((id) => {
      const parts = foreignKeys.filter((f) => f.id === id);
      return `(${parts.map((p) => p.from).join(', ')}) -> ${parts[0]!.table} (${parts.map((p) => p.to).join(', ')})`;
    });
    schema[table] = { columns, primaryKey, unique: sortedLists(unique), references: references.sort(), indexes: byName(indexes) };
  }
  return schema;
}

async function postgresSchema(store: Store): Promise<Schema> {
  const tables = await store.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name");
  /** A constraint's or an index's columns, in order. */
  const keyColumns = `(SELECT array_to_string(array_agg(a.attname ORDER BY k.ord), ',')
       FROM unnest(%KEYS%) WITH ORDINALITY AS k(attnum, ord) JOIN pg_attribute a ON a.attrelid = %REL% AND a.attnum = k.attnum)`;
  const schema: Schema = {};
  for (const { name: table } of tables) {
    if (BOOKKEEPING.has(table)) continue;
    const info = await store.all<{ name: string; type: string; is_nullable: string; column_default: string | null; is_identity: string }>(
      `SELECT column_name AS name, data_type AS type, is_nullable, column_default, is_identity
         FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
      [table],
    );
    const columns = info.map((c) => ({
      name: c.name,
      type: typeFamily(c.type),
      nullable: c.is_nullable === 'YES',
      default: c.is_identity === 'YES' ? 'identity' : normaliseDefault(c.column_default),
    }));
    const constraints = await store.all<{ contype: string; columns: string; target: string | null; target_columns: string | null }>(
      `SELECT c.contype, ${keyColumns.replace('%KEYS%', 'c.conkey').replace('%REL%', 'c.conrelid')} AS columns,
              c.confrelid::regclass::text AS target,
              ${keyColumns.replace('%KEYS%', 'c.confkey').replace('%REL%', 'c.confrelid')} AS target_columns
         FROM pg_constraint c WHERE c.conrelid = ?::regclass AND c.contype IN ('p', 'u', 'f')`,
      [table],
    );
    const list = (columns: string) => columns.split(',');
    const primaryKey = list(constraints.find((c) => c.contype === 'p')?.columns ?? '').filter(Boolean);
    const unique = constraints.filter((c) => c.contype === 'u').map((c) => list(c.columns));
    const references = constraints.filter((c) => c.contype === 'f').map((c) => `(${list(c.columns).join(', ')}) -> ${c.target} (${list(c.target_columns!).join(', ')})`);
    // Indexes of its own (CREATE INDEX), not the ones backing a primary key or a UNIQUE constraint.
    const indexRows = await store.all<{ name: string; is_unique: number; columns: string; predicate: string | null }>(
      `SELECT ic.relname AS name, i.indisunique AS is_unique, ${keyColumns.replace('%KEYS%', 'i.indkey::int2[]').replace('%REL%', 'i.indrelid')} AS columns,
              pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = ?::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      [table],
    );
    const indexes = indexRows.map((i) => ({
      name: i.name,
      columns: list(i.columns),
      unique: i.is_unique === 1,
      where: i.predicate === null ? null : normaliseCondition(i.predicate),
    }));
    schema[table] = { columns, primaryKey, unique: sortedLists(unique), references: references.sort(), indexes: byName(indexes) };
  }
  return schema;
}

describe('one migration source: both stores end with the same schema', () => {
  let cluster: PostgresCluster;
  let sqlite: Schema;
  let postgres: Schema;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    const sqliteStore = new SqliteStore(':memory:');
    const postgresStore = await PostgresStore.open(await cluster.createDatabase());
    try {
      sqlite = await sqliteSchema(sqliteStore);
      postgres = await postgresSchema(postgresStore);
    } finally {
      await sqliteStore.close();
      await postgresStore.close();
    }
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('reads each schema in full: keys, unique constraints, references, defaults and partial indexes', () => {
    // The comparisons below would pass on two empty readings; these facts say the readings see.
    for (const schema of [sqlite, postgres]) {
      expect(Object.keys(schema).length).toBeGreaterThan(30);
      expect(schema.jobs!.columns[0]).toEqual({ name: 'seq', type: 'integer (64-bit)', nullable: false, default: 'identity' });
      expect(schema.api_keys!.columns.find((c) => c.name === 'role')).toEqual({ name: 'role', type: 'text', nullable: false, default: "'admin'" });
      expect(schema.idempotency_keys!.primaryKey).toEqual(['environment', 'merchant_id', 'idempotency_key']);
      expect(schema.webhook_deliveries!.unique).toContainEqual(['event_id', 'endpoint_id']);
      expect(schema.ledger_postings!.references).toEqual(['(journal_id) -> ledger_journals (id)']);
      expect(schema.jobs!.indexes).toContainEqual({ name: 'jobs_finished', columns: ['run_at'], unique: false, where: "state <> 'pending'" });
    }
  });

  it('has the same tables', () => {
    expect(Object.keys(postgres)).toEqual(Object.keys(sqlite));
  });

  it('gives each table the same columns, in order, of the same types, nullability and defaults', () => {
    const columnsOf = (schema: Schema) => Object.fromEntries(Object.entries(schema).map(([name, t]) => [name, t.columns]));
    expect(columnsOf(postgres)).toEqual(columnsOf(sqlite));
  });

  it('gives each table the same primary key, unique constraints and references', () => {
    const keysOf = (schema: Schema) => Object.fromEntries(Object.entries(schema).map(([name, t]) => [name, { primaryKey: t.primaryKey, unique: t.unique, references: t.references }]));
    expect(keysOf(postgres)).toEqual(keysOf(sqlite));
  });

  it('gives each table the same indexes: names, columns, uniqueness and partial conditions', () => {
    const indexesOf = (schema: Schema) => Object.fromEntries(Object.entries(schema).map(([name, t]) => [name, t.indexes]));
    expect(indexesOf(postgres)).toEqual(indexesOf(sqlite));
  });
});
