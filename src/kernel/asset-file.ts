import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Stylesheets and browser scripts are real files in an assets/ folder beside the module that
// serves them. `npm run build` copies every src/**/assets/ folder to the same place under dist/
// (scripts/copy-assets.mjs), so a module finds its assets beside itself whether it runs from src/
// (tsx) or from dist/ (node, the image).

const read = new Map<string, string>();

/** The text of an asset file, relative to the module's URL (import.meta.url); read once per process. */
export function readAssetFile(moduleUrl: string, relativePath: string): string {
  const url = new URL(relativePath, moduleUrl);
  const known = read.get(url.href);
  if (known !== undefined) return known;
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (err) {
    throw new Error(
      `The asset ${fileURLToPath(url)} is missing (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): build with \`npm run build\`, which copies src/**/assets/ into dist/.`,
    );
  }
  read.set(url.href, text);
  return text;
}
