import { defineConfig } from 'vitest/config';

// One railyard for the whole run, started by the global setup; each test makes its own merchant.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    globalSetup: ['./global-setup.ts'],
  },
});
