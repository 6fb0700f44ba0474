import { ok, envelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { recordListRoute } from '../http/record-list-route.ts';
import { z } from 'zod';
import type { BillService } from './bill-service.ts';
import { billProductSchema, billProductsQuery, billSchema, createBillBody } from './bills.schemas.ts';

export interface BillRouteDeps {
  bills: BillService;
}

export function billRoutes(deps: BillRouteDeps): RouteSpec[] {
  return [
    recordListRoute({
      path: '/v1/bills',
      operationId: 'listBills',
      tag: 'Bills',
      title: 'Bills',
      statuses: ['pending', 'settled', 'failed'],
      item: billSchema,
      records: deps.bills.settlement,
    }),
    defineRoute({
      method: 'post',
      path: '/v1/bills',
      operationId: 'createBill',
      summary: 'Pay a bill: airtime, a data bundle, ECG prepaid, water or TV',
      description:
        'Form-encoded or JSON. Reserves amount + fee at once and vends through the biller aggregator: bill.settled (an ECG vend carries its token and units) or bill.failed with the reservation refunded. An unknown meter or smartcard is refused at once: 201 with the bill failed (invalid_customer), refunded.',
      tag: 'Bills',
      area: 'finance',
      scope: 'transfers:write',
      signed: true,
      idempotent: true,
      body: createBillBody,
      response: { status: 201, description: 'The bill, pending (or failed when the biller refused it outright)', schema: envelopeOf(billSchema) },
      errors: ['forbidden', 'invalid_signature', 'insufficient_funds', 'idempotency_conflict', 'idempotency_key_reused', 'provider_unavailable'],
      handler: ({ body, auth, idempotency }) => deps.bills.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/bills/products',
      operationId: 'listBillProducts',
      summary: 'What POST /v1/bills sells: data bundles and TV packages with their prices, and the open-amount billers with their bounds',
      tag: 'Bills',
      scope: 'read',
      query: billProductsQuery,
      response: { status: 200, description: 'The catalogue', schema: envelopeOf(z.array(billProductSchema)) },
      errors: ['forbidden'],
      handler: async ({ query }) => ({ status: 200, body: ok('Bill products', deps.bills.products(query)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/bills/:id',
      operationId: 'getBill',
      summary: 'The latest state of a bill payment (with its token once an ECG vend settles)',
      tag: 'Bills',
      scope: 'read',
      params: pathIdParams('id', 'bill', 'bil_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The bill', schema: envelopeOf(billSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Bill', await findById('bill', params.id, () => deps.bills.get(auth, params.id))),
      }),
    }),
  ];
}
