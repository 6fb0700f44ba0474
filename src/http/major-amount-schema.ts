import { z } from 'zod';
import { parseMajorAmount } from '../kernel/money.ts';

// What every /v1 body shares. The /v1 family takes amounts as decimal strings of major units
// ("110.50"), form-encoded or JSON, and answers in minor units beside the major string.

/**
 * A decimal string of major units, converted exactly to minor units. Anything else (a JSON
 * number, more than 2 decimals, a sign, an exponent, spaces, zero) is a validation_error naming
 * the field.
 */
export function majorAmountSchema(field = 'amount') {
  return z
    .string({ error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a decimal string of major units, such as "110.50"`) })
    .transform((value, ctx) => {
      const parsed = parseMajorAmount(value, 'GHS');
      if (parsed.ok) return parsed.minor;
      ctx.addIssue({ code: 'custom', message: `${field} ${parsed.reason}` });
      return z.NEVER;
    })
    .meta({ example: '110.50' })
    .describe('Decimal string of major units (cedis), at most 2 decimals: "110.50" is 11050 pesewas');
}

export const v1Currency = z.literal('GHS', { error: 'currency must be GHS' }).describe('GHS, the only currency of the /v1 family');
