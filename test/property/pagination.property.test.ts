// Cursor pagination of GET /api/v1/transactions: keyset on an insertion sequence, newest first.
// Cursors are stable under inserts: a walk returns exactly the rows that existed when it started.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const MERCHANT = 'mch_sandbox';
const SUCCESS_MSISDN = '0551234987';

type Kind = 'charge' | 'transfer';

async function createCharge(sb: TestSandbox, key?: string): Promise<string> {
  const res = await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: SUCCESS_MSISDN }, key ? { key } : {});
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

let transferSalt = 0;
async function createTransfer(sb: TestSandbox): Promise<string> {
  // Amounts vary so that two transfers in one virtual second never carry the same signature.
  const res = await sb.transfer({ amount: 100 + (++transferSalt % 1000), currency: 'GHS', channel: 'momo', msisdn: SUCCESS_MSISDN });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

async function create(sb: TestSandbox, kind: Kind): Promise<string> {
  return kind === 'charge' ? createCharge(sb) : createTransfer(sb);
}

/** The merchant's rows, newest first, straight from the table the list pages over. */
async function rowsNow(sb: TestSandbox, environment: 'test' | 'live' = 'test', type?: Kind): Promise<{ seq: number; id: string }[]> {
  const rows = await sb.ry.store.all<{ seq: number; object_id: string }>(
    `SELECT seq, object_id FROM transactions WHERE environment = ? AND merchant_id = ? AND (? IS NULL OR object_type = ?) ORDER BY seq DESC`,
    [environment, MERCHANT, type ?? null, type ?? null],
  );
  return rows.map((r) => ({ seq: Number(r.seq), id: r.object_id }));
}

interface Page {
  ids: string[];
  nextCursor: string | null;
}

async function fetchPage(sb: TestSandbox, params: { cursor?: string | null; page_size?: number; type?: Kind }, key?: string): Promise<Page> {
  const qs = new URLSearchParams();
  if (params.cursor) qs.set('cursor', params.cursor);
  if (params.page_size !== undefined) qs.set('page_size', String(params.page_size));
  if (params.type) qs.set('type', params.type);
  const res = await sb.get(`/api/v1/transactions${qs.size ? `?${qs}` : ''}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status).toBe(true);
  expect(Array.isArray(res.body.data)).toBe(true);
  expect(res.body.meta).toHaveProperty('next_cursor');
  return { ids: res.body.data.map((item: { id: string }) => item.id), nextCursor: res.body.meta.next_cursor };
}

/** Walks every page; `between(pageNumber)` runs after each page that has a next one. */
async function walk(sb: TestSandbox, params: { page_size?: number; type?: Kind }, between: (pageNumber: number) => Promise<void> = async () => undefined, key?: string): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await fetchPage(sb, { ...params, cursor }, key);
    pages.push(page);
    if (page.nextCursor === null) return pages;
    expect(pages.length, 'the walk does not end').toBeLessThan(500);
    await between(pages.length);
    cursor = page.nextCursor;
  }
}

function expectPagesShapedBy(pages: Page[], pageSize: number, total: number): void {
  // next_cursor is null exactly on the last page; every other page is full.
  expect(pages.length).toBe(Math.max(1, Math.ceil(total / pageSize)));
  pages.forEach((page, i) => {
    const last = i === pages.length - 1;
    if (last) {
      expect(page.nextCursor).toBeNull();
      expect(page.ids.length).toBe(total - pageSize * i);
    } else {
      expect(page.nextCursor).toEqual(expect.any(String));
      expect(page.ids.length).toBe(pageSize);
    }
  });
}

describe('GET /api/v1/transactions pagination', () => {
  it('paging while inserting never skips or repeats a row: the walk returns exactly the rows that existed when it started, newest first', async () => {
    const insertPlan = fc.array(
      fc.record({
        charges: fc.integer({ min: 0, max: 2 }),
        transfers: fc.integer({ min: 0, max: 1 }),
        advanceSeconds: fc.constantFrom(0, 0, 3, 6, 61),
      }),
      { minLength: 1, maxLength: 12 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<Kind | undefined>(undefined, undefined, 'charge', 'transfer'),
        fc.array(fc.constantFrom<Kind>('charge', 'transfer'), { minLength: 40, maxLength: 40 }),
        insertPlan,
        async (n, pageSize, type, kinds, plan) => {
          await withSandbox(async (sb) => {
            await sb.fund(10_000_000);
            for (let i = 0; i < n; i++) await create(sb, kinds[i]!);

            const atStart = await rowsNow(sb, 'test', type);
            const inserted: string[] = [];
            const pages = await walk(sb, { page_size: pageSize, type }, async (pageNumber) => {
              const step = plan[(pageNumber - 1) % plan.length]!;
              for (let i = 0; i < step.charges; i++) inserted.push(await createCharge(sb));
              for (let i = 0; i < step.transfers; i++) inserted.push(await createTransfer(sb));
              // Rows that settle mid-walk change status, never position.
              if (step.advanceSeconds) await sb.advance(step.advanceSeconds);
            });

            const walked = pages.flatMap((p) => p.ids);
            // Exactly the starting rows, each once, in the same newest-first order.
            expect(walked).toEqual(atStart.map((r) => r.id));
            expect(new Set(walked).size).toBe(walked.length);
            for (const id of inserted) expect(walked).not.toContain(id);
            // Strictly descending insertion sequence.
            const seqOf = new Map((await rowsNow(sb)).map((r) => [r.id, r.seq]));
            const seqs = walked.map((id) => seqOf.get(id)!);
            for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeLessThan(seqs[i - 1]!);
            expectPagesShapedBy(pages, pageSize, atStart.length);

            // A fresh walk afterwards sees the new rows too, above the old ones.
            const after = (await walk(sb, { page_size: 100, type })).flatMap((p) => p.ids);
            expect(after).toEqual((await rowsNow(sb, 'test', type)).map((r) => r.id));
            expect(after.slice(after.length - walked.length)).toEqual(walked);
          });
        },
      ),
      { numRuns: 25 },
    );
  });

  it.each([
    { rows: 0, pageSize: 5 },
    { rows: 1, pageSize: 1 },
    { rows: 4, pageSize: 5 },
    { rows: 5, pageSize: 5 },
    { rows: 6, pageSize: 5 },
    { rows: 10, pageSize: 5 },
    { rows: 7, pageSize: 100 },
  ])('next_cursor is null exactly on the last page: $rows rows at page_size $pageSize', async ({ rows, pageSize }) => {
    await withSandbox(async (sb) => {
      for (let i = 0; i < rows; i++) await createCharge(sb);
      const pages = await walk(sb, { page_size: pageSize });
      expectPagesShapedBy(pages, pageSize, rows);
      expect(pages.flatMap((p) => p.ids)).toEqual((await rowsNow(sb)).map((r) => r.id));
    });
  });

  it('pages 20 rows at a time when page_size is omitted', async () => {
    await withSandbox(async (sb) => {
      for (let i = 0; i < 25; i++) await createCharge(sb);
      const pages = await walk(sb, {});
      expect(pages.map((p) => p.ids.length)).toEqual([20, 5]);
      expect(pages.map((p) => p.nextCursor === null)).toEqual([false, true]);
    });
  });

  it('serves page_size 100, the maximum, in one page of 100 with a cursor to the rest', async () => {
    await withSandbox(async (sb) => {
      for (let i = 0; i < 101; i++) await createCharge(sb);
      const pages = await walk(sb, { page_size: 100 });
      expectPagesShapedBy(pages, 100, 101);
    });
  });

  describe('environments never see each other through a cursor', () => {
    async function liveKey(sb: TestSandbox): Promise<string> {
      const res = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'collections:write'] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.key).toMatch(/^sk_live_/);
      return res.body.data.key;
    }

    it('a live key lists none of the test rows', async () => {
      await withSandbox(async (sb) => {
        for (let i = 0; i < 3; i++) await createCharge(sb);
        const live = await liveKey(sb);
        const pages = await walk(sb, { page_size: 2 }, undefined, live);
        expect(pages).toEqual([{ ids: [], nextCursor: null }]);
      });
    });

    it('a cursor from the test key, used with a live key, reveals no test row (and vice versa)', async () => {
      await withSandbox(async (sb) => {
        const live = await liveKey(sb);
        // Interleave the two environments so that cursors of one fall between rows of the other.
        const testIds: string[] = [];
        const liveIds: string[] = [];
        for (let i = 0; i < 6; i++) {
          testIds.push(await createCharge(sb));
          liveIds.push(await createCharge(sb, live));
        }
        expect(await rowsNow(sb, 'live')).toHaveLength(6);

        const testPages = await walk(sb, { page_size: 2 });
        const livePages = await walk(sb, { page_size: 2 }, undefined, live);
        expect(testPages.flatMap((p) => p.ids).sort()).toEqual([...testIds].sort());
        expect(livePages.flatMap((p) => p.ids).sort()).toEqual([...liveIds].sort());

        for (const cursor of testPages.map((p) => p.nextCursor).filter((c): c is string => c !== null)) {
          const crossed = await fetchPage(sb, { cursor, page_size: 100 }, live);
          for (const id of crossed.ids) {
            expect(testIds).not.toContain(id);
            expect(liveIds).toContain(id);
          }
        }
        for (const cursor of livePages.map((p) => p.nextCursor).filter((c): c is string => c !== null)) {
          const crossed = await fetchPage(sb, { cursor, page_size: 100 });
          for (const id of crossed.ids) {
            expect(liveIds).not.toContain(id);
            expect(testIds).toContain(id);
          }
        }
        // Nor can a live key read a test charge by id.
        const res = await sb.get(`/api/v1/charges/${testIds[0]}`, live);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      });
    });
  });

  describe('cursors the API did not issue', () => {
    it.each([
      ['random text', 'not-a-cursor'],
      ['a bare number', '12'],
      ['base64 of a negative sequence', Buffer.from('v1:-5').toString('base64url')],
      ['base64 of another version', Buffer.from('v2:5').toString('base64url')],
      ['base64 of a 16-digit sequence', Buffer.from('v1:1234567890123456').toString('base64url')],
    ])('rejects %s with validation_error naming cursor', async (_name, cursor) => {
      await withSandbox(async (sb) => {
        await createCharge(sb);
        const res = await sb.get(`/api/v1/transactions?cursor=${encodeURIComponent(cursor)}`);
        expect(res.status).toBe(400);
        expect(res.body.status).toBe(false);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field).some((f: string) => /(^|\.)cursor$/.test(f))).toBe(true);
      });
    });
  });
});
