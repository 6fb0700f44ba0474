// The second half of `npm run build`: tsc compiles src/ to dist/ but leaves every other file
// behind, so this copies each src/**/assets/ folder (stylesheets, browser scripts) to the same
// place under dist/, where the compiled module that serves it looks (kernel/asset-file.ts).
// A folder is replaced whole, so an asset deleted from src/ does not linger in dist/.
//
//   node scripts/copy-assets.mjs [from=src] [to=dist]
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const from = resolve(root, process.argv[2] ?? 'src');
const to = resolve(root, process.argv[3] ?? 'dist');

/** Every folder named assets under dir. */
function assetFolders(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => (entry.name === 'assets' ? [join(dir, entry.name)] : assetFolders(join(dir, entry.name))));
}

for (const folder of assetFolders(from)) {
  const target = join(to, relative(from, folder));
  rmSync(target, { recursive: true, force: true });
  cpSync(folder, target, { recursive: true });
}
