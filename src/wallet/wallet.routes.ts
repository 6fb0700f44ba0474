import { z } from 'zod';
import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { pageQuery } from '../http/pagination.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { ChargeService } from './charge-service.ts';
import type { NameEnquiryService } from './name-enquiry-service.ts';
import type { TransactionService } from './transaction-service.ts';
import type { TransferService } from './transfer-service.ts';
import {
  chargeSchema,
  createChargeBody,
  createTransferBody,
  nameResolutionSchema,
  resolveBankBody,
  resolveMomoBody,
  TRANSACTION_TYPES,
  transactionItemSchema,
  transferSchema,
  walletSchema,
} from './wallet.schemas.ts';

export interface WalletRouteDeps {
  ledger: Ledger;
  charges: ChargeService;
  transfers: TransferService;
  nameEnquiry: NameEnquiryService;
  transactions: TransactionService;
}

export function walletRoutes(deps: WalletRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/wallet',
      operationId: 'getWallet',
      summary: 'The GHS wallet balance: available, and reserved for pending transfers',
      tag: 'Wallet',
      scope: 'read',
      response: { status: 200, description: 'The balance, derived from the ledger', schema: envelopeOf(walletSchema) },
      errors: ['forbidden'],
      handler: async ({ auth }) => ({ status: 200, body: ok('Wallet balance', await deps.ledger.wallet(auth.environment, auth.merchantId)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/charges',
      operationId: 'createCharge',
      summary: 'Collect cedis from a mobile-money wallet',
      description:
        'Returns pending_provider: the customer approves on their phone and the provider calls back. Never treat the initiate response as success. The network is inferred from the number prefix unless `network` overrides it.',
      tag: 'Charges',
      area: 'finance',
      scope: 'collections:write',
      idempotent: true,
      body: createChargeBody,
      response: { status: 201, description: 'The charge, pending_provider (or failed when the provider refused it outright)', schema: envelopeOf(chargeSchema) },
      errors: ['forbidden', 'idempotency_conflict', 'idempotency_key_reused', 'provider_unavailable'],
      handler: ({ body, auth, idempotency }) => deps.charges.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/charges/:id',
      operationId: 'getCharge',
      summary: 'The latest state of a charge',
      tag: 'Charges',
      scope: 'read',
      params: pathIdParams('id', 'charge', 'chg_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The charge', schema: envelopeOf(chargeSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Charge', await findById('charge', params.id, () => deps.charges.get(auth, params.id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/transfers',
      operationId: 'createTransfer',
      summary: 'Pay out cedis to a mobile-money wallet or a bank account',
      description: 'Reserves amount + fees at once; the transfer resolves by callback. A failed transfer refunds the reservation.',
      tag: 'Transfers',
      area: 'finance',
      scope: 'transfers:write',
      signed: true,
      idempotent: true,
      body: createTransferBody,
      response: { status: 201, description: 'The transfer, pending (or failed when the provider refused it outright)', schema: envelopeOf(transferSchema) },
      errors: ['forbidden', 'invalid_signature', 'insufficient_funds', 'idempotency_conflict', 'idempotency_key_reused', 'provider_unavailable'],
      handler: ({ body, auth, idempotency }) => deps.transfers.create(body, auth, idempotency!),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/transfers/:id',
      operationId: 'getTransfer',
      summary: 'The latest state of a transfer',
      tag: 'Transfers',
      scope: 'read',
      params: pathIdParams('id', 'transfer', 'trf_0000000000aaaaaaaaaa'),
      response: { status: 200, description: 'The transfer', schema: envelopeOf(transferSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Transfer', await findById('transfer', params.id, () => deps.transfers.get(auth, params.id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/resolve/momo-name',
      operationId: 'resolveMomoName',
      summary: 'The registered name on a mobile-money wallet',
      tag: 'Name enquiry',
      area: 'finance',
      scope: 'read',
      body: resolveMomoBody,
      response: { status: 200, description: 'The wallet holder', schema: envelopeOf(nameResolutionSchema) },
      errors: ['forbidden', 'not_found', 'provider_unavailable'],
      handler: async ({ body, auth }) => ({ status: 200, body: ok('Name resolved', await deps.nameEnquiry.momo(auth, body)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/resolve/bank-name',
      operationId: 'resolveBankName',
      summary: 'The name on a bank account (GhIPSS name enquiry)',
      tag: 'Name enquiry',
      area: 'finance',
      scope: 'read',
      body: resolveBankBody,
      response: { status: 200, description: 'The account holder', schema: envelopeOf(nameResolutionSchema) },
      errors: ['forbidden', 'not_found', 'provider_unavailable'],
      handler: async ({ body, auth }) => ({ status: 200, body: ok('Name resolved', await deps.nameEnquiry.bank(auth, body)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/transactions',
      operationId: 'listTransactions',
      summary: 'Charges, transfers, trades, /v1 payouts and bills, newest first, cursor-paginated',
      tag: 'Transactions',
      scope: 'read',
      query: z.strictObject({ ...pageQuery, type: z.enum(TRANSACTION_TYPES).optional().describe('Only this kind') }),
      response: { status: 200, description: 'A page of transactions; meta.next_cursor is null on the last page', schema: listEnvelopeOf(transactionItemSchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.transactions.list(auth, query);
        return { status: 200, body: ok('Transactions', items, { next_cursor: nextCursor }) };
      },
    }),
  ];
}
