import { resolve } from 'node:path';
import { mergeConfig } from 'vitest/config';
import example from '../../examples/vitest/vitest.config.ts';

// examples/vitest as it is, with railyard/testing taken from this checkout's sources (a merchant's
// project has the package installed; test/e2e/packed-package.test.ts runs it that way).
const ROOT = resolve(import.meta.dirname, '../..');
export default mergeConfig(example, {
  root: resolve(ROOT, 'examples/vitest'),
  resolve: { alias: { 'railyard/testing': resolve(ROOT, 'src/testing/index.ts') } },
});
