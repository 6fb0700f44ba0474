import { z } from 'zod';
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

/** The success envelope's schema around one object: for a route's declared response and /openapi.json. */
export function envelopeOf<T extends z.ZodType>(data: T) {
  return z.object({ status: z.literal(true), message: z.string(), data });
}
export function listEnvelopeOf<T extends z.ZodType>(item: T) {
  return z.object({ status: z.literal(true), message: z.string(), data: z.array(item), meta: z.object({ next_cursor: z.string().nullable() }) });
}
