// npm run bench:testing
//
// The figures of railyard/testing (issue 25), measured on the compiled package (dist/, as a
// merchant's project installs it; run `npm run build` first):
//   - startRailyard() to the first answer, in fresh processes (the import reported beside it) and
//     again in a warm one;
//   - newMerchant();
//   - the Vitest example suite (examples/vitest: 50 tests, each with its own merchant), whole run.
// Run on demand, never in CI tests: the machine is shared, so the figures vary from run to run.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = resolve(import.meta.dirname, '..');
const TESTING = resolve(ROOT, 'dist/testing/index.js');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** One fresh process: import railyard/testing, start a sandbox, ask it one thing. */
const COLD = `
const t0 = performance.now();
const { startRailyard } = await import(${JSON.stringify(TESTING)});
const t1 = performance.now();
const sandbox = await startRailyard();
await sandbox.get('/healthz');
const t2 = performance.now();
await sandbox.stop();
process.stdout.write(JSON.stringify({ importMs: t1 - t0, startMs: t2 - t1 }));
`;

async function main(): Promise<void> {
  if (!existsSync(TESTING)) throw new Error('dist/testing/index.js is missing: run npm run build first');
  const runs = Number(process.env.RUNS ?? 5);

  const cold = Array.from({ length: runs }, () => JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', COLD], { encoding: 'utf8' })) as { importMs: number; startMs: number });

  const { startRailyard } = (await import(TESTING)) as typeof import('../src/testing/index.ts');
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const s = await startRailyard();
    await s.get('/healthz');
    warm.push(performance.now() - t0);
    await s.stop();
  }

  const sandbox = await startRailyard();
  const merchants: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now();
    await sandbox.newMerchant();
    merchants.push(performance.now() - t0);
  }
  await sandbox.stop();

  // The example suite against dist/, as an installed package runs it.
  const config = resolve(ROOT, 'bench/testing-example.config.ts');
  const suites: { wallMs: number; testsMs: number }[] = [];
  for (let i = 0; i < Math.min(runs, 3); i++) {
    const t0 = performance.now();
    const run = spawnSync(process.execPath, [resolve(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', config], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    const wallMs = performance.now() - t0;
    if (run.status !== 0) throw new Error(`the example suite failed:\n${run.stdout}\n${run.stderr}`);
    const testsMs = Number(/checkout\.test\.ts \(50 tests\)\s+(\d+)ms/.exec(run.stdout)?.[1] ?? Number.NaN);
    suites.push({ wallMs, testsMs });
  }

  const rows = [
    [`startRailyard() to first answer, fresh process (median of ${runs})`, ms(median(cold.map((c) => c.startMs))), '< 300 ms'],
    ['  import of railyard/testing in that process (median)', ms(median(cold.map((c) => c.importMs))), ''],
    [`startRailyard() to first answer, warm process (median of ${runs})`, ms(median(warm)), '< 300 ms'],
    ['newMerchant() (median of 200)', ms(median(merchants)), '< 20 ms'],
    ['newMerchant() (p95 of 200)', ms(p95(merchants)), '< 20 ms'],
    ['Vitest example, 50 tests: whole `vitest run` (median)', ms(median(suites.map((s) => s.wallMs))), '< 5 s'],
    ['Vitest example, 50 tests: the test file (median)', ms(median(suites.map((s) => s.testsMs))), ''],
  ];
  process.stdout.write(`| Measure | Figure | Target |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
}

await main();
