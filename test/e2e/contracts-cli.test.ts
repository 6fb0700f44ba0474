import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';
import { parseXml } from '../support/xml.ts';

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);
const tmp = mkdtempSync(join(tmpdir(), 'railyard-contracts-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('railyard contracts (CLI)', { timeout: 120_000 }, () => {
  it('generate --check passes on the committed contracts and fails on drift, naming the file and line', async () => {
    const clean = await runCli(['contracts', 'generate', '--check']);
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toMatch(/^contracts matches a fresh generation \(8 pact files from \d+ scenarios\)$/m);
    expect(clean.code).toBe(0);

    const drifted = join(tmp, 'drifted');
    cpSync('contracts', drifted, { recursive: true });
    const file = join(drifted, 'merchant-railyard.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"description": "failover step 1: charge 100.00 GHS from 0241110001"', '"description": "failover step 1: an old description"'));
    const run = await runCli(['contracts', 'generate', '--check', '--dir', drifted]);
    expect(run.stdout).toContain(`contract drift: ${drifted} differs from a fresh generation`);
    expect(run.stdout).toMatch(
      /merchant-railyard\.json differs at line \d+:\n\s+committed: "description": "failover step 1: an old description",\n\s+generated: "description": "failover step 1: charge 100.00 GHS from 0241110001",/,
    );
    expect(run.code).toBe(1);
  });

  it('verify prints the verifier report and a summary, and exits 0 when every interaction passes; no ANSI codes off a terminal, no DEP0060 warning', async () => {
    const dir = join(tmp, 'hubtel-only');
    mkdirSync(dir);
    cpSync('contracts/railyard-hubtel.json', join(dir, 'railyard-hubtel.json'));
    // Warnings on, as a CI job runs it; stdout is a pipe, not a terminal.
    const run = await runCli(['contracts', 'verify', '--dir', dir], 60_000, { env: { NODE_NO_WARNINGS: undefined, NO_COLOR: undefined, FORCE_COLOR: undefined } });
    expect(run.stdout).toContain('Verifying a pact between');
    expect(run.stdout).toContain('has status code 200 (OK)');
    expect(run.stdout).toMatch(/PASS {2}railyard -> hubtel {2}2\/2 interactions/);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('2 interactions verified, 0 failed');
    expect(run.stdout + run.stderr).not.toMatch(ANSI);
    expect(run.stderr).not.toContain('DEP0060');
    expect(run.stderr).not.toContain('DeprecationWarning');
    expect(run.code).toBe(0);
    // FORCE_COLOR keeps the verifier's colours.
    const coloured = await runCli(['contracts', 'verify', '--dir', dir], 60_000, { env: { NODE_NO_WARNINGS: '1', FORCE_COLOR: '1' } });
    expect(coloured.stdout).toMatch(ANSI);
    expect(coloured.code).toBe(0);
  });

  it('verify exits 1 when a contract no longer holds; --reporter junit prints only a JUnit document on stdout, the verifier report on stderr', async () => {
    const dir = join(tmp, 'broken');
    mkdirSync(dir);
    // A contract that promises a field hubtel's answer lacks.
    const pact = JSON.parse(readFileSync('contracts/railyard-hubtel.json', 'utf8')) as { interactions: { description: string; response: { body: { content: Record<string, unknown> } } }[] };
    pact.interactions[0]!.response.body.content.SettlementBatch = 'promised but never sent';
    writeFileSync(join(dir, 'railyard-hubtel.json'), JSON.stringify(pact));
    const run = await runCli(['contracts', 'verify', '--dir', dir]);
    expect(run.stdout).toMatch(/FAIL {2}railyard -> hubtel {2}1\/2 interactions/);
    expect(run.stdout).toMatch(/\$: Actual map is missing the following keys: SettlementBatch/);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('1 interactions verified, 1 failed');
    expect(run.code).toBe(1);

    const junit = await runCli(['contracts', 'verify', '--dir', dir, '--reporter', 'junit']);
    expect(junit.code).toBe(1);
    expect(junit.stderr).toContain('Verifying a pact between');
    expect(junit.stderr.trimEnd().split('\n').at(-1)).toBe('1 interactions verified, 1 failed');
    const root = parseXml(junit.stdout);
    expect(root.attributes).toMatchObject({ name: 'railyard contracts verify', tests: '2', failures: '1', errors: '0', skipped: '0', time: expect.stringMatching(/^\d+\.\d{3}$/) });
    const suite = root.children[0]!;
    expect(suite.attributes).toMatchObject({ name: 'railyard -> hubtel', tests: '2', failures: '1', file: join(dir, 'railyard-hubtel.json') });
    const [failed, passed] = suite.children;
    expect(failed!.attributes).toEqual({ name: pact.interactions[0]!.description, classname: 'railyard -> hubtel' });
    expect(failed!.children[0]!.name).toBe('failure');
    expect(failed!.children[0]!.attributes.message).toBe('$: Actual map is missing the following keys: SettlementBatch');
    expect(passed!.attributes.name).toBe(pact.interactions[1]!.description);
    expect(passed!.children).toEqual([]);

    const json = await runCli(['contracts', 'verify', '--dir', dir, '--reporter', 'json', '--output', join(dir, 'report.json')]);
    expect(json.code).toBe(1);
    expect(json.stdout).toContain('Verifying a pact between');
    const doc = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
    expect(doc.summary).toEqual({ total: 2, passed: 1, failed: 1, skipped: 0 });
    expect(doc.suites[0].tests.map((t: { status: string }) => t.status)).toEqual(['failed', 'passed']);
    expect(doc.pacts[0]).toMatchObject({ consumer: 'railyard', provider: 'hubtel', passed: false });
    expect(doc.pacts[0].interactions[0].mismatches[0].message).toMatch(/SettlementBatch/);
  });

  it('verify works from any working directory, on a copy of contracts/ alone: the pact files embed their scenarios', async () => {
    const copy = join(tmp, 'portable');
    cpSync('contracts', copy, { recursive: true });
    const run = await runCli(['contracts', 'verify', '--dir', copy, '--provider', 'hubtel', '--provider', 'railyard'], 120_000, { cwd: '/' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/PASS {2}merchant -> railyard {2}(\d+)\/\1 interactions/);
    expect(run.stdout).toMatch(/PASS {2}railyard -> hubtel {2}2\/2 interactions/);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ interactions verified, 0 failed$/);
    expect(run.code).toBe(0);
  });

  it('verify calls a scenario that a pact file neither embeds nor finds on disk a usage error (exit 2), naming it and where it looked', async () => {
    const dir = join(tmp, 'no-scenarios');
    mkdirSync(dir);
    const pact = JSON.parse(readFileSync('contracts/railyard-hubtel.json', 'utf8')) as { metadata: { railyard?: unknown } };
    delete pact.metadata.railyard;
    const file = join(dir, 'railyard-hubtel.json');
    writeFileSync(file, JSON.stringify(pact));
    const run = await runCli(['contracts', 'verify', '--dir', dir], 60_000, { cwd: '/' });
    expect(run.stderr).toContain(
      `railyard contracts verify: ${file} names the scenario scenarios/failover.yaml, which it does not embed and which is at none of ${join(dir, 'scenarios/failover.yaml')}, /scenarios/failover.yaml`,
    );
    expect(run.stdout).not.toMatch(/interactions verified/);
    expect(run.code).toBe(2);
  });

  it('answers usage errors with exit 2', async () => {
    const none = await runCli(['contracts']);
    expect(none.stderr).toMatch(/railyard contracts: say generate or verify/);
    expect(none.code).toBe(2);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const nothing = await runCli(['contracts', 'verify', '--dir', empty]);
    expect(nothing.stderr).toBe(`railyard contracts verify: no pact files in ${empty} (run railyard contracts generate)\n`);
    expect(nothing.code).toBe(2);
    const level = await runCli(['contracts', 'verify', '--log-level', 'loud']);
    expect(level.stderr).toMatch(/--log-level is one of error, warn, info, debug, trace, not "loud"/);
    expect(level.code).toBe(2);
    const url = await runCli(['contracts', 'verify', '--provider-base-url', 'localhost:4010']);
    expect(url.stderr).toMatch(/--provider-base-url must be an http\(s\) URL/);
    expect(url.code).toBe(2);
    const unknown = await runCli(['contracts', 'generate', '--bogus']);
    expect(unknown.code).toBe(2);
    const reporter = await runCli(['contracts', 'verify', '--reporter', 'xml']);
    expect(reporter.stderr).toMatch(/--reporter is one of default, junit, json, not "xml"/);
    expect(reporter.code).toBe(2);
    const output = await runCli(['contracts', 'verify', '--output', 'report.xml']);
    expect(output.stderr).toMatch(/--output takes the junit or json report/);
    expect(output.code).toBe(2);
  });
});
