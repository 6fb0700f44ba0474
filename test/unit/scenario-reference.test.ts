import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scenarioJsonSchema } from '../../src/railyard-scenarios.ts';

// docs/scenarios.md's field reference is the QA's manual: every field the loader's zod schema
// accepts (read through the JSON Schema generated from it) must be named there.

const guide = readFileSync(new URL('../../docs/scenarios.md', import.meta.url), 'utf8');
const reference = guide.slice(guide.indexOf('## Field reference'), guide.indexOf('\n## ', guide.indexOf('## Field reference') + 1));

function fieldNames(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const part of schema) fieldNames(part, into);
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && value && typeof value === 'object') for (const name of Object.keys(value)) into.add(name);
      fieldNames(value, into);
    }
  }
  return into;
}

describe('the scenario field reference (docs/scenarios.md)', () => {
  it('names every field of the scenario schema, duplicate_after_seconds included', () => {
    const fields = [...fieldNames(scenarioJsonSchema())];
    expect(fields).toContain('duplicate_after_seconds');
    expect(fields.length).toBeGreaterThan(50);
    expect(fields.filter((name) => !reference.includes(`\`${name}\``))).toEqual([]);
  });
});
