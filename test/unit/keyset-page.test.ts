import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, page } from '../../src/http/pagination.ts';
import { decodeCursor as decodeAtStore, encodeCursor as encodeAtStore, keysetPage } from '../../src/store/repositories/keyset-page.ts';

// The one keyset-paging helper: given rows fetched with LIMIT pageSize + 1, newest first by a
// sequence, the page and the cursor of the next one.

const rows = (...seqs: number[]) => seqs.map((seq) => ({ seq, id: `row_${seq}` }));

describe('keysetPage', () => {
  it('with one row more than the page: the page, and a cursor naming its last row', () => {
    const { items, nextCursor } = keysetPage(rows(9, 8, 7), 2);
    expect(items.map((r) => r.seq)).toEqual([9, 8]);
    expect(decodeCursor(nextCursor!)).toBe(8);
  });

  it('with no row beyond the page: the rows, and no next cursor', () => {
    expect(keysetPage(rows(9, 8), 2)).toEqual({ items: rows(9, 8), nextCursor: null });
    expect(keysetPage([], 2)).toEqual({ items: [], nextCursor: null });
  });

  it('a cursor round-trips, and one this API did not issue is a validation error on query.cursor', () => {
    expect(decodeCursor(encodeCursor(123_456))).toBe(123_456);
    expect(decodeCursor(undefined)).toBeUndefined();
    expect(() => decodeCursor('not-a-cursor')).toThrow(expect.objectContaining({ code: 'validation_error', fields: [{ field: 'query.cursor', message: 'invalid cursor' }] }));
  });

  it('http/pagination re-exports the same functions, so every list pages the same way', () => {
    expect(page).toBe(keysetPage);
    expect(encodeCursor).toBe(encodeAtStore);
    expect(decodeCursor).toBe(decodeAtStore);
  });
});
