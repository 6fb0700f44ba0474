import { Validator } from '@seriousme/openapi-schema-validator';
// ajv arrives with @seriousme/openapi-schema-validator; it is an independent JSON Schema
// 2020-12 validator, so real responses are checked against what the document says, not
// against the zod schemas that generated it.
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteSpec } from '../../src/http/route.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// Both are CommonJS with `exports.default`; under NodeNext the default import is the module.
type Ajv2020Class = typeof import('ajv/dist/2020.js').default;
type AddFormats = typeof import('ajv-formats').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

type Json = Record<string, any>;

const DOC_ID = 'https://railyard.local/openapi.json';

/** express `/api/v1/charges/:id` → OpenAPI `/api/v1/charges/{id}`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');
/** RFC 6901 escaping, for a JSON pointer into the document. */
const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

let sb: TestSandbox;
let doc: Json;
let ajv: InstanceType<Ajv2020Class>;

const operation = (route: Pick<RouteSpec, 'method' | 'path'>): Json | undefined => doc.paths?.[openApiPath(route.path)]?.[route.method];
const headerParams = (op: Json): Json[] => (op.parameters ?? []).filter((p: Json) => p.in === 'header');
const routeFor = (method: RouteSpec['method'], path: string): RouteSpec => {
  const route = sb.ry.routes.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no ${method.toUpperCase()} ${path} route`);
  return route;
};

/**
 * Validates a real response body against the schema the document declares for that operation
 * and status, resolving `$ref`s against the document itself (OpenAPI 3.1 semantics).
 */
function expectConformsToDocument(method: RouteSpec['method'], path: string, status: number, body: unknown): void {
  const ref = DOC_ID + pointer('paths', openApiPath(path), method, 'responses', String(status), 'content', 'application/json', 'schema');
  const validate = ajv.getSchema(ref);
  expect(validate, `the document declares a schema for ${method.toUpperCase()} ${path} ${status}`).toBeTypeOf('function');
  const valid = validate!(body);
  expect(validate!.errors ?? [], `${method.toUpperCase()} ${path} ${status} body: ${JSON.stringify(body)}`).toEqual([]);
  expect(valid).toBe(true);
}

beforeAll(async () => {
  sb = await startTestSandbox();
  const res = await sb.http.get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.body;

  ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  // The whole document under one id: `#/components/...` refs resolve against the document root.
  ajv.addSchema({ ...doc, $id: DOC_ID });
});

afterAll(async () => {
  await sb?.close();
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document according to an independent validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it('documents every route the app serves, with its operationId, and nothing else', () => {
    const served = sb.ry.routes.map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)} ${r.operationId}`).sort();
    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if (['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'].includes(method)) {
          documented.push(`${method.toUpperCase()} ${path} ${(op as Json).operationId}`);
        }
      }
    }
    expect(served.length).toBeGreaterThan(0);
    expect(documented.sort()).toEqual(served);
    const ids = sb.ry.routes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every route with a body a JSON requestBody schema, and none to the others', () => {
    for (const route of sb.ry.routes) {
      const op = operation(route)!;
      const where = `${route.method.toUpperCase()} ${route.path}`;
      if (route.body) {
        expect(op.requestBody?.required, where).toBe(true);
        const schema = op.requestBody?.content?.['application/json']?.schema;
        expect(schema, where).toBeTypeOf('object');
        expect(Object.keys(schema ?? {}).length, where).toBeGreaterThan(0);
      } else {
        expect(op.requestBody, where).toBeUndefined();
      }
    }
    const posts = sb.ry.routes.filter((r) => r.method === 'post');
    expect(posts.some((r) => r.body)).toBe(true);
  });

  it('documents the Idempotency-Key and request-signature headers exactly where they are enforced', () => {
    const idempotent = sb.ry.routes.filter((r) => r.idempotent);
    const signed = sb.ry.routes.filter((r) => r.signed);
    expect(idempotent.map((r) => r.path)).toContain('/api/v1/charges');
    expect(signed.map((r) => r.path)).toContain('/api/v1/transfers');
    for (const route of sb.ry.routes) {
      const where = `${route.method.toUpperCase()} ${route.path}`;
      const headers = new Map(headerParams(operation(route)!).map((p) => [p.name as string, p]));
      expect(headers.has('Idempotency-Key'), where).toBe(Boolean(route.idempotent));
      expect(headers.has('X-Service-Timestamp'), where).toBe(Boolean(route.signed));
      expect(headers.has('X-Service-Signature'), where).toBe(Boolean(route.signed));
      for (const header of headers.values()) {
        expect(header.required, `${where} ${header.name}`).toBe(true);
        expect(header.schema?.type, `${where} ${header.name}`).toBe('string');
      }
    }
  });

  it('documents path parameters for every templated path', () => {
    for (const route of sb.ry.routes) {
      const names = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
      const params = (operation(route)!.parameters ?? []).filter((p: Json) => p.in === 'path');
      expect(params.map((p: Json) => p.name).sort(), route.path).toEqual(names.sort());
      for (const p of params) expect(p.required, `${route.path} ${p.name}`).toBe(true);
    }
  });

  it('documents the success and error responses of POST /api/v1/charges', () => {
    const op = operation(routeFor('post', '/api/v1/charges'))!;
    expect(op.operationId).toBe('createCharge');
    for (const status of ['201', '400', '401', '403', '409', '422', '502']) {
      expect(op.responses, `response ${status}`).toHaveProperty(status);
      expect(op.responses[status].description, `response ${status}`).toBeTruthy();
      expect(op.responses[status].content?.['application/json']?.schema, `response ${status}`).toBeTypeOf('object');
    }
    for (const status of ['400', '401', '403', '409', '422', '502']) {
      expect(op.responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    }
  });

  it('defines the error envelope component that every error response points at', () => {
    const envelope = doc.components?.schemas?.ErrorEnvelope;
    expect(envelope).toBeTypeOf('object');
    expect(envelope.type).toBe('object');
    expect(envelope.required).toEqual(expect.arrayContaining(['status', 'message', 'error']));
    expect(envelope.properties.status).toMatchObject({ const: false });
    expect(envelope.properties.error.required).toEqual(expect.arrayContaining(['code']));

    const refs = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.add(v);
          else walk(v);
        }
      }
    };
    walk(doc.paths);
    // Every $ref in the paths resolves inside the document.
    for (const ref of refs) expect(ajv.getSchema(DOC_ID + ref), ref).toBeTypeOf('function');
    for (const route of sb.ry.routes) {
      for (const [status, response] of Object.entries(operation(route)!.responses as Json)) {
        if (Number(status) >= 400) {
          expect((response as Json).content['application/json'].schema, `${route.path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        }
      }
    }
  });
});

describe('real responses conform to the schemas the document declares', () => {
  it('GET /api/v1/wallet', async () => {
    const res = await sb.get('/api/v1/wallet');
    expect(res.status).toBe(200);
    expectConformsToDocument('get', '/api/v1/wallet', 200, res.body);
    routeFor('get', '/api/v1/wallet').response.schema.parse(res.body);
  });

  it('POST /api/v1/charges, then GET /api/v1/transactions and GET /api/v1/charges/{id}', async () => {
    const charges = routeFor('post', '/api/v1/charges');
    const res = await sb.post('/api/v1/charges', { amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: `openapi-conformance-${Date.now()}` });
    expect(res.status, JSON.stringify(res.body)).toBe(charges.response.status);
    expectConformsToDocument('post', '/api/v1/charges', charges.response.status, res.body);
    charges.response.schema.parse(res.body);
    const id: string = res.body.data.id;

    const list = await sb.get('/api/v1/transactions');
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: Json) => t.id)).toContain(id);
    expectConformsToDocument('get', '/api/v1/transactions', 200, list.body);
    routeFor('get', '/api/v1/transactions').response.schema.parse(list.body);

    const one = await sb.get(`/api/v1/charges/${id}`);
    expect(one.status).toBe(200);
    expectConformsToDocument('get', '/api/v1/charges/:id', 200, one.body);
    routeFor('get', '/api/v1/charges/:id').response.schema.parse(one.body);
  });

  it('error responses match the documented error envelope', async () => {
    const unauthorized = await sb.http.get('/api/v1/wallet');
    expect(unauthorized.status).toBe(401);
    expectConformsToDocument('get', '/api/v1/wallet', 401, unauthorized.body);

    const invalid = await sb.post('/api/v1/charges', { amount: -1, currency: 'USD', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: `openapi-invalid-${Date.now()}` });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('validation_error');
    expectConformsToDocument('post', '/api/v1/charges', 400, invalid.body);

    const missing = await sb.get('/api/v1/charges/chg_00000000000000000000');
    expect(missing.status).toBe(404);
    expectConformsToDocument('get', '/api/v1/charges/:id', 404, missing.body);
  });

  it('the document-derived validator rejects a body that breaks the schema', () => {
    const validate = ajv.getSchema(DOC_ID + pointer('paths', '/api/v1/wallet', 'get', 'responses', '200', 'content', 'application/json', 'schema'))!;
    expect(validate({ status: true, message: 'Wallet balance', data: { currency: 'GHS', available: 1.5, reserved: 0 } })).toBe(false);
    expect(validate({ status: true, message: 'Wallet balance', data: { currency: 'USD', available: 0, reserved: 0 } })).toBe(false);
  });
});
