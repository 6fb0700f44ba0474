import { hmacSha256Hex } from './secrets.ts';

// The request signature of the decisions table, in one place: the verifier (auth/) checks it and
// every client of the API (the dashboard, the CLI, contracts, bench, tests) computes it.

/** What a signature covers. */
export interface SignableRequest {
  method: string;
  pathAndQuery: string;
  /** The Idempotency-Key header; empty or absent when the request has none. */
  idempotencyKey?: string | undefined;
  rawBody: string;
}

/**
 * The string a merchant signs: `${timestamp}.${METHOD}.${path_and_query}.${idempotency_key}.${raw_body}`.
 * Covering the Idempotency-Key makes a byte-identical retry an idempotent retry (the stored
 * answer), while a captured request replayed under another key no longer matches its signature.
 */
export function signingPayload(timestamp: string, req: SignableRequest): string {
  return `${timestamp}.${req.method.toUpperCase()}.${req.pathAndQuery}.${req.idempotencyKey ?? ''}.${req.rawBody}`;
}

/** X-Service-Signature: hex HMAC-SHA256, keyed with the key's signing secret, of the signing payload. */
export function signRequest(secret: string, timestamp: string, req: SignableRequest): string {
  return hmacSha256Hex(secret, signingPayload(timestamp, req));
}

/** X-Service-Timestamp and X-Service-Signature for a request, signed now. */
export function signatureHeaders(secret: string, nowMs: number, req: SignableRequest): { 'x-service-timestamp': string; 'x-service-signature': string } {
  const ts = String(Math.floor(nowMs / 1000));
  return { 'x-service-timestamp': ts, 'x-service-signature': signRequest(secret, ts, req) };
}
