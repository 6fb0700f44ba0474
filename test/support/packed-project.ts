import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect } from 'vitest';

// A merchant's project with railyard installed from the tarball `npm pack` makes of this checkout
// (its dist/, as `npm run build` left it): dependencies from the npm cache, the registry only for
// what the cache lacks. test/e2e/packed-package.test.ts and ci-recipes.test.ts run in one.

export const ROOT = resolve(import.meta.dirname, '../..');

/** The version of a package this checkout has installed (the merchant's project gets the same). */
export const installedVersion = (name: string) => (JSON.parse(readFileSync(resolve(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The environment a step of the merchant's pipeline gets: without the outer npm's settings
 * (npm test sets npm_config_*) and Vitest's, with this Node first on PATH (what setup-node or a
 * node:24 image gives), and npm preferring its cache.
 */
export function pipelineEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(npm_|VITEST)/i.test(name) && name !== 'NODE_ENV') env[name] = value;
  return {
    ...env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_prefer_offline: 'true',
    ...extra,
  };
}

export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = pipelineEnv()) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 300_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}` };
}

/** Packs this checkout into `dir` and installs the tarball, and `devDependencies`, into `dir`/project. */
export function installPackedRailyard(dir: string, devDependencies: string[] = []): string {
  if (!existsSync(resolve(ROOT, 'dist/testing/index.js'))) throw new Error('dist/ is missing: npm run build');
  // --ignore-scripts: pack the built dist/ as it is (prepare would build it again).
  const packed = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], ROOT);
  expect(packed.code, packed.output).toBe(0);
  const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz'))!);
  const project = join(dir, 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'merchant-suite', private: true, type: 'module' }, null, 2)}\n`);
  const installed = run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...devDependencies], project);
  expect(installed.code, installed.output).toBe(0);
  return project;
}
