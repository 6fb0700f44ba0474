import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// examples/jest, the Jest global setup docs/testing.md shows, run by Jest itself: its
// globalSetup starts railyard in Jest's own process, the test file reaches it from a worker through
// the environment, and its globalTeardown stops it.
const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = resolve(ROOT, 'examples/jest');

function runJest(): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    // As the example's config says: Jest runs ES modules only with --experimental-vm-modules.
    const child = spawn(process.execPath, ['--experimental-vm-modules', resolve(ROOT, 'node_modules/jest/bin/jest.js'), '--config', 'jest.config.mjs', '--ci'], {
      cwd: EXAMPLE,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', VITEST: undefined, VITEST_POOL_ID: undefined, VITEST_WORKER_ID: undefined, NODE_ENV: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

describe('the Jest example', () => {
  it('passes its tests under Jest against the sandbox its globalSetup started, handed on through the environment', { timeout: 120_000 }, async () => {
    const run = await runJest();
    expect(run.output).toMatch(/Tests:\s+11 passed, 11 total/);
    expect(run.code, run.output).toBe(0);
  });
});
