import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { PaymentLinkService } from './payment-link-service.ts';
import { createPaymentLinkBody, listPaymentLinksQuery, paymentLinkSchema } from './payment-links.schemas.ts';

export interface PaymentLinkRouteDeps {
  links: PaymentLinkService;
}

const linkId = () => pathIdParams('id', 'payment link', 'plink_0000000000aaaaaaaaaa');

export function paymentLinkRoutes(deps: PaymentLinkRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/payment_links',
      operationId: 'createPaymentLink',
      summary: 'Create a shareable checkout link for a fixed or open amount',
      description:
        'Form-encoded or JSON. Omit `amount` for an open amount the customer types on the hosted page. The answer carries `url` (`<base_url>/pay/<slug>`), the hosted checkout page to share. Each payment on it is a /v1 collection with `payment_link_id` set.',
      tag: 'Payment links',
      area: 'finance',
      scope: 'collections:write',
      idempotent: true,
      body: createPaymentLinkBody,
      response: { status: 201, description: 'The link, active', schema: envelopeOf(paymentLinkSchema) },
      errors: ['forbidden', 'idempotency_conflict', 'idempotency_key_reused'],
      handler: ({ body, auth, idempotency }) => deps.links.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/payment_links',
      operationId: 'listPaymentLinks',
      summary: 'Payment links, newest first, cursor-paginated',
      tag: 'Payment links',
      scope: 'read',
      query: listPaymentLinksQuery,
      response: { status: 200, description: 'A page of links; meta.next_cursor is null on the last page', schema: listEnvelopeOf(paymentLinkSchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.links.list(auth, query);
        return { status: 200, body: ok('Payment links', items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/payment_links/:id',
      operationId: 'getPaymentLink',
      summary: 'A payment link, with its state and how many payments settled',
      tag: 'Payment links',
      scope: 'read',
      params: linkId(),
      response: { status: 200, description: 'The link', schema: envelopeOf(paymentLinkSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Payment link', await findById('payment link', params.id, () => deps.links.get(auth, params.id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/payment_links/:id/deactivate',
      operationId: 'deactivatePaymentLink',
      summary: 'Stop a payment link taking payments',
      description:
        'An active or expired link becomes deactivated; its page then says so (410) and its public endpoints refuse with payment_link_inactive. Deactivating again changes nothing; a completed link stays completed. Collections already pending still settle.',
      tag: 'Payment links',
      area: 'finance',
      scope: 'collections:write',
      params: linkId(),
      response: { status: 200, description: 'The link after deactivation', schema: envelopeOf(paymentLinkSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Payment link deactivated', await findById('payment link', params.id, () => deps.links.deactivate(auth, params.id))),
      }),
    }),
  ];
}
