import { z } from 'zod';
import { isGhipssCode } from '../kernel/banks.ts';
import { MAX_AMOUNT } from '../kernel/money.ts';
import { normaliseMsisdn } from '../kernel/msisdn.ts';

// Request fields that several features accept with the same rules and messages.

export const amountSchema = z
  .number({ error: (i) => (i.input === undefined ? 'amount is required' : 'amount must be a number of minor units (pesewas)') })
  .int('amount must be a whole number of minor units (pesewas)')
  .positive('amount must be greater than zero')
  .max(MAX_AMOUNT, `amount must be at most ${MAX_AMOUNT} minor units`)
  .describe('Integer minor units (pesewas): 110.50 GHS is 11050');

export const msisdnSchema = z
  .string({ error: (i) => (i.input === undefined ? 'msisdn is required' : 'msisdn must be a string') })
  .max(20, 'msisdn is too long')
  .refine((v) => normaliseMsisdn(v) !== null, 'msisdn must be a Ghana mobile number: 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX')
  .describe('Ghana mobile number as 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX; stored as 233XXXXXXXXX');

export const bankCodeSchema = z
  .string({ error: 'bank_code must be a string' })
  .refine(isGhipssCode, 'bank_code must be a GhIPSS institution code such as 040100 (GCB)')
  .describe('GhIPSS institution code, e.g. 040100 for GCB');
export const accountNumberSchema = z.string({ error: 'account_number must be a string' }).regex(/^\d{6,20}$/, 'account_number must be 6 to 20 digits');
