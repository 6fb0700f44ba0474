// Exact rate arithmetic. A rate is a bigint with 8 decimal places (RATE_SCALE); amounts are
// integer minor units. Every division says which way it rounds, and callers choose the
// direction that favours the house.

export const RATE_DECIMALS = 8;
export const RATE_SCALE = 10n ** BigInt(RATE_DECIMALS);

export type Rounding = 'up' | 'down';

export function divRound(numerator: bigint, denominator: bigint, rounding: Rounding): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must not be negative');
  const q = numerator / denominator;
  return rounding === 'up' && q * denominator !== numerator ? q + 1n : q;
}

/** "15.5" -> 1_550_000_000n. Positive, at most 8 decimal places. */
export function parseRate(text: string): bigint {
  const match = /^(\d{1,12})(?:\.(\d{1,8}))?$/.exec(text.trim());
  if (!match) throw new RangeError(`not a rate with at most ${RATE_DECIMALS} decimal places: ${JSON.stringify(text)}`);
  const value = BigInt(match[1]!) * RATE_SCALE + BigInt((match[2] ?? '').padEnd(RATE_DECIMALS, '0'));
  if (value <= 0n) throw new RangeError('a rate must be greater than zero');
  return value;
}

/** 1_550_000_000n -> "15.5" (no trailing zeros). */
export function formatRate(rate: bigint): string {
  const whole = rate / RATE_SCALE;
  const frac = (rate % RATE_SCALE).toString().padStart(RATE_DECIMALS, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}

/** For JSON display only; never computed with. */
export function rateToNumber(rate: bigint): number {
  return Number(formatRate(rate));
}

/** a × b for two rates. */
export function mulRates(a: bigint, b: bigint, rounding: Rounding): bigint {
  return divRound(a * b, RATE_SCALE, rounding);
}

/** A rate moved by basis points: +spread for buys (up), −spread for sells (down). */
export function applyBps(rate: bigint, bps: number, rounding: Rounding): bigint {
  return divRound(rate * BigInt(10_000 + bps), 10_000n, rounding);
}

// GHS has 2 decimals, USDT/USDC 6: one asset minor unit is 10^-6, one GHS minor unit 10^-2.
const ASSET_TO_FIAT_MINOR = 10n ** 4n; // 10^6 / 10^2

/** GHS minor units for `assetMinor` at `rate` (GHS per whole asset unit). */
export function fiatForAsset(assetMinor: bigint, rate: bigint, rounding: Rounding): bigint {
  return divRound(assetMinor * rate, RATE_SCALE * ASSET_TO_FIAT_MINOR, rounding);
}

/** Asset minor units that `fiatMinor` buys at `rate`. */
export function assetForFiat(fiatMinor: bigint, rate: bigint, rounding: Rounding): bigint {
  return divRound(fiatMinor * RATE_SCALE * ASSET_TO_FIAT_MINOR, rate, rounding);
}
