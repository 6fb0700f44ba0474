import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../src/client/client-generator.ts';

// railyard/client's types are generated from /openapi.json and committed: a route or schema
// change without `npm run client:generate` fails here, before a merchant's build does.
describe('the committed client', () => {
  it('is what `npm run client:generate` makes of the OpenAPI document railyard serves now', { timeout: 60_000 }, async () => {
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    expect(committed === (await generateClientTypes()), 'src/client/openapi-types.ts is stale: run npm run client:generate and commit it').toBe(true);
  });

  it('fails on a document that differs from the committed one', { timeout: 60_000 }, async () => {
    const { servedOpenApi } = await import('../../src/client/client-generator.ts');
    const doc = await servedOpenApi();
    const paths = doc.paths as Record<string, unknown>;
    paths['/api/v1/refunds'] = { post: { operationId: 'createRefund', responses: { 201: { description: 'The refund' } } } };
    expect(await generateClientTypes(doc)).not.toBe(readFileSync(CLIENT_TYPES_FILE, 'utf8'));
  });
});
