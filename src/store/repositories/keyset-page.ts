import { ValidationError } from '../../kernel/errors.ts';

// Keyset pagination on an insertion sequence, newest first. A cursor names the last row seen,
// so rows inserted meanwhile (always above it) never shift a page: nothing skipped or repeated.
// Every repository's list fetches LIMIT pageSize + 1 rows below the cursor and hands them here.

export function encodeCursor(seq: number): string {
  return Buffer.from(`v1:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^v1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError('cursor is not one this API issued', [{ field: 'query.cursor', message: 'invalid cursor' }]);
  return Number(match[1]);
}

/** Given rows fetched with LIMIT pageSize + 1 ordered by `seq` descending, the page and the next cursor. */
export function keysetPage<T extends { seq: number }>(rows: T[], pageSize: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, pageSize);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > pageSize && last ? encodeCursor(last.seq) : null };
}
