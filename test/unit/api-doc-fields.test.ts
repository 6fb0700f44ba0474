// docs/api.md stays true to the zod schemas: every request body in /openapi.json has a row in
// "Request bodies" listing each of its required fields (in any variant, nested ones as
// `parent.child`) and naming its optional ones; and every paged list is named in "Lists and pages".
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const apiDoc = readFileSync(resolve(import.meta.dirname, '../../docs/api.md'), 'utf8');

function section(title: string): string {
  const start = apiDoc.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/api.md has no "## ${title}" section`);
  const end = apiDoc.indexOf('\n## ', start + 1);
  return apiDoc.slice(start, end < 0 ? undefined : end);
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

/** Required and optional field names of a body, over all its variants; nested objects as parent.child. */
function fieldsOf(schema: JsonSchema, prefix = ''): { required: Set<string>; optional: Set<string> } {
  const required = new Set<string>();
  const optional = new Set<string>();
  for (const variant of schema.anyOf ?? schema.oneOf ?? [schema]) {
    for (const [name, property] of Object.entries(variant.properties ?? {})) {
      const field = prefix + name;
      if (variant.required?.includes(name)) required.add(field);
      else optional.add(field);
      for (const inner of property.anyOf ?? property.oneOf ?? [property]) {
        if (inner.type !== 'object' || !inner.properties) continue;
        const nested = fieldsOf(inner, `${field}.`);
        // A nested field is required only where its parent is.
        for (const n of nested.required) (variant.required?.includes(name) ? required : optional).add(n);
        for (const n of nested.optional) optional.add(n);
      }
    }
  }
  for (const field of required) optional.delete(field);
  return { required, optional };
}

interface Operation {
  id: string;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, unknown>;
  parameters?: { name: string }[];
}

let sb: TestSandbox;
let operations: Operation[];
beforeAll(async () => {
  sb = await startTestSandbox();
  const spec = (await sb.http.get('/openapi.json')).body as { paths: Record<string, Record<string, Omit<Operation, 'id'>>> };
  operations = Object.entries(spec.paths).flatMap(([path, byMethod]) => Object.entries(byMethod).map(([method, op]) => ({ ...op, id: `${method.toUpperCase()} ${path}` })));
});
afterAll(() => sb?.close());

/** The "Request bodies" table: `METHOD path` -> its required and optional cells. */
function bodyRows(): Map<string, { required: string; optional: string }> {
  const rows = new Map<string, { required: string; optional: string }>();
  for (const line of section('Request bodies').split('\n')) {
    const cells = /^\| `([A-Z]+ [^`]+)` \|(.*)\|(.*)\|$/.exec(line);
    if (cells) rows.set(cells[1]!, { required: cells[2]!, optional: cells[3]! });
  }
  return rows;
}

describe('docs/api.md', () => {
  it('lists every required field of every request body, and names the optional ones', () => {
    const rows = bodyRows();
    const gaps: string[] = [];
    let checked = 0;
    for (const op of operations) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (!schema) continue;
      const { required, optional } = fieldsOf(schema);
      if (required.size + optional.size === 0) continue; // an empty body: nothing to document
      checked++;
      const row = rows.get(op.id);
      if (!row) {
        gaps.push(`${op.id}: no row in "Request bodies"`);
        continue;
      }
      for (const field of required) if (!row.required.includes(`\`${field}\``)) gaps.push(`${op.id}: required \`${field}\` missing from the Required column`);
      for (const field of optional) if (!`${row.required}|${row.optional}`.includes(`\`${field}\``)) gaps.push(`${op.id}: optional \`${field}\` not named`);
    }
    expect(checked).toBeGreaterThan(20);
    expect(gaps).toEqual([]);
  });

  it('has no row for a request that takes no such body', () => {
    const withBodies = new Set(operations.filter((op) => op.requestBody).map((op) => op.id));
    expect([...bodyRows().keys()].filter((id) => !withBodies.has(id))).toEqual([]);
  });

  it('names bank_account_name as required for a bank transfer', () => {
    expect(bodyRows().get('POST /api/v1/transfers')?.required).toContain('`bank_account_name`');
  });

  it('documents meta.next_cursor and names every paged list', () => {
    const paging = section('Lists and pages');
    expect(paging).toContain('meta.next_cursor');
    expect(paging).toContain('`null` on the last page');
    const paged = operations.filter((op) => op.parameters?.some((p) => p.name === 'cursor')).map((op) => op.id.replace(/^GET /, ''));
    expect(paged.length).toBeGreaterThan(10);
    expect(paged.filter((path) => !paging.includes(`\`${path}\``))).toEqual([]);
  });
});
