import { z } from 'zod';
import { isGhipssCode } from '../kernel/banks.ts';
import { passesLuhn } from '../kernel/card-number.ts';
import { NETWORKS, normaliseMsisdn } from '../kernel/msisdn.ts';
import { majorAmountSchema, v1Currency } from '../http/major-amount-schema.ts';

// POST /v1/collections: one body, form-encoded or JSON, whose `customer` takes the shape its
// `channel` asks for. Validation names the precise field (`customer`, `customer.bank_code`).

export const CARD_TOKEN = /^tok_[A-Za-z0-9_]{1,64}$/;

const description = z.string({ error: 'description must be a string' }).trim().min(1, 'description must not be empty').max(200, 'description must be at most 200 characters');

const momoCustomer = z
  .string({ error: 'customer must be a Ghana mobile number for channel momo' })
  .max(20, 'customer is too long')
  .refine((v) => normaliseMsisdn(v) !== null, 'customer must be a Ghana mobile number: 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX')
  .describe('momo: a Ghana mobile number, 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX');

/** A card number (spaces allowed, kept as digits) or a card token; never echoed back whole. */
const cardCustomer = z
  .string({ error: 'customer must be a card number or a card token (tok_...) for channel card' })
  .max(80, 'customer is too long')
  .transform((value, ctx) => {
    if (CARD_TOKEN.test(value)) return value;
    const digits = value.replace(/ /g, '');
    if (!/^\d{12,19}$/.test(digits)) {
      ctx.addIssue({ code: 'custom', message: 'customer must be a card number of 12 to 19 digits (spaces allowed) or a card token tok_...' });
      return z.NEVER;
    }
    if (!passesLuhn(digits)) {
      ctx.addIssue({ code: 'custom', message: 'customer is not a valid card number (Luhn check failed)' });
      return z.NEVER;
    }
    return digits;
  })
  .describe('card: a card number (12 to 19 digits, spaces allowed; see the test cards) or a card token tok_...');

const bankCustomer = z
  .strictObject(
    {
      account_number: z.string({ error: 'account_number is required' }).regex(/^\d{6,20}$/, 'account_number must be 6 to 20 digits'),
      bank_code: z.string({ error: 'bank_code is required' }).refine(isGhipssCode, 'bank_code must be a GhIPSS institution code such as 040100 (GCB)'),
    },
    { error: 'customer must be an object {account_number, bank_code} for channel bank (form: customer[account_number]=...&customer[bank_code]=...)' },
  )
  .describe('bank: the account to debit and its GhIPSS bank code');

const common = { amount: majorAmountSchema(), currency: v1Currency, description: description.optional() };

export const createCollectionBody = z.discriminatedUnion(
  'channel',
  [
    z.strictObject({
      ...common,
      channel: z.literal('momo'),
      customer: momoCustomer,
      network: z.enum(NETWORKS, { error: 'network must be one of MTN, TELECEL, AT' }).optional().describe('Overrides the network inferred from the number prefix (ported numbers)'),
    }),
    z.strictObject({ ...common, channel: z.literal('card'), customer: cardCustomer }),
    z.strictObject({ ...common, channel: z.literal('bank'), customer: bankCustomer }),
  ],
  { error: 'channel must be one of momo, card, bank' },
);
/** The parsed body of POST /v1/collections: amount in minor units, customer shaped by channel. */
export type CollectionInput = z.infer<typeof createCollectionBody>;

export const submitOtpBody = z.strictObject({
  otp: z
    .string({ error: 'otp is required' })
    .regex(/^\d{4,8}$/, 'otp must be 4 to 8 digits')
    .describe('The one-time password the card issuer sent the customer (test cards: 123456)'),
});

const timestamp = z.string().describe('ISO 8601, UTC');

export const collectionSchema = z.object({
  id: z.string().describe('col_...'),
  object: z.literal('collection'),
  status: z.enum(['pending_approval', 'settled', 'failed']),
  amount: z.number().int().describe('Minor units (pesewas)'),
  amount_major: z.string().describe('The amount in major units, as sent: "110.50"'),
  currency: z.literal('GHS'),
  fees: z.number().int().describe('Minor units; depends on the channel'),
  amount_settled: z.number().int().describe('amount - fees: what the wallet is credited on settlement'),
  channel: z.enum(['momo', 'card', 'bank']),
  customer: z
    .union([
      z.object({ msisdn: z.string(), network: z.enum(NETWORKS) }),
      z
        .object({ brand: z.string().nullable(), last4: z.string().nullable(), token: z.string().nullable() })
        .describe('card: brand and last4 of a card number (never the whole number), or the token it was paid with'),
      z.object({ account_number: z.string(), bank_code: z.string() }),
    ])
    .describe('momo: {msisdn, network}; card: {brand, last4, token}; bank: {account_number, bank_code}'),
  description: z.string().nullable(),
  payment_link_id: z.string().nullable().describe('The payment link this collection paid, if any'),
  next_action: z
    .object({ type: z.literal('otp'), message: z.string(), submit_url: z.string() })
    .nullable()
    .describe('While pending_approval: what the customer must still do (a card OTP: POST it to submit_url)'),
  provider: z.string().nullable().describe('The provider that served the request; null until one accepts it'),
  failure_reason: z.string().nullable(),
  provider_reason: z.string().nullable().describe("The upstream's own reason code"),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Collection = z.infer<typeof collectionSchema>;
