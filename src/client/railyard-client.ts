import { randomUUID } from 'node:crypto';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { signatureHeaders } from '../kernel/sign-request.ts';
import { IDEMPOTENT_OPERATIONS, SIGNED_OPERATIONS, type paths } from './openapi-types.ts';

// railyard/client: openapi-fetch over the types generated from /openapi.json, with railyard's
// own two rules added by a middleware: a fresh Idempotency-Key where the operation needs one
// (unless the caller gave one), and the request signature where the operation is signed.

export type RailyardClient = Client<paths>;

export interface RailyardClientOptions {
  /** Where railyard is: `http://localhost:4010` (the paths carry /api/v1 and /v1). */
  baseUrl: string;
  /** The API key, sent as Bearer. */
  key: string;
  /** The key's signing secret: signed operations (transfers, trade executes, /v1 payouts and bills) need it. */
  signingSecret?: string;
  /** Makes an Idempotency-Key for a request that needs one and has none (default: a random UUID). */
  idempotencyKey?: () => string;
  /** Real time in ms for the signature's timestamp (default Date.now). */
  now?: () => number;
  /** Another fetch (a test's, a proxy's). */
  fetch?: (request: Request) => Promise<Response>;
}

/** The middleware alone, for a client of your own making (createClient<paths>() plus use()). */
export function railyardMiddleware(options: Pick<RailyardClientOptions, 'signingSecret' | 'idempotencyKey' | 'now'>): Middleware {
  return {
    async onRequest({ request, schemaPath }) {
      const operation = `${request.method.toUpperCase()} ${schemaPath}`;
      if (IDEMPOTENT_OPERATIONS.has(operation) && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', (options.idempotencyKey ?? randomUUID)());
      }
      if (SIGNED_OPERATIONS.has(operation)) {
        if (!options.signingSecret) throw new Error(`${operation} is signed: give createRailyardClient the key's signingSecret`);
        const url = new URL(request.url);
        const signed = signatureHeaders(options.signingSecret, (options.now ?? Date.now)(), {
          method: request.method,
          pathAndQuery: `${url.pathname}${url.search}`,
          idempotencyKey: request.headers.get('idempotency-key') ?? undefined,
          rawBody: await request.clone().text(),
        });
        for (const [name, value] of Object.entries(signed)) request.headers.set(name, value);
      }
      return request;
    },
  };
}

/** A typed client of railyard's API that signs and adds Idempotency-Keys by itself. */
export function createRailyardClient(options: RailyardClientOptions): RailyardClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.key}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use(railyardMiddleware(options));
  return client;
}
