import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// railyard as a merchant's project gets it: `npm pack`, the tarball installed into an empty
// project (dependencies from the npm cache, the registry only for what the cache lacks), and the
// Vitest example run there against the installed package, never against this checkout. It packs
// the dist/ that `npm run build` (and so `npm ci`) made.

const ROOT = resolve(import.meta.dirname, '../..');
const version = (name: string) => (JSON.parse(readFileSync(resolve(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const tmp = mkdtempSync(join(tmpdir(), 'railyard-packed-'));
const project = join(tmp, 'merchant-suite');
let tarball = '';

/** The environment without the outer npm's settings (npm test sets npm_config_*), which would steer the inner npm. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm_|VITEST)/i.test(name) && name !== 'NODE_ENV') env[name] = value;
  return env;
}

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 300_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}` };
}

beforeAll(() => {
  if (!existsSync(resolve(ROOT, 'dist/testing/index.js'))) throw new Error('dist/ is missing: npm run build');
  // --ignore-scripts: pack the built dist/ as it is (prepare would build it again).
  const packed = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', tmp], ROOT);
  expect(packed.code, packed.output).toBe(0);
  tarball = join(tmp, readdirSync(tmp).find((f) => f.endsWith('.tgz'))!);
  cpSync(resolve(ROOT, 'examples/vitest'), project, { recursive: true });
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'merchant-suite', private: true, type: 'module' }, null, 2)}\n`);
  const installed = run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, `vitest@${version('vitest')}`, `@types/node@${version('@types/node')}`],
    project,
  );
  expect(installed.code, installed.output).toBe(0);
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
