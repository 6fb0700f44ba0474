import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/run-cli.ts';
import { freePort, untilServing } from '../support/serve-process.ts';

// `railyard serve` is what the container runs: it loads what serving needs, and not the contract
// tooling (Pact and its native core), the browser driver or the test runner, which only other
// commands use. A module hook records every module the process loads, up to its graceful stop.
const dir = mkdtempSync(join(tmpdir(), 'railyard-serve-modules-'));
const recorder = join(dir, 'record-loads.mjs');
const list = join(dir, 'loaded.txt');
let loaded: string[] = [];

beforeAll(async () => {
  writeFileSync(
    recorder,
    `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const seen = new Set();
registerHooks({ load(url, context, next) { seen.add(url); return next(url, context); } });
process.on('exit', () => writeFileSync(${JSON.stringify(list)}, [...seen].join('\\n')));
`,
  );
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', recorder, '--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, NODE_NO_WARNINGS: '1', PORT: String(port), HOST: '127.0.0.1', RAILYARD_DB: ':memory:', RAILYARD_LOG_REQUESTS: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await untilServing(child);
  // A request through the app, so that whatever a first request loads lazily is counted too.
  expect((await fetch(`http://127.0.0.1:${port}/api/v1/wallet`, { headers: { authorization: 'Bearer sk_test_railyard_sandbox_0000000000000000' } })).status).toBe(200);
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
  loaded = readFileSync(list, 'utf8').split('\n');
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the modules `railyard serve` loads', () => {
  it('are recorded (the hook sees the app and its dependencies)', () => {
    expect(loaded.some((url) => url.endsWith('/src/app.ts'))).toBe(true);
    expect(loaded.some((url) => url.includes('/node_modules/express/'))).toBe(true);
  });

  it('leave out the contract tooling, the browser driver and the test tools', () => {
    const unused = ['/node_modules/@pact-foundation/', '/src/contracts/', '/node_modules/playwright-core/', '/node_modules/vitest/', '/node_modules/fast-check/', '/node_modules/typescript/'];
    expect(loaded.filter((url) => unused.some((part) => url.includes(part)))).toEqual([]);
  });
});
