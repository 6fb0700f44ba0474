import { z } from 'zod';
import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { LedgerReportService } from './ledger-report-service.ts';
import { ledgerEntriesQuery, ledgerEntrySchema, settlementListQuery, settlementSchema, settlementSummarySchema } from './ledger.schemas.ts';

export interface LedgerRouteDeps {
  reports: LedgerReportService;
}

const settlementId = () => pathIdParams('id', 'settlement', 'stl_20260101');

export function ledgerRoutes(deps: LedgerRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/ledger/entries',
      operationId: 'listLedgerEntries',
      summary: 'Ledger entries: every posting of your journals, newest first, cursor-paginated',
      description:
        "The reconciliation source of truth. Every object that moved money (charge, transfer, trade, collection, payout, bill, wallet funding) maps to its journals, and each journal to its entries, which net to zero per currency: filter by object_id to see one object whole, or by a settlement id (stl_YYYYMMDD) for that report's day. Balances are the sums of entries.",
      tag: 'Ledger',
      area: 'finance',
      scope: 'read',
      query: ledgerEntriesQuery,
      response: { status: 200, description: 'A page of entries; meta.next_cursor is null on the last page', schema: listEnvelopeOf(ledgerEntrySchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.reports.entries(auth, query);
        return { status: 200, body: ok('Ledger entries', items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/settlements',
      operationId: 'listSettlements',
      summary: 'Daily settlement reports of the days your wallet moved, newest first, cursor-paginated',
      description: 'One report per UTC day with wallet activity: opening and closing balance, gross in, gross out, fees and counts. The receipt lines are on GET /v1/settlements/{id}.',
      tag: 'Ledger',
      area: 'finance',
      scope: 'read',
      query: settlementListQuery,
      response: { status: 200, description: 'A page of reports (without their lines)', schema: listEnvelopeOf(settlementSummarySchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.reports.settlements(auth, query);
        return { status: 200, body: ok('Settlements', items, { next_cursor: nextCursor }) };
      },
    }),
    // Before /v1/settlements/:id, which would otherwise take "stl_….csv" as an id.
    defineRoute({
      method: 'get',
      path: '/v1/settlements/:id.csv',
      operationId: 'exportSettlementCsv',
      summary: "A settlement report's receipt lines as CSV",
      description: 'RFC 4180, CRLF line ends, a header row; one row per receipt line with gross, fee and net in minor units and again in major units.',
      tag: 'Ledger',
      area: 'finance',
      scope: 'read',
      params: settlementId(),
      response: { status: 200, description: 'text/csv', schema: z.string(), contentType: 'text/csv; charset=utf-8' },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        contentType: 'text/csv; charset=utf-8',
        headers: { 'content-disposition': `attachment; filename="${params.id.replace(/[^A-Za-z0-9_]/g, '')}.csv"` },
        body: await findById('settlement', params.id, () => deps.reports.settlementCsv(auth, params.id)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/settlements/:id',
      operationId: 'getSettlement',
      summary: 'One daily settlement report with its receipt lines',
      tag: 'Ledger',
      area: 'finance',
      scope: 'read',
      params: settlementId(),
      response: { status: 200, description: 'The report', schema: envelopeOf(settlementSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Settlement', await findById('settlement', params.id, () => deps.reports.settlement(auth, params.id))),
      }),
    }),
  ];
}
