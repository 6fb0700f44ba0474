import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { installedVersion, installPackedRailyard, ROOT, run } from '../support/packed-project.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// railyard as a merchant's project gets it: `npm pack`, the tarball installed into an empty
// project (dependencies from the npm cache, the registry only for what the cache lacks), and the
// Vitest example run there against the installed package, never against this checkout. It packs
// the dist/ that `npm run build` (and so `npm ci`) made.

const tmp = mkdtempSync(join(tmpdir(), 'railyard-packed-'));
let project = '';

beforeAll(() => {
  project = installPackedRailyard(tmp, [`vitest@${installedVersion('vitest')}`, `@types/node@${installedVersion('@types/node')}`]);
  cpSync(resolve(ROOT, 'examples/vitest'), project, { recursive: true });
}, 320_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the packed package', () => {
  it('has an exports map for the library, railyard/testing and railyard/client, with types, and the railyard bin', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/railyard/package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
      bin: Record<string, string>;
    };
    expect(Object.keys(manifest.exports)).toEqual(['.', './testing', './client', './package.json']);
    for (const entry of ['.', './testing', './client']) {
      const { types, default: code } = manifest.exports[entry]!;
      expect(existsSync(join(project, 'node_modules/railyard', types)), types).toBe(true);
      expect(existsSync(join(project, 'node_modules/railyard', code)), code).toBe(true);
    }
    expect(manifest.bin).toEqual({ railyard: 'bin/railyard.mjs' });
    expect(existsSync(join(project, 'node_modules/railyard/scenarios/sandbox.yaml'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/railyard/src'))).toBe(false);
  });

  it('runs the Vitest example against the installed package: 50 tests, each with its own merchant', () => {
    const suite = run(process.execPath, [join(project, 'node_modules/vitest/vitest.mjs'), 'run'], project);
    expect(suite.output).toMatch(/Tests\s+50 passed \(50\)/);
    expect(suite.code, suite.output).toBe(0);
  });

  it('type-checks a merchant file that uses railyard/testing and railyard/client from their declarations', () => {
    writeFileSync(
      join(project, 'uses-railyard.ts'),
      `import { startRailyard, type RailyardMerchant } from 'railyard/testing';
import { createRailyardClient } from 'railyard/client';

export async function pay(shop: RailyardMerchant): Promise<number> {
  const charge = await shop.post('/api/v1/charges', { amount: 100, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
  return charge.status;
}

export async function tour(): Promise<string | undefined> {
  const sandbox = await startRailyard();
  const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key, signingSecret: sandbox.signingSecret });
  const { data } = await client.GET('/api/v1/wallet');
  // Typed, not any: were the declarations unresolved, this expectation would go unused (TS2578).
  // @ts-expect-error the currency is a string
  const wrong: number = data?.data.currency;
  await sandbox.stop();
  return wrong === 0 ? undefined : data?.data.currency;
}
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
        files: ['uses-railyard.ts'],
      }),
    );
    const checked = run(process.execPath, [resolve(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(project, 'tsconfig.json')], project);
    expect(checked.code, checked.output).toBe(0);
  });

  it('gives the railyard command', () => {
    const help = run(process.execPath, [join(project, 'node_modules/railyard/bin/railyard.mjs'), 'help'], project);
    expect(help.code, help.output).toBe(0);
    expect(help.output).toContain('railyard');
    expect(help.output).toMatch(/serve/);
  });
});
