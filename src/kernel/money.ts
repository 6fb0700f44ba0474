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
  const digits = Math.abs(minor).toString().padStart(exp + 1, '0');
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
