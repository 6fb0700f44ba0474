import { z } from 'zod';
import { IDEMPOTENCY_CONFLICT_RETRY_AFTER_SECONDS } from '../kernel/errors.ts';
import { HTTP_STATUS } from './error-mapper.ts';
import type { RouteSpec } from './route.ts';

const errorEnvelope = z.object({
  status: z.literal(false),
  message: z.string(),
  error: z.object({
    code: z.string(),
    details: z.record(z.string(), z.unknown()).optional().describe("For validation_error: fields[] naming each offending field; for replay_failed: the replay's report, as a passing replay's data"),
  }),
});

const retryAfterHeader = {
  description: `On idempotency_conflict: seconds to wait before retrying the same request (${IDEMPOTENCY_CONFLICT_RETRY_AFTER_SECONDS}); the retry gets the stored answer once the first request completes`,
  schema: { type: 'integer', minimum: 0 },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path'): unknown[] {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    ...(property.description ? { description: property.description } : {}),
    schema: property,
  }));
}

// The /v1 family takes form-encoded bodies as well as JSON (app.ts parses both there); nested
// fields are bracketed, customer[account_number]=..., which is OpenAPI's deepObject style.
function requestContent(path: string, schema: Record<string, unknown>): Record<string, unknown> {
  const json = { 'application/json': { schema } };
  if (!path.startsWith('/v1/')) return json;
  const properties = Object.entries((schema.properties as Record<string, { type?: unknown }> | undefined) ?? {});
  const nested = properties.filter(([, property]) => property.type === 'object' || property.type === 'array');
  const encoding = Object.fromEntries(nested.map(([name]) => [name, { style: 'deepObject', explode: true }]));
  return { ...json, 'application/x-www-form-urlencoded': { schema, encoding } };
}

/** OpenAPI 3.1, generated from the same zod schemas the routes validate with. */
export function buildOpenApi(routes: RouteSpec[], info: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const headerParams: unknown[] = [];
    if (route.idempotent) {
      headerParams.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: true,
        description: 'Opaque key, 1-255 visible ASCII characters; replays return the stored response for 24 hours',
        schema: { type: 'string', maxLength: 255 },
      });
    }
    if (route.signed) {
      headerParams.push(
        {
          name: 'X-Service-Timestamp',
          in: 'header',
          required: true,
          description:
            'Unix time in seconds, within 300 s of the server for a request it has not seen; a byte-identical retry of a request it holds under the same Idempotency-Key is answered from the store whatever its timestamp',
          schema: { type: 'string', pattern: '^[0-9]+$' },
        },
        {
          name: 'X-Service-Signature',
          in: 'header',
          required: true,
          description: 'hex HMAC-SHA256(signing secret, `${timestamp}.${METHOD}.${path_and_query}.${idempotency_key}.${raw_body}`), with an empty idempotency_key when the request has none',
          schema: { type: 'string' },
        },
      );
    }
    const responses: Record<string, unknown> = {
      [String(route.response.status)]: {
        description: route.response.description,
        content: { [route.response.contentType ?? 'application/json']: { schema: jsonSchema(route.response.schema, 'output') } },
      },
    };
    for (const other of route.alternatives ?? []) {
      responses[String(other.status)] = {
        description: other.description,
        ...(other.headers ? { headers: Object.fromEntries(Object.entries(other.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) } : {}),
        content: { [other.contentType ?? 'application/json']: { schema: jsonSchema(other.schema, 'output') } },
      };
    }
    const byStatus = new Map<number, string[]>();
    // Any key may carry an IP allowlist; a route with an area refuses the other roles.
    const implied = ['unauthorized', 'validation_error', 'ip_not_allowed', ...(route.area ? (['role_forbidden'] as const) : [])] as const;
    for (const code of new Set([...implied, ...route.errors] as const)) {
      const status = HTTP_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: `Error: ${codes.join(', ')}`,
        ...(codes.includes('idempotency_conflict') ? { headers: { 'Retry-After': retryAfterHeader } } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      };
    }
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(route.scope ? { 'x-required-scope': route.scope } : {}),
      ...(route.area ? { 'x-role-area': route.area } : {}),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...headerParams],
      ...(route.body ? { requestBody: { required: true, content: requestContent(route.path, jsonSchema(route.body, 'input')) } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'railyard: Trading and Wallet Funding Service sandbox',
      version: info.version,
      description: 'Amounts are integer minor units (pesewas for GHS). Errors use the envelope {status:false, message, error:{code, details}}.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_... (sandbox) or sk_live_... key' } },
      schemas: { ErrorEnvelope: jsonSchema(errorEnvelope, 'output') },
    },
  };
}
