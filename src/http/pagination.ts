import { z } from 'zod';

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

// Cursor encoding and the page cut live with the repositories (one keyset-paging helper);
// re-exported here so routes and services keep one import for paging.
export { decodeCursor, encodeCursor, keysetPage as page } from '../store/repositories/keyset-page.ts';
