import { z } from 'zod';
import { accountNumberSchema, amountSchema, bankCodeSchema, msisdnSchema } from '../http/field-schemas.ts';
import { NETWORKS } from '../kernel/msisdn.ts';

const currency = z.literal('GHS', { error: 'currency must be GHS' });
const network = z.enum(NETWORKS, { error: 'network must be one of MTN, TELECEL, AT' }).describe('Overrides the network inferred from the number prefix (ported numbers)');

export const createChargeBody = z.strictObject({
  amount: amountSchema,
  currency,
  channel: z.literal('momo', { error: 'channel must be momo' }),
  msisdn: msisdnSchema,
  network: network.optional(),
});
export type CreateChargeBody = z.infer<typeof createChargeBody>;

const momoTransfer = z.strictObject({
  amount: amountSchema,
  currency,
  channel: z.literal('momo'),
  msisdn: msisdnSchema,
  network: network.optional(),
});
const bankTransfer = z.strictObject({
  amount: amountSchema,
  currency,
  channel: z.literal('bank'),
  account_number: accountNumberSchema,
  bank_code: bankCodeSchema,
  bank_account_name: z.string().trim().min(1, 'bank_account_name is required').max(100),
});
export const createTransferBody = z.discriminatedUnion('channel', [momoTransfer, bankTransfer], {
  error: 'channel must be momo or bank',
});
export type CreateTransferBody = z.infer<typeof createTransferBody>;

export const resolveMomoBody = z.strictObject({ msisdn: msisdnSchema, network: network.optional() });
export const resolveBankBody = z.strictObject({ account_number: accountNumberSchema, bank_code: bankCodeSchema });

const timestamp = z.string().describe('ISO 8601, UTC');

export const chargeSchema = z.object({
  id: z.string().describe('chg_...'),
  object: z.literal('charge'),
  status: z.enum(['pending_provider', 'success', 'failed']),
  amount: z.number().int(),
  currency: z.literal('GHS'),
  fees: z.number().int(),
  amount_settled: z.number().int().describe('amount - fees: what the wallet is credited on success'),
  channel: z.literal('momo'),
  msisdn: z.string(),
  network: z.enum(NETWORKS),
  provider: z.string().nullable().describe('The provider that served the request; null until one accepts it'),
  failure_reason: z.string().nullable(),
  provider_reason: z.string().nullable().describe("The upstream's own reason code"),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Charge = z.infer<typeof chargeSchema>;

export const transferSchema = z.object({
  id: z.string().describe('trf_...'),
  object: z.literal('transfer'),
  status: z.enum(['pending', 'success', 'failed']),
  amount: z.number().int(),
  fees: z.number().int(),
  total_debited: z.number().int().describe('amount + fees, reserved at initiation'),
  currency: z.literal('GHS'),
  channel: z.enum(['momo', 'bank']),
  msisdn: z.string().nullable(),
  network: z.enum(NETWORKS).nullable(),
  account_number: z.string().nullable(),
  bank_code: z.string().nullable(),
  bank_name: z.string().nullable(),
  bank_account_name: z.string().nullable(),
  provider: z.string().nullable(),
  failure_reason: z.string().nullable(),
  provider_reason: z.string().nullable(),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Transfer = z.infer<typeof transferSchema>;

export const nameResolutionSchema = z.object({
  name: z.string(),
  instrument: z.string().describe('The resolved wallet (233XXXXXXXXX) or account number'),
  channel: z.enum(['momo', 'bank']),
  provider: z.string(),
  network: z.enum(NETWORKS).optional(),
  bank_code: z.string().optional(),
});

export const walletSchema = z.object({
  currency: z.literal('GHS'),
  available: z.number().int(),
  reserved: z.number().int().describe('Held for pending transfers'),
});

export const TRANSACTION_TYPES = ['charge', 'transfer', 'trade', 'collection', 'payout', 'bill'] as const;

export const transactionItemSchema = z.object({
  id: z.string().describe('chg_, trf_, trd_, col_, po_ or bil_'),
  type: z.enum(TRANSACTION_TYPES),
  direction: z.enum(['credit', 'debit']),
  status: z.string(),
  amount: z.number().int(),
  fees: z.number().int(),
  currency: z.literal('GHS'),
  channel: z.string().describe('momo, bank or bills; for trades ASSET:NETWORK, e.g. USDT:TRC20'),
  provider: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
