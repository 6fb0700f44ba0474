import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateContracts, scriptedScenarios } from '../../src/contracts/contract-generator.ts';
import { formatJson, formatReport } from '../../src/replay/replay-report.ts';
import { replayFile } from '../../src/replay/replay-runner.ts';
import type { ReplayResult } from '../../src/replay/replay-result.ts';

// Jobs of different objects run side by side; what a merchant or a replay sees must not depend on
// it. Every shipped script is replayed, and every contract generated, once with the scheduler
// serial (RAILYARD_JOB_CONCURRENCY=1) and once with its default concurrency: the bytes agree.

const tmp = mkdtempSync(join(tmpdir(), 'railyard-serial-concurrent-'));
const scripts = scriptedScenarios('scenarios');

interface Run {
  report: string;
  json: string;
  contracts: string;
}

async function runAll(concurrency: string | undefined): Promise<Run> {
  if (concurrency === undefined) delete process.env.RAILYARD_JOB_CONCURRENCY;
  else process.env.RAILYARD_JOB_CONCURRENCY = concurrency;
  try {
    const results: ReplayResult[] = [];
    for (const file of scripts) results.push(await replayFile(file));
    const contracts = join(tmp, concurrency ?? 'default');
    await generateContracts({ dir: contracts });
    return { report: formatReport(results), json: formatJson(results), contracts };
  } finally {
    delete process.env.RAILYARD_JOB_CONCURRENCY;
  }
}

let serial: Run;
let concurrent: Run;

beforeAll(async () => {
  serial = await runAll('1');
  concurrent = await runAll(undefined);
}, 600_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a serial and a concurrent scheduler give the same bytes', () => {
  it('replays every shipped script, and every one passes', () => {
    expect(scripts.length).toBeGreaterThan(5);
    const parsed = JSON.parse(serial.json) as { files: { file: string; passed: boolean }[] };
    expect(parsed.files.filter((r) => !r.passed).map((r) => r.file)).toEqual([]);
  });

  it('writes byte-identical replay reports, text and JSON', () => {
    expect(concurrent.report).toBe(serial.report);
    expect(concurrent.json).toBe(serial.json);
  });

  it('generates byte-identical contracts', () => {
    const files = readdirSync(serial.contracts).sort();
    expect(files.length).toBeGreaterThan(0);
    expect(readdirSync(concurrent.contracts).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(concurrent.contracts, f), 'utf8'), f).toBe(readFileSync(join(serial.contracts, f), 'utf8'));
  });
});
