// Every migration runs on both backends: SQLite's form is migrations.ts, PostgreSQL's is
// migrations-postgres.ts. (The store contract suite applies both for real.)
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/migrations-postgres.ts';

describe('PostgreSQL migrations', () => {
  it('has a PostgreSQL form for every migration, and none for a migration that does not exist', () => {
    const missing = MIGRATIONS.filter((m) => typeof POSTGRES_MIGRATIONS[m.version] !== 'string').map((m) => `${m.version} ${m.name}`);
    expect(missing, 'add the PostgreSQL form of these migrations to src/store/migrations-postgres.ts').toEqual([]);
    expect(Object.keys(POSTGRES_MIGRATIONS).map(Number).sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it.each(MIGRATIONS.map((m) => [m.version, m.name] as const))('migration %i (%s) uses no SQLite-only SQL on PostgreSQL', (version) => {
    const sql = POSTGRES_MIGRATIONS[version]!.replace(/--[^\n]*/g, '');
    expect(sql).not.toMatch(/AUTOINCREMENT/i);
    // 32-bit INTEGER overflows on epoch milliseconds and large amounts: BIGINT throughout.
    expect(sql).not.toMatch(/\bINTEGER\b/i);
    expect(sql).not.toMatch(/\b(instr|ifnull|group_concat|strftime|datetime|julianday)\s*\(/i);
    expect(sql).not.toMatch(/INSERT OR |REPLACE INTO|PRAGMA/i);
  });
});
