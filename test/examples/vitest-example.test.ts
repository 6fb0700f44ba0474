import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runVitest } from './run-vitest.ts';

// examples/vitest, the one docs/testing.md shows, run as a merchant runs it: its global setup
// starts railyard in process and its 50 tests each make a merchant of their own.
describe('the Vitest example', () => {
  it('passes its 50 tests against a sandbox its global setup started', { timeout: 120_000 }, async () => {
    const run = await runVitest(resolve(import.meta.dirname, 'vitest-example.config.ts'));
    expect(run.output).toMatch(/Tests\s+50 passed \(50\)/);
    expect(run.code, run.output).toBe(0);
  });
});
