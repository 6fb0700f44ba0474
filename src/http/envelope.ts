import type { ErrorCode, ErrorDetails } from '../kernel/errors.ts';

export interface SuccessEnvelope<T> {
  status: true;
  message: string;
  data: T;
  meta?: { next_cursor: string | null };
}

export interface ErrorEnvelope {
  status: false;
  message: string;
  error: { code: ErrorCode; details?: ErrorDetails };
}

export function ok<T>(message: string, data: T, meta?: { next_cursor: string | null }): SuccessEnvelope<T> {
  return meta ? { status: true, message, data, meta } : { status: true, message, data };
}

export function failure(code: ErrorCode, message: string, details?: ErrorDetails): ErrorEnvelope {
  return details ? { status: false, message, error: { code, details } } : { status: false, message, error: { code } };
}
