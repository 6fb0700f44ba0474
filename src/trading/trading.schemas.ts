import { z } from 'zod';
import { pathIdParams } from '../http/find-by-id.ts';
import { MAX_AMOUNT } from '../kernel/money.ts';
import { amountSchema } from '../http/field-schemas.ts';
import { ALL_TRADING_NETWORKS } from './assets.ts';

export const MAX_ASSET_AMOUNT = 100_000_000_000_000; // 100 million units of a 6-decimal asset

const assetAmount = z
  .number({ error: 'asset_amount must be a number of asset minor units' })
  .int('asset_amount must be a whole number of asset minor units (10^-6)')
  .positive('asset_amount must be greater than zero')
  .max(MAX_ASSET_AMOUNT, `asset_amount must be at most ${MAX_ASSET_AMOUNT}`)
  .describe('Native asset minor units: 1 USDT is 1000000');

export const quoteBody = z
  .strictObject({
    side: z.enum(['buy', 'sell'], { error: 'side must be buy or sell' }),
    asset: z.enum(['USDT', 'USDC'], { error: 'asset must be USDT or USDC' }),
    network: z.enum(ALL_TRADING_NETWORKS, { error: `network must be one of ${ALL_TRADING_NETWORKS.join(', ')}` }),
    fiat_amount: amountSchema.describe('Gross GHS notional in pesewas; exactly one of fiat_amount and asset_amount').optional(),
    asset_amount: assetAmount.optional(),
  })
  .superRefine((v, ctx) => {
    const given = [v.fiat_amount, v.asset_amount].filter((a) => a !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({ code: 'custom', path: ['fiat_amount'], message: 'give exactly one of fiat_amount and asset_amount' });
    }
  });
export type QuoteBody = z.infer<typeof quoteBody>;

export const tradeReference = z.string().regex(/^trd_[0-9a-z]{20}$/, 'must look like trd_ followed by 20 characters');
export const tradeReferenceParams = pathIdParams('reference', 'trade', 'trd_0000000000aaaaaaaaaa');
export const quoteReferenceParams = pathIdParams('reference', 'quote', 'qt_0000000000aaaaaaaaaa');

export const executeBody = z.strictObject({
  quote_reference: z.string({ error: 'quote_reference is required' }).regex(/^qt_[0-9a-z]{20}$/, 'quote_reference must look like qt_ followed by 20 characters'),
  delivery_address: z.string().min(1).max(128).optional().describe('Buys: where the asset is delivered, valid for the quote network'),
});
export type ExecuteBody = z.infer<typeof executeBody>;

const timestamp = z.string().describe('ISO 8601, UTC');

export const quoteSchema = z.object({
  reference: z.string().describe('qt_...; pass as quote_reference to execute'),
  object: z.literal('quote'),
  status: z.enum(['created', 'consumed', 'expired']),
  side: z.enum(['buy', 'sell']),
  asset: z.enum(['USDT', 'USDC']),
  network: z.string(),
  applied_rate: z.number().describe('GHS per whole asset unit: the benchmark plus the spread in the house favour'),
  benchmark_rate: z.number().describe('usd_price × fx_rate'),
  usd_price: z.number(),
  fx_rate: z.number(),
  asset_amount: z.number().int(),
  net_fiat_amount: z.number().int(),
  expires_at: timestamp,
  created_at: timestamp,
  livemode: z.boolean(),
});
export type Quote = z.infer<typeof quoteSchema>;

export const QUOTE_STATUSES = ['created', 'consumed', 'expired'] as const;

/** A quote as GET /api/v1/trades/quotes lists it: the quote and the trade that executed it, if any. */
export const listedQuoteSchema = quoteSchema.extend({
  trade_reference: z.string().nullable().describe('trd_... of the trade that consumed the quote; null until executed'),
});
export type ListedQuote = z.infer<typeof listedQuoteSchema>;

export const TRADE_STATUSES = ['created', 'under_review', 'pending_payment', 'pending_confirmation', 'completed', 'settled', 'failed', 'reversed'] as const;

export const tradeSchema = z.object({
  reference: z.string().describe('trd_...'),
  object: z.literal('trade'),
  status: z.enum(TRADE_STATUSES),
  side: z.enum(['buy', 'sell']),
  asset: z.enum(['USDT', 'USDC']),
  network: z.string(),
  asset_amount: z.number().int().describe('Quoted asset amount, minor units'),
  net_fiat_amount: z.number().int().describe('Quoted GHS amount, pesewas'),
  settled_fiat_amount: z.number().int().nullable().describe('GHS actually debited (buy) or credited (sell) at settlement'),
  applied_rate: z.number(),
  quote_reference: z.string(),
  delivery_address: z.string().nullable().describe('Buys'),
  deposit_address: z.string().nullable().describe('Sells: send the asset here'),
  transaction_id: z.string().nullable().describe('Simulated on-chain transaction id: the delivery (buy) or the deposit (sell)'),
  deposited_amount: z.number().int().nullable(),
  excess_amount: z.number().int().nullable().describe('Sells: asset received beyond the quote, held for the merchant'),
  confirmations: z.number().int().describe('Sells: confirmations of the deposit so far'),
  required_confirmations: z.number().int().describe('Sells: confirmations the network needs; 0 for buys'),
  failure_reason: z.string().nullable(),
  livemode: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
  status_history: z.array(z.object({ status: z.string(), at: timestamp, note: z.string().nullable() })),
});
export type Trade = z.infer<typeof tradeSchema>;

export { MAX_AMOUNT };
