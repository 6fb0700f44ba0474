import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { pathIdParams } from '../http/find-by-id.ts';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../http/pagination.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { listRequestsQuery, requestEntrySchema, timelineSchema } from './inspector.schemas.ts';
import type { ObjectTimelineService } from './object-timeline.ts';
import type { RequestHistory } from './request-log.ts';

export function inspectorRoutes(deps: { requests: RequestHistory; timelines: ObjectTimelineService }): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/requests',
      operationId: 'listRequests',
      summary: 'The requests inspector: recent merchant requests and provider mock calls, newest first',
      description:
        "Every request to the merchant API made with this merchant's keys of this environment, and every call that reached a provider mock (with the scenario rule that decided it, or the nearest rule and the condition it failed). Kept in a ring of `inspector.max_requests` entries per environment: older entries make room for newer ones. On SQLite the ring is in memory (also capped at `inspector.max_bytes`), and a restart empties it; on PostgreSQL it is in the database, shared by every instance of a fleet. Never holds a header but the Idempotency-Key, nor a body. Mock calls tied to no object are shown to every merchant of the test environment. GET /api/v1/requests itself is not recorded.",
      tag: 'Inspector',
      scope: 'read',
      area: 'engineering',
      query: listRequestsQuery,
      response: { status: 200, description: 'A page of requests; meta.next_cursor is null on the last page', schema: listEnvelopeOf(requestEntrySchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const limit = query.page_size ?? DEFAULT_PAGE_SIZE;
        const page = await deps.requests.list(auth.environment, auth.merchantId, {
          limit,
          ...(query.cursor !== undefined ? { before: decodeCursor(query.cursor) } : {}),
          ...(query.kind !== undefined ? { kind: query.kind } : {}),
          ...(query.object_id !== undefined ? { objectId: query.object_id } : {}),
          ...(query.status !== undefined ? { status: query.status } : {}),
        });
        const nextCursor = page.more && page.last !== null ? encodeCursor(page.last) : null;
        return { status: 200, body: ok('Requests', page.items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/objects/:id/timeline',
      operationId: 'getObjectTimeline',
      summary: 'The whole life of an object: request, provider calls, callbacks, journals, events and webhook deliveries',
      description:
        'For a charge, transfer, trade, quote, collection, payout or bill of this merchant: the request that created it and its Idempotency-Key, each provider call (with failover and timeouts, and the mock calls with the scenario rule that decided them while the requests inspector still holds them), callbacks and status polls, late successes of abandoned providers (reversed), ledger journals with their postings, status changes, events, and each webhook delivery attempt (status, latency, response excerpt).',
      tag: 'Inspector',
      scope: 'read',
      params: pathIdParams('id', 'object', 'chg_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The timeline, oldest entry first', schema: envelopeOf(timelineSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Timeline', await deps.timelines.timeline(auth, params.id)) }),
    }),
  ];
}
