import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../support/run-cli.ts';
import { parseXml } from '../support/xml.ts';

const PASS = 'test/fixtures/replay/pass';
const FAIL = 'test/fixtures/replay/fail';
const BROKEN = 'test/fixtures/replay/broken';

/** `railyard replay …` as a real process, from the repository root. */
function railyard(...args: string[]): Promise<CliRun> {
  return runCli(['replay', ...args]);
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

describe('railyard replay (CLI)', { timeout: 90_000 }, () => {
  it('exits 0 when every script passes; progress on stderr, timelines and the summary on stdout', async () => {
    const run = await railyard(PASS);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(lastLine(run.stdout)).toBe('6 passed, 0 failed');
    expect(run.stdout).toContain('1 skipped (no script)\n');
    expect(run.stdout).toContain(`PASS  ${PASS}/failover.yaml\n`);
    expect(run.stdout).toContain(`SKIP  ${PASS}/no-script.yaml  skipped (no script)\n`);
    expect(run.stdout).toMatch(/^\+00:05\.000  hubtel   → railyard   callback chg_\w+: success -> settled$/m);
    expect(run.stderr).toContain(`[1/7] ${PASS}/charge-success.yaml ... PASS\n`);
    expect(run.stderr).toContain(`[5/7] ${PASS}/no-script.yaml ... skipped (no script)\n`);
    expect(run.stderr).toContain(`[7/7] ${PASS}/webhook-retries.yaml ... PASS\n`);
  });

  it('exits 1 when a script fails or a file is invalid, naming the step and the file:line:column', async () => {
    const run = await railyard(PASS, FAIL, BROKEN);
    expect(run.code, run.stderr).toBe(1);
    expect(lastLine(run.stdout)).toBe('6 passed, 5 failed');
    expect(run.stdout).toContain(`FAIL  ${FAIL}/wrong-expectation.yaml  step 3: expect_webhook charge.success\n`);
    expect(run.stdout).toMatch(/at data\.object\.status: expected "failed", got "success"/);
    expect(run.stdout).toContain(`FAIL  ${BROKEN}/bad-regex.yaml  invalid: ${BROKEN}/bad-regex.yaml:6:24: rules[0].match.msisdn.regex: regex does not compile\n`);
    expect(run.stdout).toContain(`${BROKEN}/bad-indent.yaml:6:1: `);
    expect(run.stdout).toContain(`${BROKEN}/unknown-field.yaml:8:7: `);
    expect(run.stdout).toContain(`${BROKEN}/wrong-type.yaml:4:9: `);
    expect(run.stderr).toContain(`[8/12] ${FAIL}/wrong-expectation.yaml ... FAIL\n`);
    expect(run.stderr).toContain(`[9/12] ${BROKEN}/bad-indent.yaml ... FAIL (invalid)\n`);
  });

  it('--json prints one JSON document and no progress; the same seed prints the same bytes, --seed changes ids', async () => {
    const a = await railyard(`${PASS}/charge-success.yaml`, `${FAIL}/wrong-expectation.yaml`, '--json');
    expect(a.code).toBe(1);
    expect(a.stderr).toBe('');
    const doc = JSON.parse(a.stdout);
    expect(doc.summary).toEqual({ passed: 1, failed: 1, skipped: 0, total: 2 });
    expect(doc.files.map((f: { file: string; status: string }) => [f.file, f.status])).toEqual([
      [`${PASS}/charge-success.yaml`, 'passed'],
      [`${FAIL}/wrong-expectation.yaml`, 'failed'],
    ]);
    expect(doc.files[0].steps).toHaveLength(5);
    expect(doc.files[0].timeline[0]).toMatchObject({ at: '+00:00.000', from: 'merchant', to: 'railyard', what: 'POST /api/v1/charges' });
    expect(doc.files[1].failures[0]).toMatchObject({ index: 3, label: 'step 3: expect_webhook charge.success' });

    const b = await railyard(`${PASS}/charge-success.yaml`, `${FAIL}/wrong-expectation.yaml`, '--json');
    expect(b.stdout).toBe(a.stdout);
    const c = await railyard(`${PASS}/charge-success.yaml`, '--json', '--seed', '7');
    expect(c.code).toBe(0);
    const seeded = JSON.parse(c.stdout);
    expect(seeded.files[0].seed).toBe(7);
    expect(seeded.files[0].timeline[1].what).not.toBe(doc.files[0].timeline[1].what);
  });

  it('--reporter junit prints one well-formed JUnit document: a test case per file, failure, error and skipped, counts', async () => {
    const run = await railyard(`${PASS}/charge-success.yaml`, `${PASS}/no-script.yaml`, `${FAIL}/wrong-expectation.yaml`, `${BROKEN}/bad-regex.yaml`, '--reporter', 'junit');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(/\u001b\[/);
    const root = parseXml(run.stdout);
    expect(root.name).toBe('testsuites');
    expect(root.attributes).toMatchObject({ name: 'railyard replay', tests: '4', failures: '1', errors: '1', skipped: '1', time: expect.stringMatching(/^\d+\.\d{3}$/) });
    const [suite] = root.children;
    expect(suite!.name).toBe('testsuite');
    expect(suite!.attributes).toMatchObject({ tests: '4', failures: '1', errors: '1', skipped: '1' });
    const cases = suite!.children;
    expect(cases.map((c) => [c.name, c.attributes.name, c.attributes.classname, c.children.map((x) => x.name).join()])).toEqual([
      ['testcase', `${PASS}/charge-success.yaml: charge-success`, PASS, ''],
      ['testcase', `${PASS}/no-script.yaml: rules-only`, PASS, 'skipped'],
      ['testcase', `${FAIL}/wrong-expectation.yaml: wrong-expectation`, FAIL, 'failure'],
      ['testcase', `${BROKEN}/bad-regex.yaml`, BROKEN, 'error'],
    ]);
    const failure = cases[2]!.children[0]!;
    expect(failure.attributes.message).toBe('step 3: expect_webhook charge.success');
    expect(failure.text).toMatch(/at data\.object\.status: expected "failed", got "success"/);
    expect(cases[3]!.children[0]!.attributes.message).toMatch(/regex does not compile/);
  });

  it('--reporter json is --json: the summary, the suites and each file; --output writes the document to a file and keeps the console readable', async () => {
    const files = [`${PASS}/charge-success.yaml`, `${FAIL}/wrong-expectation.yaml`];
    const json = await railyard(...files, '--reporter', 'json');
    const alias = await railyard(...files, '--json');
    expect(json.code).toBe(1);
    expect(json.stdout).toBe(alias.stdout);
    const doc = JSON.parse(json.stdout);
    expect(doc.summary).toEqual({ total: 2, passed: 1, failed: 1, skipped: 0 });
    expect(doc.suites[0].tests.map((t: { name: string; status: string; message: string | null }) => [t.name, t.status, t.message])).toEqual([
      [`${files[0]}: charge-success`, 'passed', null],
      [`${files[1]}: wrong-expectation`, 'failed', 'step 3: expect_webhook charge.success'],
    ]);
    expect(doc.files.map((f: { status: string }) => f.status)).toEqual(['passed', 'failed']);

    const dir = mkdtempSync(join(tmpdir(), 'railyard-replay-report-'));
    try {
      const out = join(dir, 'junit.xml');
      const run = await railyard(...files, '--reporter', 'junit', '--output', out);
      expect(run.code).toBe(1);
      expect(lastLine(run.stdout)).toBe('1 passed, 1 failed');
      expect(run.stderr).toContain(`[2/2] ${files[1]} ... FAIL`);
      expect(parseXml(readFileSync(out, 'utf8')).attributes).toMatchObject({ tests: '2', failures: '1' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails with exit 2 when no file holds a script: nothing was tested, and it says so', async () => {
    const run = await railyard(`${PASS}/no-script.yaml`);
    expect(run.stderr).toContain(`railyard replay: no script found in ${PASS}/no-script.yaml: nothing was tested`);
    expect(run.code).toBe(2);
    const junit = await railyard(`${PASS}/no-script.yaml`, '--reporter', 'junit');
    expect(junit.code).toBe(2);
    expect(parseXml(junit.stdout).attributes).toMatchObject({ tests: '1', skipped: '1' });
  });

  it.each([
    [['--reporter', 'tap', PASS], /--reporter is one of default, junit, json, not "tap"/],
    [['--json', '--reporter', 'junit', PASS], /--json is --reporter json; it cannot go with --reporter junit/],
    [['--output', 'report.xml', PASS], /--output takes the junit or json report/],
    [[], /name at least one scenario file or directory/],
    [['--seed', 'abc', PASS], /--seed must be a whole number/],
    [['--bogus', PASS], /Unknown option '--bogus'/],
    [['test/fixtures/replay/no-such-dir'], /does not exist/],
  ])('exits 2 on usage errors: %j', async (args, message) => {
    const run = await railyard(...(args as string[]));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('replays every shipped scenario with a script green: railyard replay scenarios/', async () => {
    const run = await railyard('scenarios/');
    expect(
      run.code,
      run.stdout
        .split('\n')
        .filter((l) => /^(FAIL|  ✗|      )/.test(l))
        .join('\n'),
    ).toBe(0);
    expect(lastLine(run.stdout)).toMatch(/^\d+ passed, 0 failed$/);
  });
});
