import { z } from 'zod';
import { NETWORKS, normaliseMsisdn } from '../kernel/msisdn.ts';
import { majorAmountSchema, v1Currency } from '../http/major-amount-schema.ts';

const network = z.enum(NETWORKS, { error: 'network must be one of MTN, TELECEL, AT' }).describe('Overrides the network inferred from the number prefix (ported numbers)');
const product = z.string({ error: 'product is required: a code from GET /v1/bills/products' }).min(1, 'product is required').max(40).describe('A product code from GET /v1/bills/products');
const phone = z
  .string({ error: 'customer is required: the Ghana mobile number' })
  .max(20, 'customer is too long')
  .refine((v) => normaliseMsisdn(v) !== null, 'customer must be a Ghana mobile number: 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX');
const digits = (label: string, length: number) => z.string({ error: `customer is required: the ${label}` }).regex(new RegExp(`^\\d{${length}}$`), `customer must be the ${length}-digit ${label}`);

const airtime = z.strictObject({
  category: z.literal('airtime'),
  customer: phone.describe('The number to top up; its network is inferred from the prefix unless network says otherwise'),
  network: network.optional(),
  amount: majorAmountSchema(),
  currency: v1Currency,
});
const data = z.strictObject({
  category: z.literal('data'),
  customer: phone.describe('The number the bundle is for'),
  network: network.optional(),
  product,
  amount: majorAmountSchema().optional().describe("Optional: when given, it must be the bundle's price"),
  currency: v1Currency,
});
const electricity = z.strictObject({
  category: z.literal('electricity'),
  biller: z.literal('ECG', { error: 'biller must be ECG' }).default('ECG'),
  customer: digits('ECG prepaid meter number', 11),
  amount: majorAmountSchema(),
  currency: v1Currency,
});
const water = z.strictObject({
  category: z.literal('water'),
  biller: z.literal('GWCL', { error: 'biller must be GWCL' }).default('GWCL'),
  customer: digits('GWCL account number', 10),
  amount: majorAmountSchema(),
  currency: v1Currency,
});
const tv = z.strictObject({
  category: z.literal('tv'),
  biller: z.enum(['DSTV', 'GOTV'], { error: 'biller must be DSTV or GOTV' }),
  customer: digits('smartcard (DStv) or IUC (GOtv) number', 10),
  product,
  amount: majorAmountSchema().optional().describe("Optional: when given, it must be the package's price"),
  currency: v1Currency,
});

/** A bill payment: airtime, a data bundle, ECG prepaid, water or TV. Form-encoded or JSON. */
export const createBillBody = z.discriminatedUnion('category', [airtime, data, electricity, water, tv], {
  error: 'category must be one of airtime, data, electricity, water, tv',
});
export type CreateBillBody = z.infer<typeof createBillBody>;

const timestamp = z.string().describe('ISO 8601, UTC');

export const billSchema = z.object({
  id: z.string().describe('bil_...'),
  object: z.literal('bill'),
  status: z.enum(['pending', 'settled', 'failed']),
  category: z.enum(['airtime', 'data', 'electricity', 'water', 'tv']),
  biller: z.string().describe('MTN, TELECEL, AT (airtime and data), ECG, GWCL, DSTV or GOTV'),
  product: z.string().nullable().describe('The bundle or package; null for an open amount'),
  customer: z.string().describe('233XXXXXXXXX for airtime and data; the meter, account or smartcard number otherwise'),
  amount: z.number().int().describe('Minor units (pesewas)'),
  amount_major: z.string().describe('The amount in major units, e.g. "20.00"'),
  currency: z.literal('GHS'),
  fees: z.number().int(),
  total_debited: z.number().int().describe('amount + fees, reserved at creation'),
  token: z.string().nullable().describe('ECG prepaid: the token to enter on the meter, once settled'),
  units: z.string().nullable().describe('ECG prepaid: the units the token buys, e.g. "13.3 kWh"'),
  provider: z.string().nullable(),
  failure_reason: z.string().nullable().describe('invalid_customer, vend_failed, provider_unavailable, ...'),
  provider_reason: z.string().nullable().describe("The biller aggregator's own code"),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Bill = z.infer<typeof billSchema>;

export const billProductSchema = z.object({
  code: z.string().nullable().describe('The product code to send; null for an open-amount biller'),
  category: z.enum(['airtime', 'data', 'electricity', 'water', 'tv']),
  biller: z.string(),
  name: z.string(),
  amount: z.number().int().nullable().describe('Fixed price in pesewas; null for an open amount'),
  amount_major: z.string().nullable(),
  min_amount: z.number().int().nullable().describe('Open amount: the least it takes, pesewas'),
  max_amount: z.number().int().nullable(),
});

export const billProductsQuery = z.strictObject({
  category: z.enum(['airtime', 'data', 'electricity', 'water', 'tv'], { error: 'category must be one of airtime, data, electricity, water, tv' }).optional().describe('Only this category'),
  biller: z.string().max(20).optional().describe('Only this biller, e.g. MTN or DSTV'),
});
