// Money is integer minor units. Amounts above this bound are rejected at the edge, so no sum
// of a few of them can leave the safe-integer range.
export const MAX_AMOUNT = 1_000_000_000_000; // 10 billion GHS in pesewas

export const CURRENCY_EXPONENT = { GHS: 2, USDT: 6, USDC: 6 } as const;
export type Currency = keyof typeof CURRENCY_EXPONENT;

export function isMinorAmount(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && value <= MAX_AMOUNT;
}

/** Minor units to a decimal string of major units, e.g. 11050 GHS -> "110.50". */
export function toMajorString(minor: number, currency: Currency): string {
  const exp: number = CURRENCY_EXPONENT[currency];
  const sign = minor < 0 ? '-' : '';
  const digits = Math.abs(minor)
    .toString()
    .padStart(exp + 1, '0');
  return exp === 0 ? sign + digits : `${sign}${digits.slice(0, -exp)}.${digits.slice(-exp)}`;
}

/** Decimal major units (string or number as providers send them) to minor units, exactly. */
export function fromMajor(major: string | number, currency: Currency): number {
  const exp: number = CURRENCY_EXPONENT[currency];
  const text = typeof major === 'number' ? major.toFixed(exp) : major.trim();
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal amount: ${JSON.stringify(major)}`);
  const [, sign, whole, frac = ''] = match;
  if (frac.length > exp && /[1-9]/.test(frac.slice(exp))) {
    throw new RangeError(`amount ${text} has more than ${exp} decimal places`);
  }
  const minor = Number(whole) * 10 ** exp + Number((frac + '0'.repeat(exp)).slice(0, exp));
  return sign === '-' ? -minor : minor;
}

/** Basis-point fee, rounded up so rounding never favours the payer over the house. */
export function bpsOf(amount: number, bps: number): number {
  return Number((BigInt(amount) * BigInt(bps) + 9_999n) / 10_000n);
}

/**
 * A /v1 amount: a decimal string of major units, e.g. "110.50", to minor units, exactly. Plain
 * digits with at most the currency's decimals, positive and within MAX_AMOUNT; no sign, no
 * exponent, no spaces, no number type (a JSON number may already have lost digits). The reason is
 * for the `amount` field's validation_error.
 */
export function parseMajorAmount(value: unknown, currency: Currency): { ok: true; minor: number } | { ok: false; reason: string } {
  const exp: number = CURRENCY_EXPONENT[currency];
  if (typeof value !== 'string') return { ok: false, reason: 'must be a decimal string of major units, such as "110.50"' };
  if (/[eE]/.test(value)) return { ok: false, reason: 'must not use exponent notation; write the digits, such as "1000.00"' };
  if (value.startsWith('-')) return { ok: false, reason: 'must be positive' };
  const match = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!match) return { ok: false, reason: 'must be a decimal number of major units with only digits and one point, such as "110.50"' };
  const [, whole, frac = ''] = match;
  if (frac.length > exp) return { ok: false, reason: `has more than ${exp} decimal places` };
  if (whole!.length > 15) return { ok: false, reason: 'is too large' };
  const minor = Number(whole) * 10 ** exp + Number(frac.padEnd(exp, '0') || '0');
  if (minor === 0) return { ok: false, reason: 'must be more than zero' };
  if (minor > MAX_AMOUNT) return { ok: false, reason: `must be at most ${toMajorString(MAX_AMOUNT, currency)}` };
  return { ok: true, minor };
}
