import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';

// The README's curl tour (the sh blocks between the tour markers), run verbatim against a server:
// test/e2e/readme-tour.test.ts runs it against `railyard serve`, test/container/ against the image.
const ROOT = resolve(import.meta.dirname, '../..');
const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
const tour = readme.slice(readme.indexOf('<!-- tour:start -->'), readme.indexOf('<!-- tour:end -->'));
export const tourBlocks: string[] = [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

/**
 * The server the tour runs against needs what `npm start` has plus a shorter network timeout
 * (RAILYARD_RAIL_TIMEOUT_MS; the failover step waits for it) and an empty store.
 */
export const TOUR_SERVER_ENV = { RAILYARD_RAIL_TIMEOUT_MS: '1000' } as const;

/** Runs the blocks against `base` and answers each block's output. */
export function runTour(base: string): string[] {
  // Each block runs in its own shell, but later blocks use variables set by earlier ones, as
  // they do when pasted into one terminal: so run them cumulatively and keep each one's output.
  let script = 'set -e\n';
  tourBlocks.forEach((block, i) => {
    script += `${block}\necho __BLOCK_${i}__\n`;
  });
  const run = spawnSync('bash', ['-c', script], { env: { ...process.env, BASE: base }, encoding: 'utf8', timeout: 90_000 });
  expect(run.status, run.stderr).toBe(0);
  const outputs: string[] = [];
  let rest = run.stdout;
  for (let i = 0; i < tourBlocks.length; i++) {
    const [head, tail = ''] = rest.split(`__BLOCK_${i}__\n`);
    outputs.push(head!);
    rest = tail;
  }
  return outputs;
}

/** What each step of the tour must print, as [step, check of the blocks' outputs]. */
export const tourExpectations: [string, (outputs: string[]) => void][] = [
  [
    'has the blocks this test expects',
    () => {
      expect(tourBlocks).toHaveLength(8);
    },
  ],
  [
    'funds the wallet',
    (o) => {
      expect(o[0]).toContain('{"status":true,"message":"Wallet balance","data":{"currency":"GHS","available":0,"reserved":0}}');
      expect(o[0]).toContain('"available":50000');
    },
  ],
  [
    'collects from the success number and settles on the callback',
    (o) => {
      expect(o[1]).toContain('"status":"pending_provider"');
      expect(o[1]).toContain('"status":"success"');
      expect(o[1]).toContain('"available":59900');
    },
  ],
  [
    'signs a transfer and reserves amount plus fee',
    (o) => {
      expect(o[2]).toContain('"object":"transfer","status":"pending"');
      expect(o[2]).toContain('"available":57800,"reserved":2100');
    },
  ],
  [
    'answers a byte-identical retry of the signed transfer from the store, moving nothing more',
    (o) => {
      expect(o[2]!).toMatch(/^idempotent-replayed: true\r?$/im);
      expect(o[2]!.match(/"available":57800,"reserved":2100/g)).toHaveLength(2);
    },
  ],
  [
    'resolves names, and 404s the no-match number',
    (o) => {
      expect(o[3]).toContain('"name":"Kwame Mensah"');
      expect(o[3]).toContain('"code":"not_found"');
      expect(o[3]).toContain('"name":"Ama Owusu"');
    },
  ],
  [
    'fails over to hubtel and answers 502 during an outage',
    (o) => {
      expect(o[4]).toContain('"msisdn":"233551234989","network":"MTN","provider":"hubtel"');
      expect(o[4]).toContain('"name":"mtn-momo"');
      expect(o[4]).toContain('"code":"provider_unavailable"');
    },
  ],
  [
    'lists transactions with a cursor',
    (o) => {
      expect(o[5]).toMatch(/"meta":\{"next_cursor":"[^"]+"\}/);
    },
  ],
  [
    'quotes and executes a signed buy that settles at once',
    (o) => {
      expect(o[6]).toMatch(/"object":"quote","status":"created","side":"buy","asset":"USDT","network":"TRC20"/);
      expect(o[6]).toMatch(/"object":"trade","status":"settled","side":"buy"/);
      expect(o[6]).toContain('"delivery_address":"TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"');
    },
  ],
  [
    'sells, deposits, and settles after the confirmations',
    (o) => {
      expect(o[7]).toMatch(/"status":"pending_payment","side":"sell","asset":"USDC","network":"SOL"/);
      expect(o[7]).toMatch(/"deposit_address":"[1-9A-HJ-NP-Za-km-z]{32,44}"/);
      expect(o[7]).toContain('"status":"pending_confirmation"');
      expect(o[7]).toMatch(/"status":"settled","side":"sell".*"settled_fiat_amount":\d+/);
    },
  ],
];
