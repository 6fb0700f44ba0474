import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// examples/jest without Jest, which this repository does not install: its global setup, global
// teardown and test file, unchanged, under Vitest's Jest-compatible globals (describe, it, expect,
// beforeAll, afterAll). jest.config.mjs itself is not exercised here.
const ROOT = resolve(import.meta.dirname, '../..');
export default defineConfig({
  root: resolve(ROOT, 'examples/jest'),
  test: {
    include: ['**/*.test.mjs'],
    globals: true,
    globalSetup: [resolve(import.meta.dirname, 'jest-global-setup.ts')],
  },
  resolve: { alias: { 'railyard/testing': resolve(ROOT, 'src/testing/index.ts') } },
});
