import { z } from 'zod';
import { NETWORKS } from '../kernel/msisdn.ts';
import { accountNumberSchema, bankCodeSchema, msisdnSchema } from '../http/field-schemas.ts';
import { majorAmountSchema, v1Currency } from '../http/major-amount-schema.ts';

/** At most this many items in one bulk payout. */
export const MAX_BULK_ITEMS = 500;

const network = z.enum(NETWORKS, { error: 'network must be one of MTN, TELECEL, AT' }).describe('Overrides the network inferred from the number prefix (ported numbers)');
const narration = z
  .string({ error: 'narration must be a string' })
  .trim()
  .min(1, 'narration must not be empty')
  .max(100, 'narration must be at most 100 characters')
  .describe('Shown to the recipient where the rail carries it');

const momoPayout = z.strictObject({
  amount: majorAmountSchema(),
  currency: v1Currency,
  channel: z.literal('momo'),
  msisdn: msisdnSchema,
  network: network.optional(),
  narration: narration.optional(),
});
const bankPayout = z.strictObject({
  amount: majorAmountSchema(),
  currency: v1Currency,
  channel: z.literal('bank'),
  account_number: accountNumberSchema,
  bank_code: bankCodeSchema,
  account_name: z.string({ error: 'account_name is required' }).trim().min(1, 'account_name is required').max(100, 'account_name must be at most 100 characters'),
  narration: narration.optional(),
});

/** One payout: to a mobile wallet or to a bank account. Form-encoded or JSON. */
export const createPayoutBody = z.discriminatedUnion('channel', [momoPayout, bankPayout], { error: 'channel must be momo or bank' });
export type CreatePayoutBody = z.infer<typeof createPayoutBody>;

/**
 * A bulk payout: the list is checked as a whole (1 to 500 items), each item on its own in the
 * service, so one bad item is refused at its index while the others go ahead.
 */
export const createBulkPayoutBody = z.strictObject({
  items: z
    .array(z.unknown(), { error: 'items must be a list of payouts' })
    .min(1, 'items must hold at least one payout')
    .max(MAX_BULK_ITEMS, `items must hold at most ${MAX_BULK_ITEMS} payouts`)
    .describe(`1 to ${MAX_BULK_ITEMS} payouts, each shaped like the body of POST /v1/payouts`)
    .meta({ example: [{ amount: '25.00', currency: 'GHS', channel: 'momo', msisdn: '0551234987' }] }),
});
export type CreateBulkPayoutBody = z.infer<typeof createBulkPayoutBody>;

const timestamp = z.string().describe('ISO 8601, UTC');

export const payoutSchema = z.object({
  id: z.string().describe('po_...'),
  object: z.literal('payout'),
  status: z.enum(['pending', 'settled', 'failed']),
  amount: z.number().int().describe('Minor units (pesewas)'),
  amount_major: z.string().describe('The amount in major units, e.g. "110.50"'),
  currency: z.literal('GHS'),
  fees: z.number().int(),
  total_debited: z.number().int().describe('amount + fees, reserved at creation'),
  channel: z.enum(['momo', 'bank']),
  msisdn: z.string().nullable(),
  network: z.enum(NETWORKS).nullable(),
  account_number: z.string().nullable(),
  bank_code: z.string().nullable(),
  bank_name: z.string().nullable(),
  account_name: z.string().nullable(),
  narration: z.string().nullable(),
  bulk_id: z.string().nullable().describe('pob_... when the payout is an item of a bulk payout'),
  bulk_index: z.number().int().nullable().describe("The item's index in its bulk request"),
  provider: z.string().nullable().describe('The provider that served it; null until one accepts it'),
  failure_reason: z.string().nullable(),
  provider_reason: z.string().nullable().describe("The upstream's own reason code"),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Payout = z.infer<typeof payoutSchema>;

const itemError = z.object({
  code: z.enum(['validation_error', 'insufficient_funds']),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const bulkItemSchema = z.discriminatedUnion('status', [
  z.object({ index: z.number().int(), status: z.literal('accepted'), payout: payoutSchema }),
  z.object({ index: z.number().int(), status: z.literal('rejected'), error: itemError }),
]);
export type BulkItem = z.infer<typeof bulkItemSchema>;

export const payoutBulkSchema = z.object({
  id: z.string().describe('pob_...'),
  object: z.literal('payout_bulk'),
  item_count: z.number().int(),
  accepted_count: z.number().int().describe('Items that became payouts (whatever their status since)'),
  rejected_count: z.number().int().describe('Items refused at creation, each with its error'),
  status_counts: z.object({ pending: z.number().int(), settled: z.number().int(), failed: z.number().int() }).describe("The accepted payouts' current statuses"),
  total_amount: z.number().int().describe('Sum of the accepted payouts, minor units'),
  total_fees: z.number().int(),
  currency: z.literal('GHS'),
  items: z.array(bulkItemSchema).describe('Every item by index: its payout, or its error'),
  livemode: z.boolean(),
  created_at: timestamp,
});
export type PayoutBulk = z.infer<typeof payoutBulkSchema>;
