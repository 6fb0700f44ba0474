// The third step of `npm run build`: the declarations tsc writes keep the sources' `.ts` import
// specifiers (rewriteRelativeImportExtensions rewrites only the JavaScript). A project that
// installs railyard resolves them against dist/, where the files are .js and .d.ts, so each
// relative `.ts` specifier in dist/**/*.d.ts becomes `.js`.
//
//   node scripts/declaration-imports.mjs [dist]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = resolve(fileURLToPath(new URL('..', import.meta.url)), process.argv[2] ?? 'dist');
const SPECIFIER = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;

for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(SPECIFIER, '$1$2.js$3');
  if (rewritten !== text) writeFileSync(file, rewritten);
}
