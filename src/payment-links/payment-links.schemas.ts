import { z } from 'zod';
import { pageQuery } from '../http/pagination.ts';
import { NETWORKS } from '../kernel/msisdn.ts';
import { majorAmountSchema, v1Currency } from '../http/major-amount-schema.ts';

// POST /v1/payment_links and the hosted page's public bodies. Form-encoded or JSON, like every
// /v1 body: so numbers arrive as strings, and usage_limit is a string of digits.

export const PAYMENT_LINK_STATES = ['active', 'expired', 'deactivated', 'completed'] as const;
export type PaymentLinkState = (typeof PAYMENT_LINK_STATES)[number];

/** The most a link may be used; beyond this a merchant wants a standing checkout, not a link. */
export const MAX_USAGE_LIMIT = 1_000_000;

const usageLimit = z
  .union([z.string(), z.number()], { error: 'usage_limit must be a whole number' })
  .transform((value, ctx) => {
    const text = String(value);
    if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > MAX_USAGE_LIMIT) {
      ctx.addIssue({ code: 'custom', message: `usage_limit must be a whole number from 1 to ${MAX_USAGE_LIMIT}` });
      return z.NEVER;
    }
    return Number(text);
  })
  .describe(`How many settled payments complete the link, 1 to ${MAX_USAGE_LIMIT}; unlimited when omitted`);

// An ISO 8601 time with its offset: a time without one would be read in whoever's zone.
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
const expiresAt = z
  .string({ error: 'expires_at must be an ISO 8601 time' })
  .transform((value, ctx) => {
    const ms = ISO_WITH_OFFSET.test(value) ? Date.parse(value) : NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'expires_at must be an ISO 8601 time with its offset, such as 2026-01-31T23:59:59Z' });
      return z.NEVER;
    }
    return ms;
  })
  .meta({ example: '2026-01-31T23:59:59Z' })
  .describe("When the link stops taking payments, on railyard's business clock (the virtual clock in the sandbox); must be in the future");

export const createPaymentLinkBody = z
  .strictObject({
    amount: majorAmountSchema().optional().describe('A fixed amount, decimal string of major units ("110.50"); omit it for an open amount the customer types on the page'),
    currency: v1Currency,
    description: z
      .string({ error: 'description is required' })
      .trim()
      .min(1, 'description must not be empty')
      .max(200, 'description must be at most 200 characters')
      .describe('What the customer pays for; shown on the hosted page'),
    expires_at: expiresAt.optional(),
    usage_limit: usageLimit.optional(),
    min_amount: majorAmountSchema('min_amount').optional().describe('Open amount only: the least the customer may pay, decimal string of major units'),
    max_amount: majorAmountSchema('max_amount').optional().describe('Open amount only: the most the customer may pay, decimal string of major units'),
  })
  .superRefine((link, ctx) => {
    for (const bound of ['min_amount', 'max_amount'] as const) {
      if (link.amount !== undefined && link[bound] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [bound], message: `${bound} is for an open amount: leave it out when amount is fixed` });
      }
    }
    if (link.min_amount !== undefined && link.max_amount !== undefined && link.min_amount > link.max_amount) {
      ctx.addIssue({ code: 'custom', path: ['max_amount'], message: 'max_amount must not be less than min_amount' });
    }
  });
export type PaymentLinkInput = z.infer<typeof createPaymentLinkBody>;

export const listPaymentLinksQuery = z.strictObject({
  ...pageQuery,
  status: z
    .enum(PAYMENT_LINK_STATES, { error: `status must be one of ${PAYMENT_LINK_STATES.join(', ')}` })
    .optional()
    .describe('Only links in this state'),
});

const timestamp = z.string().describe('ISO 8601, UTC');

export const paymentLinkSchema = z.object({
  id: z.string().describe('plink_...'),
  object: z.literal('payment_link'),
  status: z.enum(PAYMENT_LINK_STATES).describe('expired is computed from the clock: an active link whose expires_at has passed'),
  slug: z.string().describe('The last segment of url'),
  url: z.string().describe('The hosted checkout page to share: <base_url>/pay/<slug>'),
  amount: z.number().int().nullable().describe('Minor units (pesewas); null for an open amount'),
  amount_major: z.string().nullable().describe('The fixed amount in major units, "110.50"; null for an open amount'),
  min_amount: z.number().int().nullable().describe('Open amount: the least the customer may pay, minor units; null for no bound'),
  max_amount: z.number().int().nullable().describe('Open amount: the most the customer may pay, minor units; null for no bound'),
  currency: z.literal('GHS'),
  fees: z.number().int().describe('Always 0: each collection paying the link carries its own channel fee'),
  description: z.string(),
  expires_at: timestamp.nullable(),
  usage_limit: z.number().int().nullable().describe('Settled payments that complete the link; null for unlimited'),
  completed_count: z.number().int().describe('Collections paying this link that settled'),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type PaymentLink = z.infer<typeof paymentLinkSchema>;

// The hosted page's public endpoints: the customer's choices only.

const pageMomo = z.strictObject({
  channel: z.literal('momo'),
  customer: z.string({ error: 'customer is required: your mobile money number' }).max(20, 'customer is too long'),
  network: z.enum(NETWORKS, { error: 'network must be one of MTN, TELECEL, AT' }).optional(),
  amount: z.string().optional(),
  submission: z.string().optional(),
});
const pageCard = z.strictObject({
  channel: z.literal('card'),
  customer: z.string({ error: 'customer is required: your card number' }).max(80, 'customer is too long'),
  amount: z.string().optional(),
  submission: z.string().optional(),
});

/**
 * What the page posts. Only the envelope of it is checked here; the collection's own schema
 * checks customer and amount, so the page and POST /v1/collections refuse the same things alike.
 */
export const payLinkBody = z.discriminatedUnion('channel', [pageMomo, pageCard], { error: 'channel must be one of momo, card' });
export type PayLinkInput = z.infer<typeof payLinkBody>;

/** A collection as the paying customer sees it on the page: no merchant-side detail. */
export const checkoutCollectionSchema = z.object({
  id: z.string(),
  status: z.enum(['pending_approval', 'settled', 'failed']),
  amount: z.number().int(),
  amount_major: z.string(),
  currency: z.literal('GHS'),
  channel: z.enum(['momo', 'card', 'bank']),
  next_action: z.object({ type: z.literal('otp'), message: z.string() }).nullable(),
  failure_reason: z.string().nullable(),
});
export type CheckoutCollection = z.infer<typeof checkoutCollectionSchema>;
