import { ok, envelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { recordListRoute } from '../http/record-list-route.ts';
import type { PayoutService } from './payout-service.ts';
import { createBulkPayoutBody, createPayoutBody, MAX_BULK_ITEMS, payoutBulkSchema, payoutSchema } from './payouts.schemas.ts';

export interface PayoutRouteDeps {
  payouts: PayoutService;
}

export function payoutRoutes(deps: PayoutRouteDeps): RouteSpec[] {
  return [
    recordListRoute({
      path: '/v1/payouts',
      operationId: 'listPayouts',
      tag: 'Payouts',
      title: 'Payouts',
      statuses: ['pending', 'settled', 'failed'],
      item: payoutSchema,
      records: deps.payouts.settlement,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/payouts',
      operationId: 'createPayout',
      summary: 'Pay out cedis to a mobile wallet or a bank account (amount in major units)',
      description: 'Form-encoded or JSON. Reserves amount + fees at once; the payout resolves by callback or status poll: payout.settled, or payout.failed with the reservation refunded.',
      tag: 'Payouts',
      area: 'finance',
      scope: 'transfers:write',
      signed: true,
      idempotent: true,
      body: createPayoutBody,
      response: { status: 201, description: 'The payout, pending (or failed when the provider refused it outright)', schema: envelopeOf(payoutSchema) },
      errors: ['forbidden', 'invalid_signature', 'insufficient_funds', 'idempotency_conflict', 'idempotency_key_reused', 'provider_unavailable'],
      handler: ({ body, auth, idempotency }) => deps.payouts.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/payouts/bulk',
      operationId: 'createBulkPayout',
      summary: `Pay out up to ${MAX_BULK_ITEMS} payouts in one request, each its own payout`,
      description:
        'Each item is checked on its own: a valid item becomes a payout (its own po_ id, reserved and routed), an invalid one or one the wallet cannot cover is refused at its index with its error. The answer lists every index, so a partial failure is explicit; a retry with the same Idempotency-Key replays it and moves nothing.',
      tag: 'Payouts',
      area: 'finance',
      scope: 'transfers:write',
      signed: true,
      idempotent: true,
      body: createBulkPayoutBody,
      response: { status: 201, description: 'The batch: every item by index, with its payout or its error', schema: envelopeOf(payoutBulkSchema) },
      errors: ['forbidden', 'invalid_signature', 'idempotency_conflict', 'idempotency_key_reused'],
      handler: ({ body, auth, idempotency }) => deps.payouts.createBulk(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/payouts/bulk/:id',
      operationId: 'getBulkPayout',
      summary: "A bulk payout and its items' current statuses",
      tag: 'Payouts',
      scope: 'read',
      params: pathIdParams('id', 'payout_bulk', 'pob_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The batch', schema: envelopeOf(payoutBulkSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Bulk payout', await findById('payout_bulk', params.id, () => deps.payouts.getBulk(auth, params.id))),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/payouts/:id',
      operationId: 'getPayout',
      summary: 'The latest state of a payout',
      tag: 'Payouts',
      scope: 'read',
      params: pathIdParams('id', 'payout', 'po_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The payout', schema: envelopeOf(payoutSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Payout', await findById('payout', params.id, () => deps.payouts.get(auth, params.id))),
      }),
    }),
  ];
}
