import { z } from 'zod';
import { ValidationError } from '../kernel/errors.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const pageQuery = {
  cursor: z.string().max(200).optional().describe('Opaque cursor from meta.next_cursor of the previous page'),
  // Plain decimal digits only: no 0x10, 1e1 or 10.0.
  page_size: z
    .string()
    .regex(/^\d{1,15}$/, 'page_size must be a whole number')
    .transform(Number)
    .pipe(z.number().min(1, 'page_size must be at least 1').max(MAX_PAGE_SIZE, `page_size must be at most ${MAX_PAGE_SIZE}`))
    .optional()
    .describe(`Items per page, 1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}`),
};

// Keyset pagination on an insertion sequence, newest first. A cursor names the last row seen,
// so rows inserted meanwhile (always above it) never shift a page: nothing skipped or repeated.
export function encodeCursor(seq: number): string {
  return Buffer.from(`v1:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError('cursor is not one this API issued', [{ field: 'query.cursor', message: 'invalid cursor' }]);
  return Number(match[1]);
}

/** Given rows fetched with LIMIT pageSize + 1, the page and the next cursor. */
export function page<T extends { seq: number }>(rows: T[], pageSize: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, pageSize);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > pageSize && last ? encodeCursor(last.seq) : null };
}
