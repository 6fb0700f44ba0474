// Run with: node --experimental-vm-modules node_modules/jest/bin/jest.js --config jest.config.mjs
// (Jest runs ES modules only with that Node flag; the files here are plain JavaScript, so no transform.)
export default {
  testEnvironment: 'node',
  testMatch: ['**/*.test.mjs'],
  transform: {},
  globalSetup: './global-setup.mjs',
  globalTeardown: './global-teardown.mjs',
};
