/*
 * card-processor: a mock of a card acquirer (an invented but typical wire format, documented in
 * docs/v1/collections.md), the card rail of /v1 collections.
 *
 * Authentication: `Authorization: Bearer <api key>` on every call, else
 *   401 {error:{type:'authentication_error', code:'invalid_api_key', message}}
 * Errors are {error:{type, code, decline_code?, message}}; amounts are integer pesewas.
 *
 * POST /v1/charges {merchant_reference, amount, currency:'GHS', card:{number}|{token}, description?, callback_url?}
 *   201 {id:'ch_…', object:'charge', merchant_reference, status:'processing', amount, currency, card:{brand, last4}, next_action:null}
 *   201 {..., status:'requires_otp', next_action:{type:'otp', message}}      a card whose issuer asks for an OTP (3-D Secure)
 *   402 {error:{type:'card_error', code:'card_declined', decline_code:'insufficient_funds'|'do_not_honour'|'expired_card'|…}}
 *   400 {error:{type:'invalid_request_error', code:'invalid_card'|'invalid_token'|'parameter_invalid', param}}
 *   409 {error:{type:'invalid_request_error', code:'duplicate_reference', charge:'ch_…'}}   a merchant_reference seen before
 * POST /v1/charges/:id/otp {otp}
 *   200 the charge, now succeeded (the right OTP) or failed with failure_code 'invalid_otp'
 *   409 {error:{code:'charge_not_awaiting_otp'}}; 404 {error:{code:'resource_missing'}}
 * GET /v1/charges/by-reference/:merchant_reference   200 the charge (status processing|requires_otp|succeeded|failed); 404
 *
 * Webhooks: POST {type:'charge.succeeded'|'charge.failed', data:{charge}} to the charge's
 * callback_url, with `Card-Processor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(webhook secret, "<t>.<raw body>")>`.
 * Sent once when the charge settles (an OTP's answer included), never retried.
 *
 * Sandbox test cards (any expiry and CVV are irrelevant: the mock takes the number only), each
 * with a token that charges the same way:
 *   4084 0840 8408 4081 / 5555 4444 4444 4440 / 5060 9905 8000 0000 002   tok_success           succeeds after the default delay
 *   4000 0000 0000 9953   tok_insufficient_funds   declined at once: insufficient_funds
 *   4000 0000 0000 0010   tok_do_not_honour        declined at once: do_not_honour
 *   4000 0000 0000 0069   tok_expired_card         declined at once: expired_card
 *   4000 0000 0000 3410   tok_otp                  requires_otp: OTP 123456 succeeds, any other fails it (invalid_otp)
 *   4000 0000 0000 0077   tok_timeout              holds the request past the client's timeout, charges anyway and reports success 10 s later
 * Any other valid card number succeeds after the default delay; any other token is invalid_token.
 */
import type express from 'express';
import { z } from 'zod';
import type { CardProcessorOptions } from './options.ts';
import { iso } from '../../kernel/clock.ts';
import { parseJsonObject, textField } from '../../kernel/json-object.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { hmacSha256Hex, safeEqual, sha256Hex } from '../../kernel/secrets.ts';
import type { ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback, type CallbackMessage } from '../../mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take, type WireError, type WireErrors } from '../../mocks/engine/define-wire.ts';
import { defineMock } from '../../mocks/mock-definition.ts';
import { cardBrand, passesLuhn } from '../../kernel/card-number.ts';
import { bearerKey } from '../../mocks/engine/api-key-auth.ts';
import { reasonWord } from '../../mocks/engine/reason-word.ts';

export interface CardProcessorMockSettings {
  apiKey: string;
  webhookSecret: string;
}

const PROVIDER = 'card-processor';
export const CARD_PROCESSOR_TEST_OTP = '123456';
const OTP_PROMPT = 'Enter the one-time password your card issuer sent to the phone number on file';
/** How long after the request the timeout card's late success is reported. */
const TIMEOUT_CARD_LATE_SECONDS = 10;

type TestCardKind = 'success' | 'insufficient_funds' | 'do_not_honour' | 'expired_card' | 'otp' | 'timeout';

/** The processor's own sandbox data: its documented test card numbers. */
export const CARD_PROCESSOR_TEST_CARDS: Readonly<Record<string, TestCardKind>> = {
  '4084084084084081': 'success',
  '5555444444444440': 'success',
  '5060990580000000002': 'success',
  '4000000000009953': 'insufficient_funds',
  '4000000000000010': 'do_not_honour',
  '4000000000000069': 'expired_card',
  '4000000000003410': 'otp',
  '4000000000000077': 'timeout',
};

/** Tokens of the test cards, for merchants that never handle a card number. */
export const CARD_PROCESSOR_TEST_TOKENS: Readonly<Record<string, string>> = {
  tok_success: '4084084084084081',
  tok_insufficient_funds: '4000000000009953',
  tok_do_not_honour: '4000000000000010',
  tok_expired_card: '4000000000000069',
  tok_otp: '4000000000003410',
  tok_timeout: '4000000000000077',
};

type ChargeStatus = 'processing' | 'requires_otp' | 'succeeded' | 'failed';

interface MockCardCharge {
  id: string;
  merchantReference: string;
  amount: number;
  description: string;
  brand: string;
  last4: string;
  status: ChargeStatus;
  failureCode: string | null;
  callbackUrl?: string;
  createdAt: string;
  updatedAt: string;
}

function chargeData(c: MockCardCharge) {
  return {
    id: c.id,
    object: 'charge',
    merchant_reference: c.merchantReference,
    status: c.status,
    amount: c.amount,
    currency: 'GHS',
    description: c.description,
    card: { brand: c.brand, last4: c.last4 },
    next_action: c.status === 'requires_otp' ? { type: 'otp', message: OTP_PROMPT } : null,
    failure_code: c.failureCode,
    created: c.createdAt,
    updated: c.updatedAt,
  };
}

function fail(res: express.Response, httpStatus: number, type: string, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.status(httpStatus).json({ error: { type, code, message, ...extra } });
}

/** A scenario's or a test card's failure reason as the processor's decline code. */
export function declineCode(reason: string | undefined): string {
  const word = reasonWord(reason);
  return word === 'not_enough_funds' || word === '51' ? 'insufficient_funds' : word || 'generic_decline';
}

function callbackOf(c: MockCardCharge): CallbackMessage | undefined {
  if (!c.callbackUrl || (c.status !== 'succeeded' && c.status !== 'failed')) return undefined;
  return jsonCallback(c.callbackUrl, 'POST', { type: `charge.${c.status}`, data: { charge: chargeData(c) } });
}

function settled(c: MockCardCharge, outcome: Outcome, now: number): MockCardCharge {
  return outcome.status === 'success'
    ? { ...c, status: 'succeeded', failureCode: null, updatedAt: iso(now) }
    : { ...c, status: 'failed', failureCode: declineCode(outcome.reason), updatedAt: iso(now) };
}

const CHARGES: TransactionWire<MockCardCharge> = {
  pending: (c) => c.status === 'processing' || c.status === 'requires_otp',
  settle: settled,
  callback: callbackOf,
};

/** A test card's behaviour in scenario words; undefined for those that simply settle. */
function testCardBehaviour(kind: TestCardKind | undefined): ProviderBehaviour | undefined {
  switch (kind) {
    case 'insufficient_funds':
    case 'do_not_honour':
    case 'expired_card':
      return { respond: 'reject', reason: kind, http_status: 402 };
    case 'timeout':
      return { respond: 'timeout', callback: { after_seconds: TIMEOUT_CARD_LATE_SECONDS, status: 'success' } };
    default:
      return undefined;
  }
}

/** The processor's error type for each code that is not about the request itself. */
const ERROR_TYPES: Readonly<Record<string, string>> = {
  invalid_api_key: 'authentication_error',
  service_unavailable: 'api_error',
  internal_error: 'api_error',
};

function reject(res: express.Response, behaviour: ProviderBehaviour): void {
  const code = declineCode(behaviour.reason);
  fail(res, behaviour.http_status ?? 402, 'card_error', 'card_declined', `Your card was declined (${code})`, { decline_code: code });
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  fail(res, behaviour.http_status ?? 500, 'api_error', 'internal_error', 'An error occurred on our side');
}

/** The webhook signature header: a timestamp and an HMAC over it and the raw body. */
export function cardProcessorSignature(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${hmacSha256Hex(secret, `${unixSeconds}.${body}`)}`;
}

export const cardProcessorMock = defineMock({
  name: PROVIDER,
  credentials: (options: CardProcessorOptions): CardProcessorMockSettings => ({
    apiKey: options.api_key,
    webhookSecret: options.webhook_secret,
  }),
  create: (ctx, settings) => createCardProcessorMock(ctx, settings),
  access: (s) => ({
    credentials: [
      { name: 'api key', where: 'Authorization: Bearer header on every call', value: s.apiKey, secret: true },
      { name: 'webhook secret', where: 'Card-Processor-Signature on webhooks', value: s.webhookSecret, secret: true },
    ],
    notes: ['Test cards: 4084 0840 8408 4081 succeeds; 4000 0000 0000 9953 insufficient funds; 4000 0000 0000 3410 asks for OTP 123456; 4000 0000 0000 0077 times out. See docs/v1/collections.md.'],
  }),
});

/** A charge request, in the order (and the words) the processor checks it. */
const chargeRequest = (() => {
  const reference = 'merchant_reference must be 1 to 64 letters, digits, _ . or -';
  const amount = 'amount must be a positive integer of pesewas';
  return z.object({
    merchant_reference: z.string({ error: reference }).regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: reference }),
    amount: z.number({ error: amount }).refine(isMinorAmount, { error: amount }),
    currency: z.literal('GHS', { error: 'currency must be GHS' }),
    // A token charges like its test card; a number must be a valid card number.
    card: z
      .unknown()
      .transform((value) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}))
      .transform((card, check) => {
        const token = textField(card.token);
        const number = token !== undefined ? CARD_PROCESSOR_TEST_TOKENS[token] : textField(card.number);
        if (token !== undefined && !number) {
          check.addIssue({ code: 'custom', message: `No such token: '${token}'`, path: ['token'] });
          return z.NEVER;
        }
        if (!number || !/^\d{12,19}$/.test(number) || !passesLuhn(number)) {
          check.addIssue({ code: 'custom', message: 'card.number is not a valid card number', path: ['number'] });
          return z.NEVER;
        }
        return { token, number };
      }),
    description: z.unknown().optional().transform(textField),
    callback_url: z.unknown().optional().transform(textField),
  });
})();

/** The processor's error for a request it cannot take: the offending parameter, and its code for it. */
function invalidRequest(problem: Parameters<WireErrors['invalid']>[0]): WireError {
  if (problem.kind === 'not_an_object') return { status: 400, code: 'parameter_invalid', message: 'The body must be a JSON object' };
  if (problem.kind === 'unreadable') return { status: problem.status, code: 'parameter_invalid', message: 'Invalid request' };
  const param = problem.path.map(String).join('.');
  const code = param === 'card.token' ? 'invalid_token' : param === 'card.number' ? 'invalid_card' : 'parameter_invalid';
  return { status: 400, code, message: problem.message, extra: { param } };
}

export const createCardProcessorMock = defineWire<CardProcessorMockSettings>({
  provider: PROVIDER,
  errors: {
    // The processor's error type follows from the code: a card declined, an outage or our own failure, else the request.
    send: (res, e) => fail(res, e.status, ERROR_TYPES[e.code] ?? 'invalid_request_error', e.code, e.message, e.extra),
    outage: { status: 503, code: 'service_unavailable', message: 'Service Unavailable' },
    invalid: invalidRequest,
    notFound: { status: 404, code: 'route_not_found', message: 'Unrecognized request URL' },
    internal: { status: 500, code: 'internal_error', message: 'An error occurred on our side' },
  },
  refusals: { reject, serverError },
  auth: bearerKey((settings) => settings.apiKey, { status: 401, code: 'invalid_api_key', message: 'Invalid API key provided' }),
  sign: (settings, ctx) => (message) => ({
    'card-processor-signature': cardProcessorSignature(settings.webhookSecret, Math.floor(ctx.clock.now() / 1000), message.body),
  }),
  // A charge is also found by the processor's own id (its OTP route names it).
  books: { charges: { wire: CHARGES, lookupKeys: (c: MockCardCharge) => [c.id] } },
  operations: [
    take({
      method: 'post',
      path: '/v1/charges',
      body: chargeRequest,
      successStatus: 201,
      take: ({ body, ctx }) => {
        const { merchant_reference: reference, amount } = body;
        const { token, number } = body.card;
        const kind = CARD_PROCESSOR_TEST_CARDS[number];
        const callbackUrl = body.callback_url;
        return {
          book: 'charges',
          reference,
          query: { operation: 'collect', channel: 'card', card: token ?? number, amount },
          // The OTP card waits for its OTP: no settlement is planned.
          sandbox: () => (kind === 'otp' ? null : { after_seconds: ctx.defaultCallbackSeconds, status: 'success' }),
          sandboxBehaviour: () => testCardBehaviour(kind),
          create: (now): MockCardCharge => ({
            id: `ch_${sha256Hex(`card:${reference}`).slice(0, 24)}`,
            merchantReference: reference,
            amount,
            description: body.description ?? '',
            brand: cardBrand(number),
            last4: number.slice(-4),
            status: kind === 'otp' ? 'requires_otp' : 'processing',
            failureCode: null,
            ...(callbackUrl ? { callbackUrl } : {}),
            createdAt: iso(now),
            updatedAt: iso(now),
          }),
          duplicate: (existing: MockCardCharge | undefined) => ({
            status: 409,
            code: 'duplicate_reference',
            message: `merchant_reference ${reference} was used before`,
            extra: { charge: existing?.id },
          }),
        };
      },
      answer: (charge: MockCardCharge) => chargeData(charge),
    }),
    // An OTP's answer settles the charge at once and is reported at once, through the engine.
    custom({
      method: 'post',
      path: '/v1/charges/:id/otp',
      handle: async ({ req, params, books, answer, fail: refuse, res }) => {
        const charge: MockCardCharge | undefined = await books.charges!.find(params.id!);
        if (!charge) return refuse({ status: 404, code: 'resource_missing', message: `No such charge: '${params.id}'` });
        if (charge.status !== 'requires_otp') return refuse({ status: 409, code: 'charge_not_awaiting_otp', message: `Charge ${charge.id} is ${charge.status}` });
        const otp = textField(parseJsonObject(req.body)?.otp);
        if (!otp) return refuse({ status: 400, code: 'parameter_missing', message: 'otp is required', extra: { param: 'otp' } });
        const outcome: Outcome = safeEqual(otp, CARD_PROCESSOR_TEST_OTP) ? { status: 'success' } : { status: 'failed', reason: 'invalid_otp' };
        const after = (await answer<MockCardCharge>('charges', charge.merchantReference, outcome)) ?? charge;
        res.status(200).json(chargeData(after));
      },
    }),
    read({
      method: 'get',
      path: '/v1/charges/by-reference/:reference',
      book: 'charges',
      param: 'reference',
      by: 'reference',
      missing: (reference) => ({ status: 404, code: 'resource_missing', message: `No charge with merchant_reference '${reference}'` }),
      answer: (charge: MockCardCharge) => chargeData(charge),
    }),
  ],
});
