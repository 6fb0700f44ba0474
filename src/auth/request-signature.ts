import type { Clock } from '../kernel/clock.ts';
import { InvalidSignatureError } from '../kernel/errors.ts';
import { safeEqual } from '../kernel/secrets.ts';
import { signRequest, type SignableRequest } from '../kernel/sign-request.ts';
import type { AuthContext } from './api-key-service.ts';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface SignedRequest extends SignableRequest {
  timestamp: string | undefined;
  signature: string | undefined;
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
      throw new InvalidSignatureError('X-Service-Signature does not match the request (it covers the timestamp, method, path and query, Idempotency-Key and raw body)', 'mismatch');
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
