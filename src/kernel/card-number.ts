// What a card number itself says, for the merchant API's validation and the card processor's
// mock alike: whether its check digit holds, and its brand.

/** Luhn's check digit: catches a mistyped card number before any processor sees it. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The card brand from the number's leading digits (IIN ranges), for display only. */
export function cardBrand(digits: string): 'visa' | 'mastercard' | 'verve' | 'unknown' {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(digits)) return 'mastercard';
  if (/^(506[01]|5078|6500)/.test(digits)) return 'verve';
  return 'unknown';
}
