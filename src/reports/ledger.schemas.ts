import { z } from 'zod';
import { pageQuery } from '../http/pagination.ts';

const timestamp = z.string().describe('ISO 8601, UTC');

/** What a journal is about, as the entries name it. */
export const LEDGER_OBJECT_TYPES = ['charge', 'transfer', 'trade', 'collection', 'payout', 'bill', 'wallet_funding'] as const;

export const ledgerEntrySchema = z.object({
  id: z.string().describe('ent_<journal>_<n>: the n-th posting of its journal'),
  object: z.literal('ledger_entry'),
  object_type: z.string().describe(`What moved the money: ${LEDGER_OBJECT_TYPES.join(', ')} (a sandbox funding journal is its own object)`),
  object_id: z.string().describe('chg_, trf_, trd_, col_, po_, bil_, or the jrn_ id of a wallet funding'),
  journal_id: z.string().describe('jrn_...: every entry of one journal nets to zero per currency'),
  journal_kind: z.string().describe('e.g. charge.settled, payout.reserved, payout.refunded, trade.filled'),
  memo: z.string(),
  reverses: z.string().nullable().describe('The journal this one reverses (corrections are reversing journals), or null'),
  account: z.string().describe('merchant:<id>:wallet:available, merchant:<id>:wallet:reserved, revenue:fees, external:provider:<name>, ...'),
  direction: z.enum(['credit', 'debit']).describe("credit: the account's balance rises by amount; debit: it falls"),
  amount: z.number().int().positive().describe('Minor units of currency (pesewas for GHS, 10^-6 for USDT/USDC)'),
  currency: z.string(),
  settlement_id: z.string().describe('stl_YYYYMMDD: the daily settlement report the entry falls in'),
  livemode: z.boolean(),
  created_at: timestamp,
});
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

const isoInstant = (field: 'from' | 'to') =>
  z.iso
    .datetime({ offset: true, error: `${field} must be an ISO 8601 date-time, such as 2026-01-01T00:00:00Z` })
    .transform((value) => Date.parse(value))
    .optional()
    .describe(field === 'from' ? 'Entries at or after this instant (ISO 8601)' : 'Entries before this instant (ISO 8601)');

export const ledgerEntriesQuery = z
  .strictObject({
    ...pageQuery,
    object_id: z.string().min(1).max(255).optional().describe('Only the entries of this object (chg_, trf_, trd_, col_, po_, bil_, a wallet funding jrn_) or of this settlement report (stl_YYYYMMDD)'),
    account: z.string().min(1).max(200).optional().describe('Only postings to this account: a full name, or wallet:available / wallet:reserved for your own wallet'),
    currency: z.enum(['GHS', 'USDT', 'USDC'], { error: 'currency must be GHS, USDT or USDC' }).optional(),
    from: isoInstant('from'),
    to: isoInstant('to'),
  })
  .superRefine((q, ctx) => {
    if (q.from !== undefined && q.to !== undefined && q.from >= q.to) ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be later than from' });
  });

const settlementLineSchema = z.object({
  object_type: z.string(),
  object_id: z.string(),
  direction: z.enum(['in', 'out']).describe('in: gross money into the wallet; out: gross money out of it'),
  gross: z.number().int().describe("What the object moved before fees: a collection's amount (in), a payout's amount (out)"),
  fee: z.number().int().describe('Fees charged on it this day (negative when a fee was refunded)'),
  net: z.number().int().describe('gross - fee for money in, -(gross + fee) for money out: the change to the wallet'),
  entries: z.number().int().describe('How many of its entries to the wallet and fee accounts fall in this day'),
});

export const settlementSummarySchema = z.object({
  id: z.string().describe('stl_YYYYMMDD'),
  object: z.literal('settlement'),
  date: z.string().describe('The UTC day (Ghana time is UTC, without daylight saving)'),
  status: z.enum(['open', 'closed']).describe('open: the day has not ended on the clock, so its figures can still move'),
  currency: z.literal('GHS'),
  period_start: timestamp,
  period_end: timestamp,
  opening_balance: z.number().int().describe('Wallet (available + reserved) at period_start'),
  closing_balance: z.number().int().describe('Wallet (available + reserved) at period_end, or now while open'),
  closing_available: z.number().int(),
  closing_reserved: z.number().int(),
  gross_in: z.number().int(),
  gross_out: z.number().int(),
  fees: z.number().int(),
  net: z.number().int().describe('gross_in - gross_out - fees = closing_balance - opening_balance'),
  counts: z.object({
    in: z.number().int(),
    out: z.number().int(),
    by_object: z.record(z.string(), z.number().int()).describe('Receipt lines per object type'),
  }),
  livemode: z.boolean(),
});

export const settlementSchema = settlementSummarySchema.extend({
  lines: z.array(settlementLineSchema).describe('One receipt line per object whose entries changed the wallet or charged a fee this day, in order of first entry'),
});
export type SettlementSummary = z.infer<typeof settlementSummarySchema>;
export type Settlement = z.infer<typeof settlementSchema>;
export type SettlementLine = z.infer<typeof settlementLineSchema>;

export const settlementListQuery = z.strictObject({ ...pageQuery });
