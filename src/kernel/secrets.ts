import { createHmac, hash, timingSafeEqual } from 'node:crypto';

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

export function hmacSha256Hex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

export function hmacSha512Hex(secret: string, text: string): string {
  return createHmac('sha512', secret).update(text).digest('hex');
}

/** Constant-time equality for secrets, signatures and tokens of any length. */
export function safeEqual(a: string, b: string): boolean {
  // Hashing first gives equal lengths, so timingSafeEqual never throws and length leaks nothing.
  const ha = hash('sha256', a, 'buffer');
  const hb = hash('sha256', b, 'buffer');
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
