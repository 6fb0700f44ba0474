import { z } from 'zod';
import { ok, envelopeOf } from '../http/envelope.ts';
import { findById } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import type { ServiceLadder } from '../auth/service-ladder.ts';
import type { TradeService } from './trade-service.ts';
import { MAX_ASSET_AMOUNT, tradeReference, tradeReferenceParams, tradeSchema } from './trading.schemas.ts';

/** Sandbox helpers for trading: deposits, reviews, reversals and the service ladder. */
export function tradingSandboxRoutes(deps: { trades: TradeService; ladder: ServiceLadder }): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/deposits',
      operationId: 'sandboxSimulateDeposit',
      summary: "Simulate the merchant's on-chain deposit for a sell",
      description:
        'The trade moves to pending_confirmation and settles once the network has its confirmations (on the clock). Less than quoted settles pro rata; more is settled as quoted and the excess held.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({
        trade_reference: tradeReference,
        asset_amount: z.number().int('asset_amount must be whole minor units').positive('asset_amount must be greater than zero').max(MAX_ASSET_AMOUNT),
      }),
      response: { status: 200, description: 'The trade', schema: envelopeOf(tradeSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ body, auth }) => ({ status: 200, body: ok('Deposit seen on chain', await deps.trades.recordDeposit(auth, body)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/trades/:reference/review',
      operationId: 'sandboxReviewTrade',
      summary: 'Approve or reject a trade parked for compliance review',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: tradeReferenceParams,
      body: z.strictObject({ decision: z.enum(['approve', 'reject'], { error: 'decision must be approve or reject' }) }),
      response: { status: 200, description: 'The trade, settled or failed', schema: envelopeOf(tradeSchema) },
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, body, auth }) => ({
        status: 200,
        body: ok(`Review: ${body.decision}`, await findById('trade', params.reference, () => deps.trades.review(auth, params.reference, body.decision))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/trades/:reference/reverse',
      operationId: 'sandboxReverseTrade',
      summary: 'Reverse a settled trade with reversing journals',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: tradeReferenceParams,
      response: { status: 200, description: 'The trade, reversed', schema: envelopeOf(tradeSchema) },
      errors: ['forbidden', 'not_found', 'insufficient_funds'],
      handler: async ({ params, auth }) => ({
        status: 200,
        body: ok('Trade reversed', await findById('trade', params.reference, () => deps.trades.reverse(auth, params.reference))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/merchant/trading',
      operationId: 'sandboxSetTradingStage',
      summary: 'Move the merchant along the service ladder: none, requested, sandbox, live',
      description: 'Test keys trade from the sandbox stage on, live keys only at live; otherwise quotes and trades answer compliance_block.',
      tag: 'Sandbox',
      area: 'admin',
      sandboxOnly: true,
      body: z.strictObject({ stage: z.enum(['none', 'requested', 'sandbox', 'live'], { error: 'stage must be none, requested, sandbox or live' }) }),
      response: { status: 200, description: 'The stage', schema: envelopeOf(z.object({ stage: z.string() })) },
      errors: ['forbidden'],
      handler: async ({ body, auth }) => {
        await deps.ladder.setStage(auth.merchantId, body.stage);
        return { status: 200, body: ok('Trading stage set', { stage: body.stage }) };
      },
    }),
  ];
}
