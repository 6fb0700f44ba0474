import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';

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
    expect(run.stdout).toMatch(/merchant-railyard\.json differs at line \d+:\n\s+committed: "description": "failover step 1: an old description",\n\s+generated: "description": "failover step 1: charge 100.00 GHS from 0241110001",/);
    expect(run.code).toBe(1);
  });

  it('verify prints the verifier report and a summary, and exits 0 when every interaction passes', async () => {
    const dir = join(tmp, 'hubtel-only');
    mkdirSync(dir);
    cpSync('contracts/railyard-hubtel.json', join(dir, 'railyard-hubtel.json'));
    const run = await runCli(['contracts', 'verify', '--dir', dir]);
    expect(run.stdout).toContain('Verifying a pact between');
    expect(run.stdout).toMatch(/PASS {2}railyard -> hubtel {2}2\/2 interactions/);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('2 interactions verified, 0 failed');
    expect(run.code).toBe(0);
  });

  it('verify exits 1 when a contract no longer holds', async () => {
    const dir = join(tmp, 'broken');
    mkdirSync(dir);
    // A contract that promises a field hubtel's answer lacks.
    const pact = JSON.parse(readFileSync('contracts/railyard-hubtel.json', 'utf8')) as { interactions: { response: { body: { content: Record<string, unknown> } } }[] };
    pact.interactions = pact.interactions.slice(0, 1);
    pact.interactions[0]!.response.body.content.SettlementBatch = 'promised but never sent';
    writeFileSync(join(dir, 'railyard-hubtel.json'), JSON.stringify(pact));
    const run = await runCli(['contracts', 'verify', '--dir', dir]);
    expect(run.stdout).toMatch(/FAIL {2}railyard -> hubtel {2}0\/1 interactions/);
    expect(run.stdout).toMatch(/\$: Actual map is missing the following keys: SettlementBatch/);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('0 interactions verified, 1 failed');
    expect(run.code).toBe(1);
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
    expect(run.stderr).toContain(`railyard contracts verify: ${file} names the scenario scenarios/failover.yaml, which it does not embed and which is at none of ${join(dir, 'scenarios/failover.yaml')}, /scenarios/failover.yaml`);
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
  });
});
