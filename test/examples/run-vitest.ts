import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs Vitest with a config of its own in a child process; answers its exit code and output. */
export function runVitest(config: string, cwd = ROOT, bin = resolve(ROOT, 'node_modules/vitest/vitest.mjs')): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, 'run', '--config', config, '--reporter', 'default', '--color=false'], {
      cwd,
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
