import { z } from 'zod';

/** Every event railyard emits, each with a snapshot of its object. */
export const EVENT_TYPES = [
  'quote.created',
  'quote.expired',
  'trade.created',
  'trade.pending_payment',
  'trade.pending_confirmation',
  'trade.completed',
  'trade.settled',
  'trade.failed',
  'trade.reversed',
  'compliance.review_required',
  'deposit.confirmed',
  'charge.pending',
  'charge.success',
  'charge.failed',
  'charge.late_success_reversed',
  'transfer.pending',
  'transfer.success',
  'transfer.failed',
  'transfer.late_success_reversed',
  'collection.pending',
  'collection.settled',
  'collection.failed',
  'collection.late_success_reversed',
  'payment_link.completed',
  'payout.pending',
  'payout.settled',
  'payout.failed',
  'payout.late_success_reversed',
  'bill.pending',
  'bill.settled',
  'bill.failed',
  'bill.late_success_reversed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const timestamp = z.string().describe('ISO 8601, UTC');

export const createEndpointBody = z.strictObject({
  url: z
    .url({ error: 'url must be an absolute http(s) URL' })
    .refine((u) => /^https?:\/\//.test(u), 'url must use http or https')
    .describe('Where events are POSTed'),
  event_types: z
    .array(z.enum(EVENT_TYPES, { error: 'unknown event type' }))
    .min(1, 'name at least one event type, or leave event_types out for all')
    .optional()
    .describe('Only these events; all when omitted'),
  enabled: z.boolean().default(true),
});

export const rotateBody = z
  .strictObject({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .optional()
      .describe('How long the old secret keeps signing; default from configuration (24 h)'),
  })
  .optional();

const isoInstant = (field: string) => z.iso.datetime({ offset: true, error: `${field} must be an ISO 8601 date-time, e.g. 2026-01-01T00:00:00Z` });

export const replayFailedBody = z
  .strictObject({
    from: isoInstant('from').optional().describe('Only deliveries created at or after this instant'),
    to: isoInstant('to').optional().describe('Only deliveries created at or before this instant'),
  })
  .refine((r) => r.from === undefined || r.to === undefined || Date.parse(r.from) <= Date.parse(r.to), { message: 'from must not be after to', path: ['from'] })
  .optional();

export const endpointSchema = z.object({
  id: z.string().describe('we_...'),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  event_types: z.array(z.string()).nullable().describe('null: every event'),
  enabled: z.boolean(),
  failing: z.boolean().describe('true after a delivery exhausted its retries; cleared by the next success'),
  secret_rotating_until: z.string().nullable(),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export const endpointWithSecretSchema = endpointSchema.extend({
  secret: z.string().describe('whsec_...: shown only when created or rotated'),
});

export const attemptSchema = z.object({
  attempt: z.number().int(),
  trigger: z.enum(['automatic', 'redelivery']),
  at: timestamp,
  url: z.string(),
  http_status: z.number().int().nullable(),
  latency_ms: z.number().int(),
  response_excerpt: z.string().nullable(),
  error: z.string().nullable(),
});

export const deliverySchema = z.object({
  id: z.string().describe('wd_...'),
  object: z.literal('webhook_delivery'),
  event_id: z.string(),
  event_type: z.string(),
  endpoint_id: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  attempt_log: z.array(attemptSchema),
});

export const eventSchema = z.object({
  id: z.string().describe('evt_...'),
  type: z.string(),
  created_at: timestamp,
  livemode: z.boolean(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});
