import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/testing.md shows the example files whole; each block under an `example:` marker must be
// the file it names, as committed (and so as the example tests run it).
const ROOT = resolve(import.meta.dirname, '../..');
const doc = readFileSync(resolve(ROOT, 'docs/testing.md'), 'utf8');
const shown = [...doc.matchAll(/<!-- example:(\S+) -->\n```\w+\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, text: m[2]! }));

describe('the examples docs/testing.md shows', () => {
  it('shows the Vitest and Jest global setups', () => {
    expect(shown.map((s) => s.file)).toEqual([
      'examples/vitest/vitest.config.ts',
      'examples/vitest/global-setup.ts',
      'examples/vitest/railyard.ts',
      'examples/jest/jest.config.mjs',
      'examples/jest/global-setup.mjs',
      'examples/jest/global-teardown.mjs',
    ]);
  });

  for (const { file, text } of shown) {
    it(`shows ${file} as it is`, () => {
      expect(text).toBe(readFileSync(resolve(ROOT, file), 'utf8'));
    });
  }
});
