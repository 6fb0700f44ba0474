import type { Clock } from '../kernel/clock.ts';
import { InvalidSignatureError } from '../kernel/errors.ts';
import { hmacSha256Hex, safeEqual } from '../kernel/secrets.ts';
import type { Store } from '../store/db.ts';
import type { AuthContext } from './api-key-service.ts';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface SignedRequest {
  method: string;
  pathAndQuery: string;
  rawBody: string;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** The string a merchant signs: `${timestamp}.${METHOD}.${path_and_query}.${raw_body}`. */
export function signingPayload(timestamp: string, method: string, pathAndQuery: string, rawBody: string): string {
  return `${timestamp}.${method.toUpperCase()}.${pathAndQuery}.${rawBody}`;
}

export function signRequest(secret: string, timestamp: string, method: string, pathAndQuery: string, rawBody: string): string {
  return hmacSha256Hex(secret, signingPayload(timestamp, method, pathAndQuery, rawBody));
}

/**
 * X-Service-Signature = hex HMAC-SHA256(signing secret, payload); X-Service-Timestamp within
 * ±300 s of real time (merchants sign with their own clocks, even when the sandbox runs on a
 * virtual one); a signature already seen inside that window is a replay.
 */
export class RequestSignatureVerifier {
  constructor(private readonly deps: { clock: Clock; store: Store }) {}

  async verify(auth: AuthContext, req: SignedRequest): Promise<void> {
    if (!req.timestamp || !req.signature) {
      throw new InvalidSignatureError('X-Service-Timestamp and X-Service-Signature headers are required', 'missing');
    }
    if (!/^\d{1,12}$/.test(req.timestamp)) {
      throw new InvalidSignatureError('X-Service-Timestamp must be a Unix timestamp in seconds', 'malformed_timestamp');
    }
    const nowSeconds = Math.floor(this.deps.clock.now() / 1000);
    if (Math.abs(nowSeconds - Number(req.timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
      throw new InvalidSignatureError(
        `X-Service-Timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from the server time (${nowSeconds})`,
        'stale',
      );
    }
    const expected = signRequest(auth.signingSecret, req.timestamp, req.method, req.pathAndQuery, req.rawBody);
    if (!safeEqual(expected, req.signature.toLowerCase())) {
      throw new InvalidSignatureError('X-Service-Signature does not match the request', 'mismatch');
    }
    const expiresAt = (Number(req.timestamp) + SIGNATURE_TOLERANCE_SECONDS) * 1000;
    const fresh = await this.deps.store.transaction(async (tx) => {
      await tx.run('DELETE FROM seen_signatures WHERE expires_at < ?', [this.deps.clock.now()]);
      const r = await tx.run('INSERT INTO seen_signatures (key_id, signature, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
        auth.keyId,
        expected,
        expiresAt,
      ]);
      return r.changes === 1;
    });
    if (!fresh) throw new InvalidSignatureError('This signature was already used; sign each request afresh', 'replayed');
  }
}

/**
 * For clients that sign many requests (replays, tests): a timestamp whose signature over this
 * request was never used, the newest such second within the last 250. Two identical requests
 * signed in the same second would carry one signature twice: a replay.
 */
export function unusedTimestamp(used: Set<string>, nowSeconds: number, sign: (ts: string) => string): string {
  for (let back = 0; back < 250; back++) {
    const ts = String(nowSeconds - back);
    const signature = sign(ts);
    if (!used.has(signature)) {
      used.add(signature);
      return ts;
    }
  }
  throw new Error('more than 250 identical signed requests inside the signature window');
}

/** X-Service-Timestamp and X-Service-Signature for a request, signed now with a signature never used before. */
export function signatureHeaders(
  secret: string,
  used: Set<string>,
  nowMs: number,
  request: { method: string; pathAndQuery: string; rawBody: string },
): { 'x-service-timestamp': string; 'x-service-signature': string } {
  const sign = (ts: string) => signRequest(secret, ts, request.method, request.pathAndQuery, request.rawBody);
  const ts = unusedTimestamp(used, Math.floor(nowMs / 1000), sign);
  return { 'x-service-timestamp': ts, 'x-service-signature': sign(ts) };
}
