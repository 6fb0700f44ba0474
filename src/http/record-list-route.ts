import { z } from 'zod';
import type { AuthContext } from '../auth/api-key-service.ts';
import { ok, listEnvelopeOf } from './envelope.ts';
import { pageQuery } from './pagination.ts';
import { defineRoute, type RouteSpec } from './route.ts';

interface Listable {
  list(auth: AuthContext, query: { cursor?: string; page_size?: number; status?: string }): Promise<{ items: unknown[]; nextCursor: string | null }>;
}

/** `GET /v1/<records>`: a merchant's collections, payouts or bills, newest first, cursor-paged, by status. */
export function recordListRoute(spec: {
  path: string;
  operationId: string;
  tag: string;
  /** Plural, for the summary and the message: "Collections". */
  title: string;
  statuses: readonly [string, ...string[]];
  item: z.ZodType;
  records: Listable;
}): RouteSpec {
  return defineRoute({
    method: 'get',
    path: spec.path,
    operationId: spec.operationId,
    summary: `${spec.title}, newest first, cursor-paginated`,
    tag: spec.tag,
    scope: 'read',
    query: z.strictObject({
      ...pageQuery,
      status: z
        .enum(spec.statuses, { error: `status must be one of ${spec.statuses.join(', ')}` })
        .optional()
        .describe('Only records in this status'),
    }),
    response: { status: 200, description: `A page of ${spec.title.toLowerCase()}; meta.next_cursor is null on the last page`, schema: listEnvelopeOf(spec.item) },
    errors: ['forbidden'],
    handler: async ({ query, auth }) => {
      const { items, nextCursor } = await spec.records.list(auth, query);
      return { status: 200, body: ok(spec.title, items, { next_cursor: nextCursor }) };
    },
  });
}
