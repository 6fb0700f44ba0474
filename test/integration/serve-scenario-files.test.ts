// What `railyard serve` says about its scenario files as it starts: each file in the one display
// form the API uses too, and what `railyard scenarios lint` finds in them, as warnings.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, startServe } from '../support/serve-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('railyard serve and its scenario files', { timeout: 60_000 }, () => {
  it('warns of what lint finds, and names files as the API does: relative inside the working directory, absolute outside', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-serve-'));
    const outside = join(dir, 'unmatchable.yaml');
    copyFileSync(resolve(ROOT, 'test/fixtures/lint/unmatchable.yaml'), outside);
    const port = await freePort();
    const serve = await startServe({ RAILYARD_DB: ':memory:', RAILYARD_SCENARIOS: `test/fixtures/lint/warnings.yaml,${outside}` }, port);
    try {
      const out = serve.output();
      expect(out).toMatch(/^warning: test\/fixtures\/lint\/warnings\.yaml:8:5: rule "0551234988 fails": never answers: .*\[shadowed\]$/m);
      expect(out).toMatch(new RegExp(`^warning: ${outside.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:6:22: rule "the customer who always fails": msisdn 024999000 .*\\[unmatchable\\]$`, 'm'));
      expect(out).toContain('warnings (test/fixtures/lint/warnings.yaml, 2 rules)');
      expect(out).toContain(`unmatchable (${outside}, 1 rules)`);
      const key = /sandbox key\s+(\S+)/.exec(out)![1]!;
      const listed = await fetch(`${serve.baseUrl}/api/v1/sandbox/scenarios`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<{ data: { file: string }[] }>);
      expect(listed.data.map((f: { file: string }) => f.file)).toEqual(['test/fixtures/lint/warnings.yaml', outside]);
    } finally {
      await serve.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
