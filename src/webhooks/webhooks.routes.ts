import { z } from 'zod';
import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { pageQuery } from '../http/pagination.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { MAX_REPLAY, type WebhookDispatcher } from './webhook-dispatcher.ts';
import type { WebhookEndpointService } from './webhook-endpoint-service.ts';
import { createEndpointBody, deliverySchema, endpointSchema, endpointWithSecretSchema, EVENT_TYPES, eventSchema, replayFailedBody, rotateBody } from './webhook.schemas.ts';

const endpointId = pathIdParams('id', 'webhook endpoint', 'we_0000000000aaaaaaaaaa');
const deliveryId = pathIdParams('id', 'webhook delivery', 'wd_0000000000aaaaaaaaaa');

export function webhookRoutes(deps: { endpoints: WebhookEndpointService; dispatcher: WebhookDispatcher }): RouteSpec[] {
  const { endpoints, dispatcher } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Register a URL for signed webhooks; the signing secret is shown only now',
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      body: createEndpointBody,
      response: { status: 201, description: 'The endpoint, with its whsec_ secret', schema: envelopeOf(endpointWithSecretSchema) },
      errors: ['forbidden'],
      handler: async ({ body, auth }) => ({ status: 201, body: ok('Webhook endpoint created; store the secret now', await endpoints.create(auth, body)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      summary: "This environment's webhook endpoints",
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      response: { status: 200, description: 'The endpoints (secrets are never listed)', schema: envelopeOf(z.array(endpointSchema)) },
      errors: ['forbidden'],
      handler: async ({ auth }) => ({ status: 200, body: ok('Webhook endpoints', await endpoints.list(auth)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/webhook_endpoints/:id',
      operationId: 'getWebhookEndpoint',
      summary: 'One webhook endpoint',
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      params: endpointId,
      response: { status: 200, description: 'The endpoint', schema: envelopeOf(endpointSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Webhook endpoint', await findById('webhook endpoint', params.id, () => endpoints.get(auth, params.id))) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/webhook_endpoints/:id',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Stop sending to an endpoint; pending retries to it stop too',
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      params: endpointId,
      response: { status: 200, description: 'The deleted endpoint', schema: envelopeOf(endpointSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Webhook endpoint deleted', await findById('webhook endpoint', params.id, () => endpoints.remove(auth, params.id))) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/webhook_endpoints/:id/rotate_secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Issue a new signing secret; the old one keeps signing for a grace period, so deliveries carry both signatures',
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      params: endpointId,
      body: rotateBody,
      response: { status: 200, description: 'The endpoint with its new secret', schema: envelopeOf(endpointWithSecretSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, body, auth }) => ({
        status: 200,
        body: ok('Secret rotated; store the new secret now', await findById('webhook endpoint', params.id, () => endpoints.rotate(auth, params.id, body?.grace_seconds))),
      }),
    }),
    ...([true, false] as const).map((enable) =>
      defineRoute({
        method: 'post',
        path: `/api/v1/webhook_endpoints/:id/${enable ? 'enable' : 'disable'}`,
        operationId: enable ? 'enableWebhookEndpoint' : 'disableWebhookEndpoint',
        summary: enable ? 'Enable an endpoint again: new events are delivered to it' : 'Disable an endpoint: no new deliveries, and its pending retries stop (failed); it keeps its secret and log',
        description: 'Idempotent: enabling an enabled endpoint (or disabling a disabled one) changes nothing. Failed deliveries are sent again with replay_failed or one by one with redeliver.',
        tag: 'Webhooks',
        area: 'engineering',
        scope: 'webhooks:write',
        params: endpointId,
        response: { status: 200, description: 'The endpoint', schema: envelopeOf(endpointSchema) },
        errors: ['forbidden', 'not_found'],
        handler: async ({ params, auth }) => ({
          status: 200,
          body: ok(enable ? 'Webhook endpoint enabled' : 'Webhook endpoint disabled', await findById('webhook endpoint', params.id, () => endpoints.setEnabled(auth, params.id, enable))),
        }),
      }),
    ),
    defineRoute({
      method: 'post',
      path: '/api/v1/webhook_endpoints/:id/replay_failed',
      operationId: 'replayFailedWebhooks',
      summary: 'Redeliver, once each, every delivery to this endpoint that did not get through, created in a time range',
      description: `Failed deliveries, and pending ones whose last attempt failed, oldest first, each logged as a redelivery attempt (delivered on a 2xx). from and to (ISO 8601) bound created_at, inclusive; either may be left out. At most ${MAX_REPLAY} per call: more is true when further ones remain, so call again.`,
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      params: endpointId,
      body: replayFailedBody,
      response: {
        status: 200,
        description: 'What was redelivered',
        schema: envelopeOf(
          z.object({
            endpoint_id: z.string(),
            redelivered: z.number().int(),
            deliveries: z.array(z.string()).describe('The ids redelivered, oldest first; read each with GET /api/v1/webhook_deliveries/{id}'),
            more: z.boolean(),
          }),
        ),
      },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, body, auth }) => {
        const range = { ...(body?.from ? { from: Date.parse(body.from) } : {}), ...(body?.to ? { to: Date.parse(body.to) } : {}) };
        const result = await findById('webhook endpoint', params.id, () => dispatcher.replayFailed(auth, params.id, range));
        return { status: 200, body: ok(`Redelivered ${result.redelivered} failed deliveries`, result) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/events',
      operationId: 'listEvents',
      summary: 'Events, newest first, each with a snapshot of its object',
      tag: 'Webhooks',
      scope: 'read',
      query: z.strictObject({ ...pageQuery, type: z.enum(EVENT_TYPES, { error: 'unknown event type' }).optional() }),
      response: { status: 200, description: 'A page of events', schema: listEnvelopeOf(eventSchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await dispatcher.listEvents(auth, query);
        return { status: 200, body: ok('Events', items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/events/:id',
      operationId: 'getEvent',
      summary: 'One event',
      tag: 'Webhooks',
      scope: 'read',
      params: pathIdParams('id', 'event', 'evt_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The event', schema: envelopeOf(eventSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Event', await findById('event', params.id, () => dispatcher.getEvent(auth, params.id))) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/webhook_deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The delivery log: every delivery with every attempt (time, URL, HTTP status, latency, response excerpt)',
      tag: 'Webhooks',
      scope: 'read',
      query: z.strictObject({
        ...pageQuery,
        event_id: z
          .string()
          .regex(/^evt_[0-9a-z]{20}$/, 'event_id must look like evt_ followed by 20 characters')
          .optional(),
        endpoint_id: z
          .string()
          .regex(/^we_[0-9a-z]{20}$/, 'endpoint_id must look like we_ followed by 20 characters')
          .optional(),
        status: z.enum(['pending', 'delivered', 'failed']).optional(),
      }),
      response: { status: 200, description: 'A page of deliveries', schema: listEnvelopeOf(deliverySchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await dispatcher.list(auth, query);
        return { status: 200, body: ok('Webhook deliveries', items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/webhook_deliveries/:id',
      operationId: 'getWebhookDelivery',
      summary: 'One delivery and its attempts',
      tag: 'Webhooks',
      scope: 'read',
      params: deliveryId,
      response: { status: 200, description: 'The delivery', schema: envelopeOf(deliverySchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Webhook delivery', await findById('webhook delivery', params.id, () => dispatcher.get(auth, params.id))) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/webhook_deliveries/:id/redeliver',
      operationId: 'redeliverWebhook',
      summary: 'Send a delivery again now, whatever its state; the attempt is logged as a redelivery',
      tag: 'Webhooks',
      area: 'engineering',
      scope: 'webhooks:write',
      params: deliveryId,
      response: { status: 200, description: 'The delivery with the new attempt', schema: envelopeOf(deliverySchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({ status: 200, body: ok('Redelivered', await findById('webhook delivery', params.id, () => dispatcher.redeliver(auth, params.id))) }),
    }),
  ];
}
