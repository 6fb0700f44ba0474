import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runVitest } from './run-vitest.ts';

// examples/jest, the Jest global setup docs/testing.md shows. Jest is not installed here, so its
// hooks and test file run unchanged under Vitest's Jest-compatible globals (jest-example.config.ts).
describe('the Jest example', () => {
  it('passes its tests against the sandbox its globalSetup started, handed on through the environment', { timeout: 120_000 }, async () => {
    const run = await runVitest(resolve(import.meta.dirname, 'jest-example.config.ts'));
    expect(run.output).toMatch(/Tests\s+11 passed \(11\)/);
    expect(run.code, run.output).toBe(0);
  });
});
