/*
 * direct-debit: a mock of a GhIPSS-style direct-debit service (an invented but typical wire
 * format, documented in docs/v1/collections.md), the bank rail of /v1 collections. A debit is
 * pending until the account holder approves it at their bank (a mandate prompt in their banking
 * app); then the bank debits the account and the service calls back.
 *
 * Authentication: `X-Api-Key: <api key>` on every call, else 401 {code:'UNAUTHORISED', message}.
 * Errors are {code, message}; amounts are integer pesewas.
 *
 * POST /dd/v1/debits {reference, amount, currency:'GHS', debtorAccount:{accountNumber, bankCode}, narration?, callbackUrl?}
 *   202 {debitId:'DD…', reference, status:'PENDING_MANDATE', amount, currency, debtorAccount, reasonCode:null, mandatePrompt}
 *   400 {code:'INVALID_REQUEST', message}; 404 {code:'ACCOUNT_NOT_FOUND'}; 409 {code:'DUPLICATE_REFERENCE', debitId}
 * GET /dd/v1/debits/:reference   200 the debit (PENDING_MANDATE | COMPLETED | DECLINED | FAILED, reasonCode); 404 {code:'NOT_FOUND'}
 * POST /dd/v1/sandbox/debits/:debitId/approve | /decline
 *   Sandbox only: the account holder's answer at their bank. The debit settles at once
 *   (approved: COMPLETED, or FAILED INSUFFICIENT_FUNDS for the test account that lacks funds;
 *   declined: DECLINED MANDATE_DECLINED), the callback goes out, and the answer is the debit.
 *   409 {code:'ALREADY_DECIDED'} once it has settled.
 *
 * Callbacks: POST {debitId, reference, status, reasonCode, amount} to the debit's callbackUrl with
 * `X-DD-Signature: hex HMAC-SHA256(signing secret, raw body)`. Sent once, never retried.
 *
 * Sandbox test accounts (any GhIPSS bank code) when no scenario rule decides and no one answers
 * the mandate first:
 *   2000000001 (and any account not listed)   approved after rails.default_callback_seconds: COMPLETED
 *   2000000002   the holder declines the mandate: DECLINED, MANDATE_DECLINED
 *   2000000003   approved, but the account lacks funds: FAILED, INSUFFICIENT_FUNDS
 *   2000000004   no such account: refused at once, 404 ACCOUNT_NOT_FOUND
 */
import type express from 'express';
import { z } from 'zod';
import type { DirectDebitOptions } from './options.ts';
import { isGhipssCode } from '../../kernel/banks.ts';
import { iso } from '../../kernel/clock.ts';
import { textField } from '../../kernel/json-object.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { hmacSha256Hex, sha256Hex } from '../../kernel/secrets.ts';
import type { CallbackPlan, ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback, type CallbackMessage } from '../../mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take } from '../../mocks/engine/define-wire.ts';
import { defineMock } from '../../mocks/mock-definition.ts';
import { headerKey } from '../../mocks/engine/api-key-auth.ts';
import { reasonWord } from '../../mocks/engine/reason-word.ts';

export interface DirectDebitMockSettings {
  apiKey: string;
  signingSecret: string;
}

const PROVIDER = 'direct-debit';
const MANDATE_PROMPT = 'The account holder approves this debit in their banking app or USSD menu';

/** The service's own sandbox data: its documented test accounts. */
export const DIRECT_DEBIT_TEST_ACCOUNTS = {
  approves: '2000000001',
  declines: '2000000002',
  insufficientFunds: '2000000003',
  notFound: '2000000004',
} as const;

type DebitStatus = 'PENDING_MANDATE' | 'COMPLETED' | 'DECLINED' | 'FAILED';

interface MockDebit {
  debitId: string;
  reference: string;
  amount: number;
  accountNumber: string;
  bankCode: string;
  narration: string;
  status: DebitStatus;
  reasonCode: string | null;
  callbackUrl?: string;
  createdAt: string;
  updatedAt: string;
}

function debitData(d: MockDebit) {
  return {
    debitId: d.debitId,
    reference: d.reference,
    status: d.status,
    amount: d.amount,
    currency: 'GHS',
    debtorAccount: { accountNumber: d.accountNumber, bankCode: d.bankCode },
    narration: d.narration,
    reasonCode: d.reasonCode,
    mandatePrompt: d.status === 'PENDING_MANDATE' ? MANDATE_PROMPT : null,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

function fail(res: express.Response, httpStatus: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.status(httpStatus).json({ code, message, ...extra });
}

/** A scenario's failure reason in the service's codes. */
export function directDebitReason(reason: string | undefined): string {
  const word = reasonWord(reason).toUpperCase();
  if (word === 'NOT_ENOUGH_FUNDS' || word === '51') return 'INSUFFICIENT_FUNDS';
  if (word === 'DECLINED' || word === 'DECLINED_BY_CUSTOMER' || word === 'APPROVAL_REJECTED') return 'MANDATE_DECLINED';
  return word || 'FAILED';
}

function settled(d: MockDebit, outcome: Outcome, now: number): MockDebit {
  if (outcome.status === 'success') return { ...d, status: 'COMPLETED', reasonCode: null, updatedAt: iso(now) };
  const reasonCode = directDebitReason(outcome.reason);
  return { ...d, status: reasonCode === 'MANDATE_DECLINED' ? 'DECLINED' : 'FAILED', reasonCode, updatedAt: iso(now) };
}

function callbackOf(d: MockDebit): CallbackMessage | undefined {
  if (!d.callbackUrl || d.status === 'PENDING_MANDATE') return undefined;
  return jsonCallback(d.callbackUrl, 'POST', { debitId: d.debitId, reference: d.reference, status: d.status, reasonCode: d.reasonCode, amount: d.amount });
}

const DEBITS: TransactionWire<MockDebit> = {
  pending: (d) => d.status === 'PENDING_MANDATE',
  settle: settled,
  callback: callbackOf,
};

function reject(res: express.Response, behaviour: ProviderBehaviour): void {
  const code = directDebitReason(behaviour.reason);
  fail(res, behaviour.http_status ?? (code === 'ACCOUNT_NOT_FOUND' ? 404 : 422), code, `Debit refused: ${code}`);
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  fail(res, behaviour.http_status ?? 500, 'SYSTEM_ERROR', 'System error, try again later');
}

export function directDebitSignature(secret: string, body: string): string {
  return hmacSha256Hex(secret, body);
}

export const directDebitMock = defineMock({
  name: PROVIDER,
  credentials: (options: DirectDebitOptions): DirectDebitMockSettings => ({
    apiKey: options.api_key,
    signingSecret: options.signing_secret,
  }),
  create: (ctx, settings) => createDirectDebitMock(ctx, settings),
  access: (s) => ({
    credentials: [
      { name: 'api key', where: 'X-Api-Key header on every call', value: s.apiKey, secret: true },
      { name: 'signing secret', where: 'X-DD-Signature on callbacks', value: s.signingSecret, secret: true },
    ],
    notes: [
      'Test accounts (any GhIPSS bank code): 2000000001 approves; 2000000002 declines the mandate; 2000000003 lacks funds; 2000000004 does not exist.',
      'Approve or decline a pending debit as its holder: POST /api/v1/sandbox/collections/{id}/approve or /decline.',
    ],
  }),
});

/** The debit request, in the order (and the words) the service checks it. */
const debitRequest = (() => {
  const reference = 'reference must be 1 to 40 letters, digits, _ or -';
  const amount = 'amount must be a positive integer of pesewas';
  const account = 'debtorAccount needs an accountNumber of 6 to 20 digits and a GhIPSS bankCode';
  return z.object({
    reference: z.string({ error: reference }).regex(/^[A-Za-z0-9_-]{1,40}$/, { error: reference }),
    amount: z.number({ error: amount }).refine(isMinorAmount, { error: amount }),
    currency: z.literal('GHS', { error: 'currency must be GHS' }),
    debtorAccount: z.object(
      {
        accountNumber: z.string({ error: account }).regex(/^\d{6,20}$/, { error: account }),
        bankCode: z.string({ error: account }).refine(isGhipssCode, { error: account }),
      },
      { error: account },
    ),
    narration: z.unknown().optional().transform(textField),
    callbackUrl: z.unknown().optional().transform(textField),
  });
})();

/** The rail's own sandbox for a debit no scenario rule decides: its test accounts. */
function sandboxOf(accountNumber: string, after_seconds: number): CallbackPlan {
  if (accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.declines) return { after_seconds, status: 'failed', reason: 'MANDATE_DECLINED' };
  if (accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.insufficientFunds) return { after_seconds, status: 'failed', reason: 'INSUFFICIENT_FUNDS' };
  return { after_seconds, status: 'success' };
}

/** The holder's answer at their bank: approving still debits the account, and the account without funds fails there. */
function mandateOutcome(decision: 'approve' | 'decline', debit: MockDebit): Outcome {
  if (decision === 'decline') return { status: 'failed', reason: 'MANDATE_DECLINED' };
  return debit.accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.insufficientFunds ? { status: 'failed', reason: 'INSUFFICIENT_FUNDS' } : { status: 'success' };
}

export const createDirectDebitMock = defineWire<DirectDebitMockSettings>({
  provider: PROVIDER,
  errors: {
    send: (res, e) => fail(res, e.status, e.code, e.message, e.extra),
    outage: { status: 503, code: 'SERVICE_UNAVAILABLE', message: 'Service Unavailable' },
    invalid: (problem) => ({
      status: problem.kind === 'unreadable' ? problem.status : 400,
      code: 'INVALID_REQUEST',
      message: problem.kind === 'schema' ? problem.message : problem.kind === 'unreadable' ? 'Invalid request' : 'The body must be a JSON object',
    }),
    notFound: { status: 404, code: 'NOT_FOUND', message: 'Route not found' },
    internal: { status: 500, code: 'SYSTEM_ERROR', message: 'System error, try again later' },
  },
  refusals: { reject, serverError },
  auth: headerKey('x-api-key', (settings) => settings.apiKey, { status: 401, code: 'UNAUTHORISED', message: 'A valid X-Api-Key is required' }),
  sign: (settings) => (message) => ({ 'x-dd-signature': directDebitSignature(settings.signingSecret, message.body) }),
  // A debit is also found by the rail's own id (the sandbox's approve and decline name it).
  books: { debits: { wire: DEBITS, lookupKeys: (d: MockDebit) => [d.debitId] } },
  operations: [
    take({
      method: 'post',
      path: '/dd/v1/debits',
      body: debitRequest,
      successStatus: 202,
      take: ({ body, ctx }) => {
        const { reference, amount, debtorAccount: account } = body;
        return {
          book: 'debits',
          reference,
          query: { operation: 'collect', channel: 'bank_debit', account_number: account.accountNumber, bank_code: account.bankCode, amount },
          sandbox: () => sandboxOf(account.accountNumber, ctx.defaultCallbackSeconds),
          sandboxBehaviour: () => (account.accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.notFound ? { respond: 'reject', reason: 'ACCOUNT_NOT_FOUND', http_status: 404 } : undefined),
          create: (now): MockDebit => ({
            debitId: `DD${sha256Hex(`debit:${reference}`).slice(0, 16).toUpperCase()}`,
            reference,
            amount,
            accountNumber: account.accountNumber,
            bankCode: account.bankCode,
            narration: body.narration ?? '',
            status: 'PENDING_MANDATE',
            reasonCode: null,
            ...(body.callbackUrl ? { callbackUrl: body.callbackUrl } : {}),
            createdAt: iso(now),
            updatedAt: iso(now),
          }),
          duplicate: (existing: MockDebit | undefined) => ({
            status: 409,
            code: 'DUPLICATE_REFERENCE',
            message: `reference ${reference} was used before`,
            extra: { debitId: existing?.debitId },
          }),
        };
      },
      answer: (debit: MockDebit) => debitData(debit),
    }),
    read({
      method: 'get',
      path: '/dd/v1/debits/:reference',
      book: 'debits',
      param: 'reference',
      by: 'reference',
      missing: (reference) => ({ status: 404, code: 'NOT_FOUND', message: `No debit with reference ${reference}` }),
      answer: (debit: MockDebit) => debitData(debit),
    }),
    // The holder's own answer settles at once and is reported at once, through the engine.
    custom({
      method: 'post',
      path: '/dd/v1/sandbox/debits/:debitId/:decision',
      handle: async ({ params, books, answer, fail: refuse, res }) => {
        const decision = params.decision;
        if (decision !== 'approve' && decision !== 'decline') return refuse({ status: 404, code: 'NOT_FOUND', message: 'Unknown sandbox action' });
        const debit: MockDebit | undefined = await books.debits!.find(params.debitId!);
        if (!debit) return refuse({ status: 404, code: 'NOT_FOUND', message: `No debit ${params.debitId}` });
        if (debit.status !== 'PENDING_MANDATE') return refuse({ status: 409, code: 'ALREADY_DECIDED', message: `Debit ${debit.debitId} is ${debit.status}` });
        const after = (await answer<MockDebit>('debits', debit.reference, mandateOutcome(decision, debit))) ?? debit;
        res.status(200).json(debitData(after));
      },
    }),
  ],
});
