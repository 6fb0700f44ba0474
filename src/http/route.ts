import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import type { ApiKeyService, AuthContext } from '../auth/api-key-service.ts';
import type { RequestSignatureVerifier, SignatureVerdict } from '../auth/request-signature.ts';
import { roleAllows, type RouteArea } from '../auth/roles.ts';
import type { Scope } from '../auth/scopes.ts';
import { ForbiddenError, RailyardError, RoleForbiddenError, ValidationError, type ErrorCode, type FieldIssue } from '../kernel/errors.ts';
import { parseIdempotencyKey, requestHash, type IdempotencyClaim, type IdempotencyService } from '../idempotency/idempotency-service.ts';
import type { Store } from '../store/db.ts';
import { applyApiFaults, type ApiFaultPolicy } from './api-faults.ts';

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthContext;
  /** Present on idempotent routes: the service claims and completes it in its transactions. */
  idempotency: IdempotencyClaim | undefined;
  req: Request;
}

export interface RouteResult {
  status: number;
  body: unknown;
  /** A body that is not JSON (a CSV export): sent as it is, with this content type. */
  contentType?: string;
  headers?: Record<string, string>;
  /** A streamed answer (text/event-stream): the route writes it, after the status and headers, and ends it. */
  stream?: (res: Response, req: Request) => void;
}

/**
 * One declaration per endpoint: its schemas validate the request, give the handler its types
 * and generate /openapi.json; its flags say which checks run before the handler.
 */
export interface RouteSpec<B = unknown, Q = unknown, P = unknown> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** express syntax: /api/v1/charges/:id */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Scope the API key must hold; sandbox helpers need none but a test key. */
  scope?: Scope;
  /** The area a key's role must cover (auth/roles.ts); none: open to every role. */
  area?: RouteArea;
  signed?: boolean;
  idempotent?: boolean;
  sandboxOnly?: boolean;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** contentType: a non-JSON answer (text/csv); schema then describes the text. */
  response: { status: number; description: string; schema: z.ZodType; contentType?: string };
  /** Other successful answers (202 Accepted beside 200), for /openapi.json. */
  alternatives?: { status: number; description: string; schema: z.ZodType; contentType?: string; headers?: Record<string, string> }[];
  errors: ErrorCode[];
  handler(ctx: RouteContext<B, Q, P>): Promise<RouteResult>;
}

export function defineRoute<B = undefined, Q = undefined, P = undefined>(spec: RouteSpec<B, Q, P>): RouteSpec<any, any, any> {
  return spec;
}

export function fieldIssues(error: z.ZodError, root: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = [root === 'body' ? '' : root, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ field: [base, key].filter(Boolean).join('.'), message: 'unknown field' });
    } else {
      issues.push({ field: base || root, message: issue.message });
    }
  }
  return issues;
}

function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, part: 'body' | 'query' | 'path'): T {
  if (!schema) return undefined as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = fieldIssues(result.error, part);
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  throw new ValidationError(`Invalid request ${part === 'path' ? 'path' : part}: ${summary}`, fields);
}

export interface RouteDeps {
  store: Store;
  apiKeys: ApiKeyService;
  signatures: RequestSignatureVerifier;
  idempotency: IdempotencyService;
  /** The sandbox's fault rules on the merchant API (test keys; never on the sandbox's own controls). */
  faults?: ApiFaultPolicy;
}

export function mountRoutes(router: Router, routes: RouteSpec[], deps: RouteDeps): void {
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      const auth = await deps.apiKeys.authenticate(req.get('authorization'), req.ip, res.locals.lookedUpKey);
      res.locals.auth = auth; // whose request it is, for the requests inspector
      if (route.scope && !auth.scopes.includes(route.scope)) {
        throw new ForbiddenError(`This API key lacks the ${route.scope} scope`, { required_scope: route.scope });
      }
      if (!roleAllows(auth.role, route.area)) throw new RoleForbiddenError(auth.role, route.area!);
      if (route.sandboxOnly && auth.environment !== 'test') {
        throw new ForbiddenError('Sandbox helpers accept only sk_test_ keys', { environment: auth.environment });
      }
      if (deps.faults && !route.sandboxOnly && (await applyApiFaults(deps.faults, route, auth, req, res)) === 'stop') return;
      // A signed request the server already holds under its Idempotency-Key (same key, same
      // request) is a retry, answered from the store whatever the age of its timestamp.
      const claimOf = (key: string): IdempotencyClaim => ({
        scope: { environment: auth.environment, merchantId: auth.merchantId },
        key,
        requestHash: requestHash(req.method, req.path, req.body),
      });
      const keyHeader = req.get('idempotency-key');
      let verdict: SignatureVerdict = 'fresh';
      if (route.signed) {
        // Only a request that passes validation was ever stored, so one that does not (or whose
        // body could not even be hashed, such as one nested thousands deep) is no known retry.
        const knownRetry = route.idempotent && keyHeader ? async () => route.body?.safeParse(req.body).success !== false && deps.idempotency.holds(deps.store, claimOf(keyHeader)) : undefined;
        verdict = await deps.signatures.verify(
          auth,
          {
            method: req.method,
            pathAndQuery: req.originalUrl,
            idempotencyKey: keyHeader,
            rawBody: (req as Request & { rawBody?: string }).rawBody ?? '',
            timestamp: req.get('x-service-timestamp'),
            signature: req.get('x-service-signature'),
          },
          knownRetry,
        );
      }
      const params = parsePart(route.params, req.params, 'path');
      const query = parsePart(route.query, { ...req.query }, 'query');
      const body = parsePart(route.body, route.method === 'get' ? undefined : req.body, 'body');

      let idempotency: IdempotencyClaim | undefined;
      if (route.idempotent) {
        idempotency = claimOf(parseIdempotencyKey(keyHeader));
        const stored = await deps.idempotency.lookup(deps.store, idempotency);
        if (stored) {
          res.set('Idempotent-Replayed', 'true').status(stored.status).json(stored.body);
          return;
        }
      }
      // An old timestamp was let through only to be answered from the store; should the key have
      // expired in between, it is a new request after all, and needs a fresh signature.
      if (verdict === 'known_retry') throw deps.signatures.staleError();
      let result: RouteResult;
      try {
        result = await route.handler({ body, query, params, auth, idempotency, req });
      } catch (err) {
        // A twin of this request (same key and body) may have finished while this one ran, and
        // made this one fail (its quote consumed, say): answer as the twin did, or 409 if in flight.
        const stored = idempotency && err instanceof RailyardError ? await deps.idempotency.lookup(deps.store, idempotency) : null;
        if (!stored) throw err;
        res.set('Idempotent-Replayed', 'true').status(stored.status).json(stored.body);
        return;
      }
      if (result.headers) res.set(result.headers);
      if (result.stream) {
        res.status(result.status).set({ 'content-type': result.contentType ?? 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        res.flushHeaders();
        result.stream(res, req);
      } else if (result.contentType) res.status(result.status).type(result.contentType).send(result.body);
      else res.status(result.status).json(result.body);
    });
  }
}
