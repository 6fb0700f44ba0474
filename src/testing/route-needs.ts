// Which requests railyard wants signed and which need an Idempotency-Key, read from /openapi.json
// (the route table it is generated from): the headers X-Service-Signature and Idempotency-Key that
// an operation requires.

export interface RouteNeeds {
  signed: boolean;
  idempotent: boolean;
}

interface OpenApiOperation {
  parameters?: { name?: string; in?: string; required?: boolean }[];
}

const NOTHING: RouteNeeds = { signed: false, idempotent: false };

/** A lookup from a request (method, path with or without a query) to what it needs. */
export function routeNeedsOf(openapi: { paths?: Record<string, Record<string, unknown>> }): (method: string, path: string) => RouteNeeds {
  const table: { method: string; pattern: RegExp; params: number; needs: RouteNeeds }[] = [];
  for (const [template, operations] of Object.entries(openapi.paths ?? {})) {
    const segments = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`^${segments.join('[^/]+')}$`);
    for (const [method, operation] of Object.entries(operations)) {
      const required = new Set(((operation as OpenApiOperation).parameters ?? []).filter((p) => p.in === 'header' && p.required).map((p) => p.name?.toLowerCase()));
      const needs = { signed: required.has('x-service-signature'), idempotent: required.has('idempotency-key') };
      table.push({ method: method.toUpperCase(), pattern, params: segments.length, needs });
    }
  }
  // A literal path wins over a template that also matches it (/trades/quote before /trades/{id}).
  table.sort((a, b) => a.params - b.params);
  return (method, path) => {
    const bare = path.split('?')[0]!;
    const upper = method.toUpperCase();
    return table.find((r) => r.method === upper && r.pattern.test(bare))?.needs ?? NOTHING;
  };
}

/** The same lookup from the route table itself (in process, where /openapi.json comes from). */
export function routeNeedsOfRoutes(routes: readonly { method: string; path: string; signed?: boolean; idempotent?: boolean }[]): (method: string, path: string) => RouteNeeds {
  const paths: Record<string, Record<string, OpenApiOperation>> = {};
  for (const r of routes) {
    const header = (name: string) => ({ name, in: 'header', required: true });
    const parameters = [...(r.signed ? [header('X-Service-Signature')] : []), ...(r.idempotent ? [header('Idempotency-Key')] : [])];
    const template = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[template] = { ...paths[template], [r.method]: { parameters } };
  }
  return routeNeedsOf({ paths });
}
