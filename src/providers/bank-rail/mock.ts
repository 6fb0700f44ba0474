/*
 * bank-rail: a GhIPSS Instant Pay (GIP)-style interbank rail.
 *
 * GhIPSS publishes no API, so this wire format is our own design, modelled on how GIP works
 * (reference §5): the sending participant asks the destination bank for the account name (name
 * enquiry), then sends the credit transfer, which the destination bank credits and confirms.
 * Net settlement at the Bank of Ghana is not modelled. Bodies are JSON with ISO 20022-flavoured
 * field names and ISO 8583-style two-digit response codes. Amounts are integer pesewas: unlike
 * the mobile-money providers, this rail speaks minor units on the wire.
 *
 * Authentication: every request, and every callback the rail sends, carries
 *   X-Participant-Id: <clientId>
 *   X-Timestamp:      <unix seconds>
 *   X-Signature:      hex HMAC-SHA256(clientSecret, `${timestamp}.${METHOD}.${path}.${rawBody}`)
 * where path is the request target exactly as sent (pathname plus any query string, including
 * any prefix the rail is mounted under, e.g. /mocks/bank-rail/gip/v1/name-enquiry), and rawBody
 * is the exact body text ('' for a GET). A missing header, an unknown participant, a signature
 * that does not match, or a timestamp more than 300 s away from the rail's clock gets
 *   401 {responseCode:'63', responseMessage}                              (security violation)
 * Callbacks are signed the same way with the same secret, over the pathname (and query) of the
 * callbackUrl the rail POSTs to, e.g. /internal/callbacks/bank-rail/<token>.
 *
 * POST /gip/v1/name-enquiry
 *   {destinationBankCode, accountNumber, sessionId}
 *   200 {responseCode:'00', responseMessage, accountName, accountNumber, destinationBankCode, sessionId}
 *   200 {responseCode:'25', responseMessage:'Unable to locate record', sessionId}   no such account
 *   400 {responseCode:'92', ...} unknown destination bank; 400 {responseCode:'30', ...} bad format
 *
 * POST /gip/v1/credit-transfers
 *   {sessionId (the sender's unique reference, [A-Za-z0-9_-]{1,64}), amount (integer pesewas),
 *    currency:'GHS', destinationBankCode (GhIPSS code), accountNumber (8-16 digits),
 *    accountName, narration (<= 140 chars), callbackUrl (http/https)}
 *   202 {responseCode:'09', responseMessage:'Accepted, pending', sessionId, transactionId}
 *   409 {responseCode:'94', ...} the sessionId was used before
 *   400 {responseCode:'30'|'13'|'92', ...} format error, invalid amount, unknown bank
 *   4xx {responseCode:<code>, ...} the destination bank refused synchronously (scenario reject)
 *
 * GET /gip/v1/credit-transfers/{sessionId}
 *   200 {responseCode:'00'|'09'|<failure code>, status:'SUCCESS'|'PENDING'|'FAILED',
 *        responseMessage, sessionId, transactionId, amount, currency, destinationBankCode,
 *        accountNumber, completedAt (ISO 8601, null while pending)}
 *   404 {responseCode:'25', responseMessage:'Unable to locate record'}
 *
 * Callback: POST <callbackUrl>, same body as the status response, once the transfer is final.
 * Sent once, never retried: a sender that hears nothing polls the status endpoint. (Scenarios
 * can make the mock send it twice, or send extra callbacks that contradict it.)
 *
 * Errors: 503 {responseCode:'91'} while the rail is down; 5xx {responseCode:'96'} on a
 * system malfunction.
 *
 * Response codes:
 *   00 Approved or completed successfully    51 Insufficient funds
 *   05 Do not honour                         57 Transaction not permitted
 *   09 Request in progress (pending)         61 Exceeds amount limit
 *   12 Invalid transaction                   63 Security violation
 *   13 Invalid amount                        91 Issuer or switch inoperative
 *   25 Unable to locate record               92 Unknown destination institution
 *   30 Format error                          94 Duplicate transmission
 *                                            96 System malfunction
 *
 * Sandbox behaviour when no scenario rule decides: every name enquiry resolves to a seeded fake
 * name for `${bankCode}:${accountNumber}`, and every transfer succeeds, with its callback after
 * the mock's default callback delay.
 */
import type express from 'express';
import { z } from 'zod';
import type { BankRailOptions } from './options.ts';
import { isGhipssCode } from '../../kernel/banks.ts';
import { iso } from '../../kernel/clock.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { hmacSha256Hex, safeEqual, sha256Hex } from '../../kernel/secrets.ts';
import type { ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take, type WireError, type WireErrors } from '../../mocks/engine/define-wire.ts';
import { fakeNameFor } from '../../mocks/fake-name.ts';
import { defineMock } from '../../mocks/mock-definition.ts';
import { reasonWord } from '../../mocks/engine/reason-word.ts';

export interface BankRailCredentials {
  clientId: string;
  clientSecret: string;
}

const PROVIDER = 'bank-rail';
const MAX_CLOCK_SKEW_SECONDS = 300;
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;
const ACCOUNT_NUMBER = /^\d{8,16}$/;

const MESSAGES: Record<string, string> = {
  '00': 'Approved or completed successfully',
  '05': 'Do not honour',
  '09': 'Request in progress',
  '12': 'Invalid transaction',
  '13': 'Invalid amount',
  '25': 'Unable to locate record',
  '30': 'Format error',
  '51': 'Insufficient funds',
  '57': 'Transaction not permitted',
  '61': 'Exceeds amount limit',
  '63': 'Security violation',
  '91': 'Issuer or switch inoperative',
  '92': 'Unknown destination institution',
  '94': 'Duplicate transmission',
  '96': 'System malfunction',
};

// Scenario files speak every provider's vocabulary; these are the words that have a GIP code.
const REASON_CODES: Record<string, string> = {
  insufficient_funds: '51',
  not_enough_funds: '51',
  payer_not_enough_funds: '51',
  payee_not_enough_funds: '51',
  account_not_found: '25',
  not_found: '25',
  payee_not_found: '25',
  unable_to_locate_record: '25',
  invalid_account: '25',
  not_permitted: '57',
  not_allowed: '57',
  transaction_not_permitted: '57',
  payee_not_allowed_to_receive: '57',
  limit_exceeded: '61',
  payer_limit_reached: '61',
  issuer_unavailable: '91',
  service_unavailable: '91',
  system_malfunction: '96',
  internal_error: '96',
  internal_processing_error: '96',
  duplicate: '94',
  do_not_honour: '05',
  do_not_honor: '05',
  rejected: '05',
  declined: '05',
};

/**
 * The GIP response code for a scenario reason: a two-digit code is used as it is; known words
 * (insufficient_funds, NOT_ENOUGH_FUNDS, account_not_found, ...) map to their code; anything
 * else, or no reason, is 05 "do not honour".
 */
export function bankResponseCodeFor(reason: string | undefined): string {
  if (!reason) return '05';
  const trimmed = reason.trim();
  if (/^\d{2}$/.test(trimmed)) return trimmed;
  return REASON_CODES[reasonWord(trimmed)] ?? '05';
}

function messageFor(code: string): string {
  return MESSAGES[code] ?? 'Transaction failed';
}

type TransferStatus = 'SUCCESS' | 'PENDING' | 'FAILED';

interface MockTransfer {
  sessionId: string;
  transactionId: string;
  amount: number;
  currency: 'GHS';
  destinationBankCode: string;
  accountNumber: string;
  accountName: string;
  narration: string;
  status: TransferStatus;
  responseCode: string;
  completedAt: string | null;
  callbackUrl: string;
}

function statusBody(t: MockTransfer) {
  return {
    responseCode: t.responseCode,
    status: t.status,
    responseMessage: messageFor(t.responseCode),
    sessionId: t.sessionId,
    transactionId: t.transactionId,
    amount: t.amount,
    currency: t.currency,
    destinationBankCode: t.destinationBankCode,
    accountNumber: t.accountNumber,
    completedAt: t.completedAt,
  };
}

function sign(secret: string, timestamp: string, method: string, path: string, rawBody: string): string {
  return hmacSha256Hex(secret, `${timestamp}.${method.toUpperCase()}.${path}.${rawBody}`);
}

function refuse(res: express.Response, httpStatus: number, code: string, message = messageFor(code), extra: object = {}) {
  res.status(httpStatus).json({ responseCode: code, responseMessage: message, ...extra });
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  refuse(res, behaviour.http_status ?? 500, '96');
}

function reject(res: express.Response, behaviour: ProviderBehaviour): void {
  refuse(res, behaviour.http_status ?? 400, bankResponseCodeFor(behaviour.reason));
}

/** How the rail settles a transfer and calls back about it: the status body, POSTed. */
const TRANSFERS: TransactionWire<MockTransfer> = {
  pending: (t) => t.status === 'PENDING',
  settle: (t: MockTransfer, outcome: Outcome, now: number): MockTransfer => ({
    ...t,
    ...(outcome.status === 'success' ? { status: 'SUCCESS', responseCode: '00' } : { status: 'FAILED', responseCode: bankResponseCodeFor(outcome.reason) }),
    completedAt: iso(now),
  }),
  callback: (t) => jsonCallback(t.callbackUrl, 'POST', statusBody(t)),
};

/** The bank-rail mock in the provider registry: its credentials come from providers.bank-rail. */
export const bankRailMock = defineMock({
  name: PROVIDER,
  credentials: (options: BankRailOptions): BankRailCredentials => ({
    clientId: options.client_id,
    clientSecret: options.client_secret,
  }),
  create: (ctx, credentials) => createBankRailMock(ctx, credentials),
  access: (c) => ({
    credentials: [
      { name: 'participant id', where: 'X-Participant-Id header on every call', value: c.clientId, secret: false },
      { name: 'signing secret', where: 'HMAC-SHA256 key of the X-Signature header', value: c.clientSecret, secret: true },
    ],
    notes: [
      'X-Timestamp: unix seconds, within 300 s of the rail clock; X-Signature: hex HMAC-SHA256(secret, "<timestamp>.<METHOD>.<path and query as sent, mount prefix included>.<raw body>"). Callbacks are signed the same way.',
    ],
  }),
});

/** The fields both calls share, in the order (and the words) the rail checks them. */
const account = {
  destinationBankCode: z.string({ error: 'Unknown destinationBankCode' }).refine(isGhipssCode, { error: 'Unknown destinationBankCode' }),
  accountNumber: z.string({ error: 'accountNumber must be 8 to 16 digits' }).regex(ACCOUNT_NUMBER, { error: 'accountNumber must be 8 to 16 digits' }),
};

const nameEnquiry = z.object({
  sessionId: z.string({ error: 'sessionId is required' }).regex(SESSION_ID, { error: 'sessionId is required' }),
  ...account,
});

const creditTransfer = (() => {
  const sessionId = 'sessionId must be 1 to 64 of [A-Za-z0-9_-]';
  const amount = 'amount must be a positive integer number of pesewas';
  const callbackUrl = 'callbackUrl must be an http or https URL';
  const text = (field: string) => `${field} must be a string of at most 140 characters`;
  return z.object({
    sessionId: z.string({ error: sessionId }).regex(SESSION_ID, { error: sessionId }),
    amount: z.number({ error: amount }).refine(isMinorAmount, { error: amount }),
    currency: z.literal('GHS', { error: 'currency must be GHS' }),
    ...account,
    accountName: z.string({ error: text('accountName') }).max(140, { error: text('accountName') }),
    narration: z
      .string({ error: text('narration') })
      .max(140, { error: text('narration') })
      .optional()
      .transform((n) => n ?? ''),
    callbackUrl: z.string({ error: callbackUrl }).refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), { error: callbackUrl }),
  });
})();

/** The rail's format errors: the field's code (13 for the amount, 92 for the bank), and the sessionId once it has one. */
function formatError(problem: Parameters<WireErrors['invalid']>[0]): WireError {
  if (problem.kind === 'not_an_object') return { status: 400, code: '30', message: 'Body must be a JSON object' };
  if (problem.kind === 'unreadable') return { status: problem.status, code: '30', message: messageFor('30') };
  const field = problem.path[0];
  const code = field === 'amount' ? '13' : field === 'destinationBankCode' ? '92' : '30';
  return { status: 400, code, message: problem.message, ...(field === 'sessionId' ? {} : { extra: { sessionId: problem.input.sessionId } }) };
}

export const createBankRailMock = defineWire<BankRailCredentials>({
  provider: PROVIDER,
  errors: {
    send: (res, e) => refuse(res, e.status, e.code, e.message, e.extra),
    outage: { status: 503, code: '91', message: messageFor('91') },
    invalid: formatError,
    notFound: { status: 404, code: '12', message: 'Unknown operation' },
    internal: { status: 500, code: '96', message: messageFor('96') },
  },
  refusals: { reject, serverError },
  auth: (req, credentials, ctx) => {
    const participant = req.get('x-participant-id');
    const timestamp = req.get('x-timestamp');
    const signature = req.get('x-signature');
    const violation = (message: string): WireError => ({ status: 401, code: '63', message });
    if (!participant || !timestamp || !signature) return violation('Missing X-Participant-Id, X-Timestamp or X-Signature');
    if (!safeEqual(participant, credentials.clientId)) return violation('Unknown participant');
    if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) - Math.floor(ctx.clock.now() / 1000)) > MAX_CLOCK_SKEW_SECONDS) {
      return violation('Timestamp is missing or more than 300 seconds from the switch clock');
    }
    const rawBody = typeof req.body === 'string' ? req.body : '';
    const expected = sign(credentials.clientSecret, timestamp, req.method, req.originalUrl, rawBody);
    return safeEqual(expected, signature.toLowerCase()) ? null : violation('Signature does not match');
  },
  // Callbacks are signed like requests, over the callback URL's path, when each one is sent.
  sign: (credentials, ctx) => (message, url) => {
    const timestamp = String(Math.floor(ctx.clock.now() / 1000));
    return {
      'x-participant-id': credentials.clientId,
      'x-timestamp': timestamp,
      'x-signature': sign(credentials.clientSecret, timestamp, message.method, url.pathname + url.search, message.body),
    };
  },
  books: { 'credit-transfers': { wire: TRANSFERS } },
  operations: [
    custom({
      method: 'post',
      path: '/gip/v1/name-enquiry',
      body: nameEnquiry,
      handle: async ({ req, res, body, lookup }) => {
        const { sessionId, destinationBankCode: bankCode, accountNumber } = body;
        const looked = await lookup({ req, res, successStatus: 200 }, { operation: 'resolve', channel: 'bank', account_number: accountNumber, bank_code: bankCode });
        if (!looked) return;
        const behaviour = looked.behaviour;
        if (behaviour?.resolves === false) return void res.status(200).json({ responseCode: '25', responseMessage: messageFor('25'), sessionId });
        res.status(200).json({
          responseCode: '00',
          responseMessage: messageFor('00'),
          accountName: behaviour?.name ?? fakeNameFor(`${bankCode}:${accountNumber}`),
          accountNumber,
          destinationBankCode: bankCode,
          sessionId,
        });
      },
    }),
    take({
      method: 'post',
      path: '/gip/v1/credit-transfers',
      body: creditTransfer,
      successStatus: 202,
      take: ({ body }) => ({
        book: 'credit-transfers',
        reference: body.sessionId,
        query: { operation: 'payout', channel: 'bank', account_number: body.accountNumber, bank_code: body.destinationBankCode, amount: body.amount },
        create: (now): MockTransfer => ({
          sessionId: body.sessionId,
          // GIP-style id: switch time plus a digest of the session id, the same on every replay.
          transactionId: `GIP${iso(now).replace(/\D/g, '').slice(2, 14)}${sha256Hex(body.sessionId).slice(0, 8).toUpperCase()}`,
          amount: body.amount,
          currency: 'GHS',
          destinationBankCode: body.destinationBankCode,
          accountNumber: body.accountNumber,
          accountName: body.accountName,
          narration: body.narration,
          status: 'PENDING',
          responseCode: '09',
          completedAt: null,
          callbackUrl: body.callbackUrl,
        }),
        duplicate: () => ({ status: 409, code: '94', message: 'Duplicate sessionId', extra: { sessionId: body.sessionId } }),
      }),
      answer: (transfer: MockTransfer) => ({ responseCode: '09', responseMessage: 'Accepted, pending', sessionId: transfer.sessionId, transactionId: transfer.transactionId }),
    }),
    read({
      method: 'get',
      path: '/gip/v1/credit-transfers/:sessionId',
      book: 'credit-transfers',
      param: 'sessionId',
      by: 'reference',
      missing: () => ({ status: 404, code: '25', message: messageFor('25') }),
      answer: (transfer: MockTransfer) => statusBody(transfer),
    }),
  ],
});
