import type { Clock } from '../kernel/clock.ts';
import { InvalidSignatureError } from '../kernel/errors.ts';
import { hmacSha256Hex, safeEqual } from '../kernel/secrets.ts';
import type { AuthContext } from './api-key-service.ts';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** What a signature covers. */
export interface SignableRequest {
  method: string;
  pathAndQuery: string;
  /** The Idempotency-Key header; empty or absent when the request has none. */
  idempotencyKey?: string | undefined;
  rawBody: string;
}

export interface SignedRequest extends SignableRequest {
  timestamp: string | undefined;
  signature: string | undefined;
}

/**
 * The string a merchant signs: `${timestamp}.${METHOD}.${path_and_query}.${idempotency_key}.${raw_body}`.
 * Covering the Idempotency-Key makes a byte-identical retry an idempotent retry (the stored
 * answer), while a captured request replayed under another key no longer matches its signature.
 */
export function signingPayload(timestamp: string, req: SignableRequest): string {
  return `${timestamp}.${req.method.toUpperCase()}.${req.pathAndQuery}.${req.idempotencyKey ?? ''}.${req.rawBody}`;
}

export function signRequest(secret: string, timestamp: string, req: SignableRequest): string {
  return hmacSha256Hex(secret, signingPayload(timestamp, req));
}

/**
 * Whether the server already holds this very request under its Idempotency-Key (a stored
 * answer, or a claim in flight or being recovered). Such a retry can cause no new effect, so
 * its timestamp may be old. The http pipeline supplies it; auth knows nothing of idempotency.
 */
export type KnownRetry = () => Promise<boolean>;

/** How a request's signature was accepted: signed now, or an old signature on a request already held. */
export type SignatureVerdict = 'fresh' | 'known_retry';

/**
 * X-Service-Signature = hex HMAC-SHA256(signing secret, payload); X-Service-Timestamp within
 * ±300 s of real time (merchants sign with their own clocks, even when the sandbox runs on a
 * virtual one) for a request the server has not seen. There is no replay cache: a signature
 * can only be reused with its own Idempotency-Key and bytes, where idempotency answers it (the
 * stored response, or 409 in flight), whatever its age: a byte-identical retry after a long
 * outage is answered from the store, never refused.
 */
export class RequestSignatureVerifier {
  constructor(private readonly deps: { clock: Clock }) {}

  async verify(auth: AuthContext, req: SignedRequest, knownRetry?: KnownRetry): Promise<SignatureVerdict> {
    if (!req.timestamp || !req.signature) {
      throw new InvalidSignatureError('X-Service-Timestamp and X-Service-Signature headers are required', 'missing');
    }
    if (!/^\d{1,12}$/.test(req.timestamp)) {
      throw new InvalidSignatureError('X-Service-Timestamp must be a Unix timestamp in seconds', 'malformed_timestamp');
    }
    // The signature first: nothing about the key's history is revealed to a request that is not
    // the merchant's own.
    const expected = signRequest(auth.signingSecret, req.timestamp, req);
    if (!safeEqual(expected, req.signature.toLowerCase())) {
      throw new InvalidSignatureError(
        'X-Service-Signature does not match the request (it covers the timestamp, method, path and query, Idempotency-Key and raw body)',
        'mismatch',
      );
    }
    if (Math.abs(this.nowSeconds() - Number(req.timestamp)) <= SIGNATURE_TOLERANCE_SECONDS) return 'fresh';
    if (knownRetry && (await knownRetry())) return 'known_retry';
    throw this.staleError();
  }

  /** The refusal of a timestamp outside the window on a request the server does not hold. */
  staleError(): InvalidSignatureError {
    return new InvalidSignatureError(
      `X-Service-Timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from the server time (${this.nowSeconds()}); sign a new attempt with a fresh timestamp`,
      'stale',
    );
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.now() / 1000);
  }
}

/** X-Service-Timestamp and X-Service-Signature for a request, signed now. */
export function signatureHeaders(secret: string, nowMs: number, req: SignableRequest): { 'x-service-timestamp': string; 'x-service-signature': string } {
  const ts = String(Math.floor(nowMs / 1000));
  return { 'x-service-timestamp': ts, 'x-service-signature': signRequest(secret, ts, req) };
}
