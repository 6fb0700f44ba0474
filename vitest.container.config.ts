import { defineConfig } from 'vitest/config';

// The container and compose tests (npm run test:container, npm run test:compose): they build and
// run images with podman as root, so they are kept out of `npm test`; .ci/run runs them after it.
export default defineConfig({
  test: {
    include: ['test/container/**/*.test.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 900_000,
    pool: 'forks',
    // One stack at a time: they share the machine's ports and CPU.
    fileParallelism: false,
  },
});
