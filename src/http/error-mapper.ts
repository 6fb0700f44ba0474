import type { ErrorRequestHandler } from 'express';
import type { Duplex } from 'node:stream';
import { RailyardError, type ErrorCode } from '../kernel/errors.ts';
import type { Logger } from '../kernel/logger.ts';
import { failure, type ErrorEnvelope } from './envelope.ts';

// The one place where domain error codes become HTTP statuses (DESIGN.md decisions table).
export const HTTP_STATUS: Record<ErrorCode, number> = {
  validation_error: 400,
  unauthorized: 401,
  invalid_signature: 401,
  forbidden: 403,
  compliance_block: 403,
  ip_not_allowed: 403,
  role_forbidden: 403,
  not_found: 404,
  rate_expired: 409,
  idempotency_conflict: 409,
  payment_link_inactive: 409,
  ladder_out_of_order: 409,
  insufficient_funds: 422,
  limit_exceeded: 422,
  idempotency_key_reused: 422,
  replay_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  provider_unavailable: 502,
  service_unavailable: 503,
};

export function toErrorResponse(err: unknown, logger: Logger): { status: number; body: ErrorEnvelope; headers?: Record<string, string> } {
  if (err instanceof RailyardError) {
    const headers = err.retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(err.retryAfterSeconds) };
    return { status: HTTP_STATUS[err.code], body: failure(err.code, err.message, err.details), ...(headers ? { headers } : {}) };
  }
  // body-parser's errors: malformed JSON, oversized or oddly encoded bodies.
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.parse.failed') {
    return { status: 400, body: failure('validation_error', 'The request body is not valid JSON', { fields: [{ field: 'body', message: 'malformed JSON' }] }) };
  }
  if (e?.type === 'entity.too.large') {
    return { status: 400, body: failure('validation_error', 'The request body is larger than 100 kB', { fields: [{ field: 'body', message: 'too large' }] }) };
  }
  // A path segment that is not valid percent-encoding.
  if (err instanceof URIError) {
    return { status: 400, body: failure('validation_error', 'The request URL could not be decoded', { fields: [{ field: 'path', message: 'malformed percent-encoding' }] }) };
  }
  // Other client errors from reading the body: a corrupt gzip stream, an unknown charset...
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return {
      status: 400,
      body: failure('validation_error', 'The request body could not be read', { fields: [{ field: 'body', message: String(e.type ?? (e as { code?: string }).code ?? 'unreadable') }] }),
    };
  }
  logger.error('unhandled error', { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  return { status: 500, body: failure('internal_error', 'Something went wrong inside railyard; nothing was changed') };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const { status, body, headers } = toErrorResponse(err, logger);
    if (headers) res.set(headers);
    res.status(status).json(body);
  };
}

/**
 * For node:http's 'clientError' event: a request node cannot parse (a malformed request line
 * or header, headers over its 16 kB limit) never reaches express, and node's own answer is a
 * bare 400 or 431 with no body. This answers with the envelope instead:
 * `server.on('clientError', answerClientError)`.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify(
    tooLarge
      ? failure('validation_error', 'The request line and headers are larger than 16 kB', { fields: [{ field: 'headers', message: 'too large' }] })
      : failure('validation_error', 'The request is not well-formed HTTP', { fields: [{ field: 'request', message: 'malformed' }] }),
  );
  socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
