import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // test/container/ builds and runs images with podman as root: npm run test:container (vitest.container.config.ts).
    exclude: [...configDefaults.exclude, 'test/container/**'],
    environment: 'node',
    // Every mock answer of the run, checked against its provider's published description.
    globalSetup: ['test/support/wire-check-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
