import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portAccepts } from '../support/port-accepts.ts';
import { freePort } from '../support/serve-process.ts';

// Runs the CI recipe of docs/contracts.md verbatim (the sh block between the ci-recipe markers):
// start the sandbox, wait for health, replay, verify the contracts against it, stop. Its exit
// code is what a pipeline gates on. (It starts the sandbox with npm start, which serves dist/.)

const ROOT = resolve(import.meta.dirname, '../..');
const doc = readFileSync(resolve(ROOT, 'docs/contracts.md'), 'utf8');
const section = doc.slice(doc.indexOf('<!-- ci-recipe:start -->'), doc.indexOf('<!-- ci-recipe:end -->'));
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
const interactions = (JSON.parse(readFileSync(resolve(ROOT, 'contracts/merchant-railyard.json'), 'utf8')) as { interactions: unknown[] }).interactions.length;

const tmp = mkdtempSync(join(tmpdir(), 'railyard-ci-recipe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What Node and tsx keep in TMPDIR across runs (tsx's is per user id): caches, not the recipe's. */
const CACHES = /^(node-compile-cache|tsx-\d+)$/;

let runs = 0;
/** Runs the recipe with a temporary directory of its own (TMPDIR): `left` is what of its own it left there. */
function runRecipe(env: Record<string, string>): Promise<{ code: number | null; output: string; left: string[] }> {
  const scratch = join(tmp, `run-${++runs}`);
  mkdirSync(scratch);
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-c', blocks[0]!], {
      cwd: ROOT,
      env: { ...process.env, npm_config_update_notifier: 'false', NODE_NO_WARNINGS: '1', TMPDIR: scratch, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output, left: readdirSync(scratch).filter((name) => !CACHES.test(name)) }));
  });
}

describe('the CI recipe in docs/contracts.md', { timeout: 180_000 }, () => {
  it('is one sh block', () => {
    expect(blocks).toHaveLength(1);
  });

  it('exits 0 on the shipped contracts, having replayed the scenarios and verified every interaction, and stops the sandbox and removes its log', async () => {
    const port = await freePort();
    const run = await runRecipe({ PORT: String(port) });
    expect(run.output).toMatch(/^\d+ passed, 0 failed$/m);
    expect(run.output).toContain(`PASS  merchant -> railyard  ${interactions}/${interactions} interactions`);
    expect(run.output).toContain(`${interactions} interactions verified, 0 failed`);
    expect(run.code, run.output).toBe(0);
    expect(await portAccepts(port)).toBe(false);
    expect(run.left).toEqual([]);
  });

  it('exits non-zero when a contract no longer holds (a tampered copy), and still stops the sandbox and removes its log', async () => {
    const contracts = join(tmp, 'contracts');
    cpSync(resolve(ROOT, 'contracts'), contracts, { recursive: true });
    const file = join(contracts, 'merchant-railyard.json');
    const pact = JSON.parse(readFileSync(file, 'utf8')) as { interactions: { description: string; response?: { body?: { content: { data: Record<string, unknown> } } } }[] };
    const settled = pact.interactions.find((i) => i.description === 'failover step 3: the charge is settled by hubtel')!;
    settled.response!.body!.content.data.settlement_batch = 'promised but never sent';
    writeFileSync(file, JSON.stringify(pact, null, 2));
    const port = await freePort();
    const run = await runRecipe({ PORT: String(port), CONTRACTS: contracts });
    expect(run.output).toContain(`FAIL  merchant -> railyard  ${interactions - 1}/${interactions} interactions`);
    expect(run.output).toMatch(/missing the following keys: settlement_batch/);
    expect(run.code).toBe(1);
    expect(await portAccepts(port)).toBe(false);
    expect(run.left).toEqual([]);
  });
});
