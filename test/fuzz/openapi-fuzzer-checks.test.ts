// The fuzzer's checks, against a server that breaks each rule on purpose (a fuzzer that
// reports nothing proves something only if it reports these), and the state digest it uses.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFuzz, type FuzzReport } from '../../chaos/openapi-fuzzer/run-fuzz.ts';
import { DIGEST_EXCLUSIONS, storeDigest } from '../../chaos/openapi-fuzzer/store-digest.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

const envelope = (code: string) => ({ status: false, message: 'refused', error: { code } });
const errors = { 400: { description: 'Error' }, 401: { description: 'Error' } };
const op = (operationId: string, extra: Record<string, unknown> = {}) => ({
  operationId,
  responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['data'], properties: { data: { type: 'string' } } } } } }, ...errors },
  ...extra,
});

const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'broken on purpose', version: '0' },
  paths: {
    '/boom': { get: op('boom') },
    '/plain': { get: op('plain') },
    '/teapot': { get: op('teapot') },
    '/shape': { get: op('shape') },
    '/vague': { get: op('vague') },
    '/things/{id}': {
      get: op('getThing', {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', examples: ['thg_0000000000aaaaaaaaaa'] } }],
        responses: { 200: { description: 'ok' }, 404: { description: 'Error' }, ...errors },
      }),
    },
    '/hang': { get: op('hang') },
    '/writes': {
      post: op('writes', {
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } } },
      }),
    },
  },
};

let server: Server;
let writes = 0;
let report: FuzzReport;

beforeAll(async () => {
  const app = express();
  app.get('/boom', (_req, res) => void res.status(500).json(envelope('internal_error')));
  app.get('/plain', (_req, res) => void res.status(400).type('text/plain').send('bad request'));
  app.get('/teapot', (_req, res) => void res.status(418).json(envelope('not_found')));
  app.get('/shape', (_req, res) => void res.status(200).json({ status: true, message: 'ok', data: 5 }));
  app.get('/hang', () => {});
  app.get('/vague', (_req, res) => void res.status(400).json(envelope('validation_error')));
  app.get('/things/:id', (_req, res) => void res.status(404).json(envelope('not_found')));
  app.post('/writes', (_req, res) => {
    writes++;
    res.status(400).json(envelope('validation_error'));
  });
  app.use((_req, res) => void res.status(404).json(envelope('not_found')));
  server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  report = await runFuzz({ ...target(), requests: 150, digest: async () => `writes: ${writes}`, quiet: true });
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
});

function target() {
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: 'sk_test_x', secret: 'secret', document: DOCUMENT, seed: 7, timeoutMs: 100 };
}

const found = (check: string, operationId: string) => report.findings.find((f) => f.check === check && f.operationId === operationId);

describe('the fuzzer reports', () => {
  it('a 5xx other than 502 provider_unavailable', () => {
    expect(found('server_error', 'boom')?.detail).toBe('500 internal_error');
  });

  it('an error that is not the JSON envelope', () => {
    expect(found('not_envelope', 'plain')?.detail).toMatch(/content-type text\/plain/);
  });

  it('an error code answered with another status than the decisions table gives it', () => {
    expect(found('status_mismatch', 'teapot')?.detail).toBe('not_found is 404 in the decisions table, answered 418');
  });

  it('a validation_error that names no field', () => {
    expect(found('error_details', 'vague')?.detail).toBe('validation_error without details.fields naming the offending fields');
  });

  it('a 404 for a path id that does not name the id', () => {
    expect(found('error_details', 'getThing')?.detail).toBe('not_found from getThing without details.id naming the id in the path');
  });

  it('a status the operation does not document', () => {
    expect(found('undocumented_status', 'teapot')?.detail).toMatch(/^418 not_found is not among the documented 200, 400, 401/);
  });

  it('a success body that does not match the documented schema', () => {
    expect(found('response_schema', 'shape')?.detail).toMatch(/data must be string/);
  });

  it('a refused request that changed the state, naming what changed', () => {
    expect(found('state_changed', 'writes')?.detail).toMatch(/^answered 400 validation_error but the state changed: writes: \d+$/);
  });

  it('a refused request that changes the state again when replayed on a still server, when the server may work in the background', async () => {
    const writesOnly = { ...DOCUMENT, paths: { '/writes': DOCUMENT.paths['/writes'] } };
    const noisy = await runFuzz({ ...target(), document: writesOnly, requests: 8, digest: async () => `writes: ${writes}` });
    expect(noisy.findings.find((f) => f.check === 'state_changed' && f.operationId === 'writes')).toBeDefined();
    expect(noisy.unconfirmed).toBe(0);
  });

  it('a request that got no answer', () => {
    expect(found('no_response', 'hang')?.detail).toBe('no answer within 100 ms');
  });

  it('each problem once, with how often it was seen and the request that showed it first', () => {
    const boom = found('server_error', 'boom')!;
    expect(boom.count).toBeGreaterThan(1);
    expect(boom.seed).toBe(7);
    expect(boom.request.path).toMatch(/^\/boom/);
    expect(report.findings.filter((f) => f.check === 'server_error' && f.operationId === 'boom')).toHaveLength(1);
  });
});

describe('storeDigest', () => {
  const attempt = (refType: string) =>
    store.run("INSERT INTO rail_attempts (environment, ref_type, ref_id, provider, operation, outcome, created_at) VALUES ('test', ?, 'x_1', 'mtn-momo', 'resolve', 'accepted', 0)", [refType]);
  let store: SqliteStore;

  beforeAll(() => {
    store = new SqliteStore(':memory:');
  });

  afterAll(async () => {
    await store?.close();
  });

  it('stands while nothing is written, and names each table with its rows', async () => {
    const digest = storeDigest(store);
    const first = await digest();
    expect(await digest()).toBe(first);
    expect(first).toMatch(/^merchants: 0 rows, [0-9a-f]{16}$/m);
  });

  it('changes with any column of any row, on that table only', async () => {
    const digest = storeDigest(store);
    await store.run("INSERT INTO merchants (id, name, created_at) VALUES ('mch_1', 'Ama', 0)");
    const before = (await digest()).split('\n');
    await store.run("UPDATE merchants SET name = 'Ama Owusu' WHERE id = 'mch_1'");
    const after = (await digest()).split('\n');
    expect(after.filter((line) => !before.includes(line))).toEqual([expect.stringMatching(/^merchants: 1 rows, /)]);
  });

  it('is the same after a write that was rolled back', async () => {
    const digest = storeDigest(store);
    const before = await digest();
    await expect(
      store.transaction(async (tx) => {
        await tx.run("INSERT INTO merchants (id, name, created_at) VALUES ('mch_2', 'Kofi', 0)");
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await digest()).toBe(before);
  });

  it('leaves out only the rows DIGEST_EXCLUSIONS names, each with a reason', async () => {
    const digest = storeDigest(store);
    const before = await digest();
    await attempt('name_enquiry');
    expect(await digest()).toBe(before);
    await attempt('charge');
    expect(await digest()).not.toBe(before);
    for (const [table, { reason }] of Object.entries(DIGEST_EXCLUSIONS)) expect(reason.length, table).toBeGreaterThan(30);
  });
});
