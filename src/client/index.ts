// railyard/client: a typed client of railyard's API, generated from /openapi.json (docs/testing.md).
export { createRailyardClient, railyardMiddleware, type RailyardClient, type RailyardClientOptions } from './railyard-client.ts';
export type { components, operations, paths } from './openapi-types.ts';
