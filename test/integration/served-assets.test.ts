// The dashboard's and the hosted checkout's stylesheets and scripts are real .css and .js files
// (where editors and linters see them), served as they are; `npm run build` copies them beside
// the compiled code, which is what `npm start` and the image run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAssetFile } from '../../src/kernel/asset-file.ts';
import { assetText, PROJECT_ROOT, SERVED_ASSETS } from '../support/served-assets.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
const tmp = mkdtempSync(join(tmpdir(), 'railyard-assets-'));

beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(async () => {
  await sb?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Every file under dir, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const copyAssets = (from: string, to: string) => spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts/copy-assets.mjs'), from, to], { encoding: 'utf8' });

describe('the stylesheets and scripts', () => {
  it('are the files under src/**/assets/, each served at its URL with its type and caching header, byte for byte', async () => {
    const files = filesUnder(join(PROJECT_ROOT, 'src')).filter((f) => f.split('/').includes('assets') && !f.endsWith('.ts'));
    expect(files).toEqual(SERVED_ASSETS.map((a) => relative('src', a.file)).sort());
    for (const asset of SERVED_ASSETS) {
      const res = await sb.http.get(asset.url);
      expect(res.status, asset.url).toBe(200);
      expect(res.headers['content-type'], asset.url).toBe(asset.contentType);
      expect(res.headers['cache-control'], asset.url).toBe(asset.cacheControl);
      expect(res.text, asset.url).toBe(assetText(asset));
      expect(res.text.length).toBeGreaterThan(1000);
    }
  });

  it('are copied by npm run build beside the compiled code: every src/**/assets/ folder to the same place under dist/', () => {
    expect((JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.build).toContain(
      'tsc -p tsconfig.build.json && node scripts/copy-assets.mjs',
    );
    const out = join(tmp, 'dist');
    // A file left from an earlier build of a folder goes: the folder is replaced whole.
    mkdirSync(join(out, 'dashboard/assets'), { recursive: true });
    writeFileSync(join(out, 'dashboard/assets/removed.css'), 'p {}');
    const run = copyAssets(join(PROJECT_ROOT, 'src'), out);
    expect(run.status, run.stderr).toBe(0);
    expect(filesUnder(out)).toEqual(SERVED_ASSETS.map((a) => relative('src', a.file)).sort());
    for (const asset of SERVED_ASSETS) expect(readFileSync(join(out, relative('src', asset.file)), 'utf8')).toBe(assetText(asset));
  });

  it('a missing one stops start-up with the file and the fix in the message', () => {
    expect(() => readAssetFile(import.meta.url, './assets/no-such.css')).toThrow(/assets\/no-such\.css is missing \(ENOENT\): build with `npm run build`/);
  });
});
