// The bench measures PostgreSQL with the server settings deploy/compose.yaml ships, read from the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { composePostgresSettings } from '../../bench/compose-postgres-settings.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function composeWith(command: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-compose-'));
  dirs.push(dir);
  const file = join(dir, 'compose.yaml');
  writeFileSync(file, JSON.stringify({ services: { postgres: { image: 'postgres:15', ...(command === undefined ? {} : { command }) } } }));
  return file;
}

describe('the PostgreSQL settings the compose file ships', () => {
  it('are none today: the server runs on its defaults', () => {
    expect(composePostgresSettings()).toEqual({});
  });

  it('are the -c flags of the postgres command, in list or string form', () => {
    expect(composePostgresSettings(composeWith(['postgres', '-c', 'shared_buffers=256MB', '-cmax_connections=200', '--synchronous-commit=off']))).toEqual({
      shared_buffers: '256MB',
      max_connections: '200',
      synchronous_commit: 'off',
    });
    expect(composePostgresSettings(composeWith('postgres -c fsync=on -c listen_addresses=*'))).toEqual({ fsync: 'on' });
  });

  it('refuses a flag it cannot reproduce rather than drop it', () => {
    expect(() => composePostgresSettings(composeWith(['postgres', '-p', '6543']))).toThrow(/cannot reproduce "-p"/);
  });
});
