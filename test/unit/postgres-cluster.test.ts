// The PostgreSQL tests never skip: without the server binaries they fail and say what to install.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findPostgresBinaries } from '../support/postgres-cluster.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fakeRoot(versions: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'railyard-pgroot-'));
  dirs.push(root);
  for (const v of versions) {
    mkdirSync(join(root, v, 'bin'), { recursive: true });
    writeFileSync(join(root, v, 'bin', 'initdb'), '');
  }
  return root;
}

describe('finding the PostgreSQL server binaries', () => {
  it('fails with a message that says to install postgresql when there are none', () => {
    expect(() => findPostgresBinaries(fakeRoot([]))).toThrow(/install the Debian package `postgresql`/);
    expect(() => findPostgresBinaries(join(tmpdir(), 'railyard-no-such-dir'))).toThrow(/RAILYARD_TEST_PG_URL/);
  });

  it('takes the newest installed version', () => {
    const root = fakeRoot(['9.6', '13', '15']);
    expect(findPostgresBinaries(root)).toBe(join(root, '15', 'bin'));
  });
});
