import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Runs the README's curl tour verbatim (the sh blocks between the tour markers) against a real
// `railyard serve` process on the system clock, as a reader would after `npm start`.
const ROOT = resolve(import.meta.dirname, '../..');
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
const tour = readme.slice(readme.indexOf('<!-- tour:start -->'), readme.indexOf('<!-- tour:end -->'));
const blocks = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

const port = 20_000 + Math.floor(Math.random() * 20_000);
let server: ChildProcess;
const outputs: string[] = [];

beforeAll(async () => {
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    // Only the port, a throwaway store and a shorter network timeout (the failover step waits
    // for it) differ from plain `npm start`.
    env: { ...process.env, PORT: String(port), RAILYARD_DB: ':memory:', RAILYARD_RAIL_TIMEOUT_MS: '1000', RAILYARD_LOG_REQUESTS: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((done, fail) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('openapi')) done();
    });
    server.once('exit', (code) => fail(new Error(`serve exited ${code}: ${out}`)));
  });
  // Each block runs in its own shell, but later blocks use variables set by earlier ones, as
  // they do when pasted into one terminal: so run them cumulatively and keep each one's output.
  let script = 'set -e\n';
  blocks.forEach((block, i) => {
    script += `${block}\necho __BLOCK_${i}__\n`;
  });
  const run = spawnSync('bash', ['-c', script], { env: { ...process.env, BASE: `http://127.0.0.1:${port}` }, encoding: 'utf8', timeout: 90_000 });
  expect(run.status, run.stderr).toBe(0);
  let rest = run.stdout;
  for (let i = 0; i < blocks.length; i++) {
    const [head, tail = ''] = rest.split(`__BLOCK_${i}__\n`);
    outputs.push(head!);
    rest = tail;
  }
}, 100_000);

afterAll(() => {
  server?.kill('SIGTERM');
});

describe('the README tour', () => {
  it('has the blocks this test expects', () => {
    expect(blocks).toHaveLength(8);
  });

  it('funds the wallet', () => {
    expect(outputs[0]).toContain('{"status":true,"message":"Wallet balance","data":{"currency":"GHS","available":0,"reserved":0}}');
    expect(outputs[0]).toContain('"available":50000');
  });

  it('collects from the success number and settles on the callback', () => {
    expect(outputs[1]).toContain('"status":"pending_provider"');
    expect(outputs[1]).toContain('"status":"success"');
    expect(outputs[1]).toContain('"available":59900');
  });

  it('signs a transfer and reserves amount plus fee', () => {
    expect(outputs[2]).toContain('"object":"transfer","status":"pending"');
    expect(outputs[2]).toContain('"available":57800,"reserved":2100');
  });

  it('answers a byte-identical retry of the signed transfer from the store, moving nothing more', () => {
    expect(outputs[2]!).toMatch(/^idempotent-replayed: true\r?$/im);
    expect(outputs[2]!.match(/"available":57800,"reserved":2100/g)).toHaveLength(2);
  });

  it('resolves names, and 404s the no-match number', () => {
    expect(outputs[3]).toContain('"name":"Kwame Mensah"');
    expect(outputs[3]).toContain('"code":"not_found"');
    expect(outputs[3]).toContain('"name":"Ama Owusu"');
  });

  it('fails over to hubtel and answers 502 during an outage', () => {
    expect(outputs[4]).toContain('"msisdn":"233551234989","network":"MTN","provider":"hubtel"');
    expect(outputs[4]).toContain('"name":"mtn-momo"');
    expect(outputs[4]).toContain('"code":"provider_unavailable"');
  });

  it('lists transactions with a cursor', () => {
    expect(outputs[5]).toMatch(/"meta":\{"next_cursor":"[^"]+"\}/);
  });

  it('quotes and executes a signed buy that settles at once', () => {
    expect(outputs[6]).toMatch(/"object":"quote","status":"created","side":"buy","asset":"USDT","network":"TRC20"/);
    expect(outputs[6]).toMatch(/"object":"trade","status":"settled","side":"buy"/);
    expect(outputs[6]).toContain('"delivery_address":"TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"');
  });

  it('sells, deposits, and settles after the confirmations', () => {
    expect(outputs[7]).toMatch(/"status":"pending_payment","side":"sell","asset":"USDC","network":"SOL"/);
    expect(outputs[7]).toMatch(/"deposit_address":"[1-9A-HJ-NP-Za-km-z]{32,44}"/);
    expect(outputs[7]).toContain('"status":"pending_confirmation"');
    expect(outputs[7]).toMatch(/"status":"settled","side":"sell".*"settled_fiat_amount":\d+/);
  });
});
