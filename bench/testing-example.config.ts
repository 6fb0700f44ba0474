import { resolve } from 'node:path';
import { mergeConfig } from 'vitest/config';
import example from '../examples/vitest/vitest.config.ts';

// examples/vitest against the compiled package (dist/), as an installed railyard runs it: for
// npm run bench:testing.
const ROOT = resolve(import.meta.dirname, '..');
export default mergeConfig(example, {
  root: resolve(ROOT, 'examples/vitest'),
  resolve: { alias: { 'railyard/testing': resolve(ROOT, 'dist/testing/index.js') } },
});
