// Typed domain errors. They carry a stable code and details; only http/error-mapper.ts turns
// them into HTTP statuses.

export type ErrorCode =
  | 'validation_error'
  | 'unauthorized'
  | 'invalid_signature'
  | 'forbidden'
  | 'compliance_block'
  | 'not_found'
  | 'rate_expired'
  | 'idempotency_conflict'
  | 'payment_link_inactive'
  | 'ladder_out_of_order'
  | 'ip_not_allowed'
  | 'role_forbidden'
  | 'insufficient_funds'
  | 'limit_exceeded'
  | 'idempotency_key_reused'
  | 'replay_failed'
  | 'rate_limited'
  | 'provider_unavailable'
  | 'service_unavailable'
  | 'internal_error';

export type ErrorDetails = Record<string, unknown>;

export class RailyardError extends Error {
  /** Seconds after which the same request may succeed: sent as the Retry-After header. */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface FieldIssue {
  field: string;
  message: string;
}

export class ValidationError extends RailyardError {
  constructor(
    message: string,
    readonly fields: FieldIssue[] = [],
  ) {
    super('validation_error', message, fields.length ? { fields } : undefined);
  }
}

export class UnauthorizedError extends RailyardError {
  constructor(message = 'A valid API key is required: Authorization: Bearer sk_test_... or sk_live_...') {
    super('unauthorized', message);
  }
}

export class InvalidSignatureError extends RailyardError {
  constructor(message: string, reason: string) {
    super('invalid_signature', message, { reason });
  }
}

export class ForbiddenError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('forbidden', message, details);
  }
}

export class NotFoundError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('not_found', message, details);
  }
}

export class InsufficientFundsError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('insufficient_funds', message, details);
  }
}

export class ProviderUnavailableError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('provider_unavailable', message, details);
  }
}

/**
 * Retry-After of a 409 idempotency_conflict. One second: the request in flight is one initiation
 * (a provider call, a failover at most), which mostly ends within a second, and asking again is
 * cheap (a key read); a client backs off further on its own if it meets 409 again.
 */
export const IDEMPOTENCY_CONFLICT_RETRY_AFTER_SECONDS = 1;

export class IdempotencyConflictError extends RailyardError {
  override readonly retryAfterSeconds = IDEMPOTENCY_CONFLICT_RETRY_AFTER_SECONDS;

  constructor(key: string) {
    super('idempotency_conflict', `A request with Idempotency-Key "${key}" is still in flight; retry after it completes`, {
      idempotency_key: key,
    });
  }
}

export class IdempotencyKeyReusedError extends RailyardError {
  constructor(key: string) {
    super('idempotency_key_reused', `Idempotency-Key "${key}" was already used with a different request; use a new key for a new request`, { idempotency_key: key });
  }
}

export class RateExpiredError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('rate_expired', message, details);
  }
}

export class LimitExceededError extends RailyardError {
  constructor(message: string, details: { limit: string; limit_amount: number; used: number; requested: number; remaining: number; currency: string }) {
    super('limit_exceeded', message, details);
  }
}

export class ComplianceBlockError extends RailyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('compliance_block', message, details);
  }
}

/** A payment link that can no longer be paid: expired, deactivated or completed (its usage limit reached). */
export class PaymentLinkInactiveError extends RailyardError {
  constructor(message: string, details: { payment_link_id: string; state: 'expired' | 'deactivated' | 'completed' }) {
    super('payment_link_inactive', message, details);
  }
}

/** A service-ladder action asked for out of turn (request_access, then enable_sandbox, then go_live). */
export class LadderOutOfOrderError extends RailyardError {
  constructor(message: string, details: { stage: string; action: string; expected_action: string | null }) {
    super('ladder_out_of_order', message, details);
  }
}

/** The key has an IP allowlist and the request came from another address. */
export class IpNotAllowedError extends RailyardError {
  constructor(ip: string) {
    super('ip_not_allowed', `Requests with this API key are not accepted from ${ip}; add the address to the key's IP allowlist`, { ip });
  }
}

/** The key's role (finance or engineering) does not cover the route's area. */
export class RoleForbiddenError extends RailyardError {
  constructor(role: string, area: string) {
    super('role_forbidden', `A key with the ${role} role cannot use ${area} actions`, { role, area });
  }
}

/** The service is busy with work it does one at a time (a sandbox replay); retry when it is done. */
export class RateLimitedError extends RailyardError {
  override readonly retryAfterSeconds: number | undefined = undefined;

  constructor(message: string, details?: ErrorDetails, retryAfterSeconds?: number) {
    super('rate_limited', message, details);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * An answer a sandbox fault rule (a scenario's `api:` section) injected: 500 internal_error or
 * 503 service_unavailable, before the work (nothing happened) or in place of a committed answer.
 */
export class InjectedFaultError extends RailyardError {
  constructor(
    readonly status: 500 | 503,
    message: string,
  ) {
    super(status === 500 ? 'internal_error' : 'service_unavailable', message);
  }
}

/** A sandbox replay ran and a step failed (or the file no longer loads): the report is in details. */
export class ReplayFailedError extends RailyardError {
  constructor(message: string, report: ErrorDetails) {
    super('replay_failed', message, report);
  }
}
