import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';

// `railyard scenarios lint` as a CI job runs it: exit codes gate the pipeline.
describe('railyard scenarios lint (CLI)', { timeout: 90_000 }, () => {
  it('exits 0 on the shipped files with --strict, 0 on warnings, 1 on them with --strict, 1 on errors', async () => {
    const shipped = await runCli(['scenarios', 'lint', 'scenarios', '--strict']);
    expect([shipped.code, shipped.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, expect.stringMatching(/^PASS  \d+ files: 0 errors, 0 warnings/)]);
    expect((await runCli(['scenarios', 'lint', 'test/fixtures/lint/warnings.yaml'])).code).toBe(0);
    expect((await runCli(['scenarios', 'lint', 'test/fixtures/lint/warnings.yaml', '--strict'])).code).toBe(1);
    const failed = await runCli(['scenarios', 'lint', 'test/fixtures/lint', '--reporter', 'json']);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ passed: false, errors: 2 });
  });

  it('exits 2 on a usage error or a missing file', async () => {
    expect((await runCli(['scenarios', 'lint', 'no/such/file.yaml'])).code).toBe(2);
    expect((await runCli(['scenarios', 'lint', '--reporter', 'xml', 'scenarios'])).code).toBe(2);
    expect((await runCli(['scenarios', 'check'])).code).toBe(2);
  });
});
