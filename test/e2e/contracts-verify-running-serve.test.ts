import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';
import { freePort, startServe, type ServeProcess } from '../support/serve-process.ts';

// The documented container route: `railyard serve` as its own process, and the verifier pointed
// at it with --provider-base-url. Each provider state is built for a fresh sandbox merchant, so
// the merchant contract passes whole, and again on the same server.

const tmp = mkdtempSync(join(tmpdir(), 'railyard-remote-verify-'));
const interactions = (JSON.parse(readFileSync('contracts/merchant-railyard.json', 'utf8')) as { interactions: unknown[] }).interactions.length;
let serve: ServeProcess;

beforeAll(async () => {
  serve = await startServe({ RAILYARD_DB: join(tmp, 'railyard.db'), RAILYARD_CLOCK: 'virtual', RAILYARD_CONFIG: 'contracts/contract-target.yaml' }, await freePort());
}, 60_000);

afterAll(async () => {
  await serve?.stop('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

describe('railyard contracts verify --provider-base-url against a running railyard serve', { timeout: 180_000 }, () => {
  it('verifies every interaction of the merchant contract and exits 0', async () => {
    const run = await runCli(['contracts', 'verify', '--provider-base-url', serve.baseUrl], 170_000);
    expect(run.stdout).toContain(`PASS  merchant -> railyard  ${interactions}/${interactions} interactions`);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`${interactions} interactions verified, 0 failed`);
    expect(run.code).toBe(0);
  });

  it('verifies them all again on the same server: no state sees what an earlier run left behind', async () => {
    const run = await runCli(['contracts', 'verify', '--provider-base-url', serve.baseUrl], 170_000);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(`${interactions} interactions verified, 0 failed`);
    expect(run.code).toBe(0);
  });

  it('gives the server its configured rails back afterwards', async () => {
    const res = await fetch(`${serve.baseUrl}/api/v1/sandbox/rails`, { headers: { authorization: 'Bearer sk_test_railyard_sandbox_0000000000000000' } });
    const rails = ((await res.json()) as { data: { timeout_ms: number; timeout_overridden: boolean; providers: { name: string; enabled: boolean }[] } }).data;
    expect(rails).toMatchObject({ timeout_ms: 5000, timeout_overridden: false });
    expect(rails.providers.find((p) => p.name === 'paystack')!.enabled).toBe(false);
  });
});
