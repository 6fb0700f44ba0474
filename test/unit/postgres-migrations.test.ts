// Every migration is written once, in SQLite's dialect (src/store/migrations.ts), and PostgreSQL
// runs it as postgresMigrationSql renders it. (The store contract suite applies both for real, and
// test/contract/schema-parity.test.ts compares the schemas they end with.)
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { postgresMigrationSql } from '../../src/store/postgres-sql.ts';

const cases = MIGRATIONS.map((m) => [m.version, m.name, m] as const);

describe('PostgreSQL migrations', () => {
  it('numbers the migrations 1, 2, 3, … in order: versions already applied are never applied again', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(new Set(MIGRATIONS.map((m) => m.name)).size).toBe(MIGRATIONS.length);
  });

  it.each(cases)('migration %i (%s) uses no SQLite-only SQL on PostgreSQL', (_version, _name, migration) => {
    const sql = postgresMigrationSql(migration).replace(/--[^\n]*/g, '');
    expect(sql).not.toMatch(/AUTOINCREMENT/i);
    // 32-bit INTEGER overflows on epoch milliseconds and large amounts: BIGINT throughout.
    expect(sql).not.toMatch(/\bINTEGER\b/i);
    expect(sql, 'no rule renders this: give the migration its PostgreSQL form (Migration.postgres)').not.toMatch(
      /\b(instr|ifnull|group_concat|strftime|datetime|julianday|json_extract|json_each|printf|total|randomblob|last_insert_rowid)\s*\(/i,
    );
    expect(sql).not.toMatch(/INSERT OR |REPLACE INTO|PRAGMA|WITHOUT ROWID|\bGLOB\b/i);
  });
});
