import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/run-cli.ts';

// A pipeline's first run names `--output reports/replay.xml` in a fresh checkout, where reports/
// does not exist yet (docs/ci.md's jobs do): the report's folders are made, not an ENOENT.
const tmp = mkdtempSync(join(tmpdir(), 'railyard-report-folders-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('--output into a folder that does not exist yet', () => {
  it('railyard replay makes the folders and writes the JUnit report there', { timeout: 60_000 }, async () => {
    const report = join(tmp, 'reports/nested/replay.xml');
    const run = await runCli(['replay', resolve(ROOT, 'scenarios/failover.yaml'), '--reporter', 'junit', '--output', report]);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(report)).toBe(true);
    expect(readFileSync(report, 'utf8')).toMatch(/<testsuites[^>]* tests="1" failures="0"/);
  });
});
