// `railyard migrate`: brings the configured store up to date and exits, on SQLite and PostgreSQL.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (cluster) await (await cluster).stop();
}, 60_000);

function migrate(db: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate', ...args], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: { ...process.env, RAILYARD_DB: db },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => done({ code, out, err }));
  });
}

const latest = MIGRATIONS.at(-1)!.version;

async function versions(db: string): Promise<number[]> {
  const store = await openStore(db);
  try {
    return (await store.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) => Number(r.version));
  } finally {
    await store.close();
  }
}

describe('railyard migrate', () => {
  it('creates and migrates a SQLite file, then exits 0; a second run finds nothing to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-migrate-'));
    dirs.push(dir);
    const db = join(dir, 'railyard.db');
    for (let run = 0; run < 2; run++) {
      const result = await migrate(db);
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(result.out).toBe(`railyard migrate: ${db} is at schema version ${latest}\n`);
    }
    expect(await versions(db)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('migrates an empty PostgreSQL database, masking the password it was given', async () => {
    const url = new URL(await (await postgres()).createDatabase());
    url.password = 'not-for-logs';
    const result = await migrate(url.toString());
    expect(result.code).toBe(0);
    expect(result.out).toMatch(new RegExp(`^railyard migrate: PostgreSQL postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:\\d+/railyard_test_\\w+ is at schema version ${latest}\\n$`));
    expect(await versions(url.toString())).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('refuses arguments with a usage error', async () => {
    const result = await migrate(':memory:', 'now');
    expect(result.code).toBe(2);
    expect(result.err).toContain('railyard migrate: takes no arguments (got now)');
  });

  it('fails with exit 2 and the reason when the database cannot be reached', async () => {
    const result = await migrate('postgres://nobody@127.0.0.1:1/nothing');
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^railyard could not start: .*ECONNREFUSED/);
  });
});
