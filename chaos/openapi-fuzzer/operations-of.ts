import type { Json } from './json-text.ts';

/** An id as railyard spells it (`chg_` and 20 characters); the prefix names the object. */
export const ID_PATTERN = /^([a-z]+)_[0-9a-z]{20}$/;

export interface Param {
  name: string;
  required: boolean;
  schema: Json;
}

export interface Operation {
  operationId: string;
  method: string;
  /** OpenAPI template: /api/v1/charges/{id} */
  path: string;
  pathParams: Param[];
  queryParams: Param[];
  body: Json | undefined;
  idempotent: boolean;
  /** Marked by its required X-Service-Signature header parameter. */
  signed: boolean;
  statuses: Set<number>;
  /** Success statuses documented with a body that is not JSON (a CSV export), with their media type. */
  textStatuses: Map<number, string>;
  /** Id prefixes it takes, in its path or body (`qt` for executeTrade): what to follow a creation with. */
  consumes: Set<string>;
}

export function operationsOf(document: Json): Operation[] {
  const resolve = (node: Json | undefined): Json | undefined => {
    let n = node;
    for (let hops = 0; n && typeof n.$ref === 'string' && hops < 10; hops++) {
      n = (n.$ref as string)
        .replace(/^#\//, '')
        .split('/')
        .reduce<any>((at, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return n;
  };
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
      const params = ((op.parameters ?? []) as Json[]).map((p) => resolve(p)!).filter(Boolean);
      const param = (p: Json): Param => ({ name: p.name, required: Boolean(p.required), schema: resolve(p.schema) ?? {} });
      const headers = params.filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase());
      operations.push({
        operationId: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map(param),
        queryParams: params.filter((p) => p.in === 'query').map(param),
        body: resolve(resolve(op.requestBody)?.content?.['application/json']?.schema),
        idempotent: headers.includes('idempotency-key'),
        signed: headers.includes('x-service-signature'),
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
        textStatuses: new Map(
          Object.entries<Json>(op.responses ?? {}).flatMap(([status, response]) => {
            const media = Object.keys(resolve(response)?.content ?? {});
            return media.length && !media.includes('application/json') ? [[Number(status), media[0]!.split(';')[0]!] as const] : [];
          }),
        ),
        consumes: new Set(
          [...params.filter((p) => p.in === 'path').map((p) => resolve(p.schema)?.examples?.[0]), ...patternsIn(resolve(resolve(op.requestBody)?.content?.['application/json']?.schema))].flatMap(
            (s) => (typeof s === 'string' && ID_PATTERN.test(s) ? [ID_PATTERN.exec(s)![1]!] : (/^\^([a-z]+)_\[0-9a-z\]\{20\}\$$/.exec(String(s))?.slice(1) ?? [])),
          ),
        ),
      });
    }
  }
  return operations;
}

function patternsIn(schema: unknown, depth = 0): string[] {
  if (!schema || typeof schema !== 'object' || depth > 6) return [];
  return Object.entries(schema).flatMap(([k, v]) => (k === 'pattern' && typeof v === 'string' ? [v] : patternsIn(v, depth + 1)));
}
