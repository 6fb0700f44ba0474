import { z } from 'zod';
import { ok, envelopeOf, listEnvelopeOf } from '../http/envelope.ts';
import { findById } from '../http/find-by-id.ts';
import { pageQuery } from '../http/pagination.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { QuoteService } from './quote-service.ts';
import type { TradeService } from './trade-service.ts';
import { executeBody, listedQuoteSchema, QUOTE_STATUSES, quoteBody, quoteReferenceParams, quoteSchema, TRADE_STATUSES, tradeReferenceParams, tradeSchema } from './trading.schemas.ts';

export function tradingRoutes(deps: { quotes: QuoteService; trades: TradeService }): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/trades/quote',
      operationId: 'createQuote',
      summary: 'Price one side of a trade; execute it before expires_at',
      description:
        'Any valid key may quote (the spec names no scope). Give exactly one of fiat_amount and asset_amount. applied_rate is the benchmark (USD price × USD/GHS) plus the spread in the house favour; amounts round in the house favour.',
      tag: 'Trading',
      area: 'finance',
      body: quoteBody,
      response: { status: 201, description: 'The quote', schema: envelopeOf(quoteSchema) },
      errors: ['rate_expired', 'limit_exceeded', 'compliance_block'],
      handler: async ({ body, auth }) => ({ status: 201, body: ok('Quote created', await deps.quotes.create(auth, body)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/trades',
      operationId: 'executeTrade',
      summary: 'Execute a quote',
      description:
        'A buy settles at once from the wallet and delivers to delivery_address. A sell answers pending_payment with the deposit_address to pay into. A trade parked for review answers 403 compliance_block with details.order_reference and status under_review.',
      tag: 'Trading',
      area: 'finance',
      scope: 'trades:write',
      signed: true,
      idempotent: true,
      body: executeBody,
      response: { status: 201, description: 'The trade', schema: envelopeOf(tradeSchema) },
      errors: ['forbidden', 'invalid_signature', 'insufficient_funds', 'rate_expired', 'limit_exceeded', 'compliance_block', 'idempotency_conflict', 'idempotency_key_reused'],
      handler: ({ body, auth, idempotency }) => deps.trades.execute(auth, body, idempotency!),
    }),
    // Before /api/v1/trades/:reference, which would take "quotes" for a trade reference.
    defineRoute({
      method: 'get',
      path: '/api/v1/trades/quotes',
      operationId: 'listQuotes',
      summary: 'Quotes, newest first, cursor-paginated and filtered',
      description: 'Every quote the merchant asked for in this environment, executed or not. trade_reference names the trade that consumed a quote.',
      tag: 'Trading',
      scope: 'read',
      query: z.strictObject({
        ...pageQuery,
        status: z.enum(QUOTE_STATUSES).optional().describe('created: executable until expires_at; consumed: executed; expired'),
        side: z.enum(['buy', 'sell']).optional(),
        asset: z.enum(['USDT', 'USDC']).optional(),
        created_from: z.iso.datetime({ error: 'created_from must be an ISO 8601 UTC time' }).optional().describe('Inclusive'),
        created_to: z.iso.datetime({ error: 'created_to must be an ISO 8601 UTC time' }).optional().describe('Exclusive'),
      }),
      response: { status: 200, description: 'A page of quotes', schema: listEnvelopeOf(listedQuoteSchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.quotes.list(auth, query);
        return { status: 200, body: ok('Quotes', items, { next_cursor: nextCursor }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/trades/quotes/:reference',
      operationId: 'getQuote',
      summary: 'One quote, with the trade that executed it',
      tag: 'Trading',
      scope: 'read',
      params: quoteReferenceParams,
      response: { status: 200, description: 'The quote', schema: envelopeOf(listedQuoteSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Quote', await findById('quote', params.reference, () => deps.quotes.get(auth, params.reference))),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/trades/:reference',
      operationId: 'getTrade',
      summary: 'One trade order, with its status history',
      tag: 'Trading',
      scope: 'read',
      params: tradeReferenceParams,
      response: { status: 200, description: 'The trade', schema: envelopeOf(tradeSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Trade', await findById('trade', params.reference, () => deps.trades.get(auth, params.reference))),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/trades',
      operationId: 'listTrades',
      summary: 'Trade orders, newest first, cursor-paginated and filtered',
      tag: 'Trading',
      scope: 'read',
      query: z.strictObject({
        ...pageQuery,
        status: z.enum(TRADE_STATUSES).optional(),
        side: z.enum(['buy', 'sell']).optional(),
        asset: z.enum(['USDT', 'USDC']).optional(),
        created_from: z.iso.datetime({ error: 'created_from must be an ISO 8601 UTC time' }).optional().describe('Inclusive'),
        created_to: z.iso.datetime({ error: 'created_to must be an ISO 8601 UTC time' }).optional().describe('Exclusive'),
      }),
      response: { status: 200, description: 'A page of trades', schema: listEnvelopeOf(tradeSchema) },
      errors: ['forbidden'],
      handler: async ({ query, auth }) => {
        const { items, nextCursor } = await deps.trades.list(auth, query);
        return { status: 200, body: ok('Trades', items, { next_cursor: nextCursor }) };
      },
    }),
  ];
}
