import { ok, envelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { recordListRoute } from '../http/record-list-route.ts';
import type { CollectionService } from './collection-service.ts';
import { collectionSchema, createCollectionBody, submitOtpBody } from './collections.schemas.ts';

export interface CollectionRouteDeps {
  collections: CollectionService;
}

export function collectionRoutes(deps: CollectionRouteDeps): RouteSpec[] {
  return [
    recordListRoute({
      path: '/v1/collections',
      operationId: 'listCollections',
      tag: 'Collections',
      title: 'Collections',
      statuses: ['pending_approval', 'settled', 'failed'],
      item: collectionSchema,
      records: deps.collections.settlement,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/collections',
      operationId: 'createCollection',
      summary: 'Collect cedis by mobile money, card or bank direct debit',
      description:
        'Form-encoded or JSON. `amount` is a decimal string of major units ("110.50"). Answers 201 with status pending_approval: the customer approves (momo prompt, card OTP, bank mandate) and the provider reports; never treat the initiate response as success. A card declined outright answers 201 with status failed.',
      tag: 'Collections',
      area: 'finance',
      scope: 'collections:write',
      idempotent: true,
      body: createCollectionBody,
      response: { status: 201, description: 'The collection, pending_approval (or failed when the provider refused it outright)', schema: envelopeOf(collectionSchema) },
      errors: ['forbidden', 'idempotency_conflict', 'idempotency_key_reused', 'provider_unavailable'],
      handler: ({ body, auth, idempotency }) => deps.collections.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/collections/:id',
      operationId: 'getCollection',
      summary: 'The latest state of a collection',
      tag: 'Collections',
      scope: 'read',
      params: pathIdParams('id', 'collection', 'col_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The collection', schema: envelopeOf(collectionSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Collection', await findById('collection', params.id, () => deps.collections.get(auth, params.id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/collections/:id/otp',
      operationId: 'submitCollectionOtp',
      summary: "Completes a card collection's OTP step",
      description:
        'For a collection whose next_action is {type: "otp"}. The right OTP settles it; a wrong one fails it (failure_reason invalid_otp). A collection no longer pending is returned as it stands.',
      tag: 'Collections',
      area: 'finance',
      scope: 'collections:write',
      params: pathIdParams('id', 'collection', 'col_0000000000aaaaaaaaaa'),
      body: submitOtpBody,
      response: { status: 200, description: 'The collection after the OTP', schema: envelopeOf(collectionSchema) },
      errors: ['forbidden', 'not_found', 'provider_unavailable'],
      handler: async ({ params, body, auth }) => ({
        status: 200,
        body: ok('Collection', await findById('collection', params.id, () => deps.collections.submitOtp(auth, params.id, body.otp))),
      }),
    }),
    ...(['approve', 'decline'] as const).map((decision) =>
      defineRoute({
        method: 'post',
        path: `/api/v1/sandbox/collections/:id/${decision}`,
        operationId: decision === 'approve' ? 'sandboxApproveCollection' : 'sandboxDeclineCollection',
        summary: decision === 'approve' ? "Sandbox: the account holder approves a bank collection's mandate" : "Sandbox: the account holder declines a bank collection's mandate",
        description:
          'Test keys only. Tells the direct-debit mock, through its own sandbox endpoint, what the customer answered at their bank; the mock calls back at once. Without it, a debit is approved after rails.default_callback_seconds (unless its test account says otherwise).',
        tag: 'Sandbox',
        area: 'engineering',
        sandboxOnly: true,
        params: pathIdParams('id', 'collection', 'col_0000000000aaaaaaaaaa'),
        response: { status: 200, description: 'The collection after the answer', schema: envelopeOf(collectionSchema) },
        errors: ['forbidden', 'not_found', 'provider_unavailable'],
        handler: async ({ params, auth }) => ({
          status: 200,
          body: ok('Collection', await findById('collection', params.id, () => deps.collections.decideMandate(auth, params.id, decision))),
        }),
      }),
    ),
  ];
}
