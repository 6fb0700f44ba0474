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
import express from 'express';
import type { DirectDebitOptions } from './options.ts';
import { isGhipssCode } from '../../kernel/banks.ts';
import { iso } from '../../kernel/clock.ts';
import { parseJsonObject, textField } from '../../kernel/json-object.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { hmacSha256Hex, safeEqual, sha256Hex } from '../../kernel/secrets.ts';
import type { CallbackPlan, ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback, type CallbackMessage, type CallbackSigner } from '../../mocks/engine/callback-sender.ts';
import type { MockContext } from '../../mocks/engine/mock-context.ts';
import { MockEngine } from '../../mocks/engine/mock-engine.ts';
import { defineMock } from '../../mocks/mock-definition.ts';

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
  const word = (reason ?? '').trim().toUpperCase().replace(/[^A-Z0-9]+/g, '_');
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
  create: createDirectDebitMock,
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

export function createDirectDebitMock(ctx: MockContext, settings: DirectDebitMockSettings): express.Router {
  const signCallback: CallbackSigner = (message) => ({ 'x-dd-signature': directDebitSignature(settings.signingSecret, message.body) });
  const engine = new MockEngine(ctx, { provider: PROVIDER, refusals: { reject, serverError }, signCallback });
  // A debit is also found by the rail's own id (the sandbox's approve and decline name it).
  const debits = engine.book('debits', DEBITS, { lookupKeys: (d) => [d.debitId] });
  // The holder's own answer settles at once and is reported at once (engine.answer).
  const router = express.Router();

  router.use(express.text({ type: () => true, limit: '64kb' }));

  router.use((req, res, next) => {
    if (ctx.health.isDown(PROVIDER)) return fail(res, 503, 'SERVICE_UNAVAILABLE', 'Service Unavailable');
    const key = req.get('x-api-key');
    if (!key || !safeEqual(key, settings.apiKey)) return fail(res, 401, 'UNAUTHORISED', 'A valid X-Api-Key is required');
    next();
  });

  router.post('/dd/v1/debits', async (req, res) => {
    const body = parseJsonObject(req.body);
    if (!body) return fail(res, 400, 'INVALID_REQUEST', 'The body must be a JSON object');
    const reference = textField(body.reference);
    const amount = body.amount;
    const account = typeof body.debtorAccount === 'object' && body.debtorAccount !== null ? (body.debtorAccount as Record<string, unknown>) : undefined;
    const accountNumber = textField(account?.accountNumber);
    const bankCode = textField(account?.bankCode);
    if (!reference || !/^[A-Za-z0-9_-]{1,40}$/.test(reference)) return fail(res, 400, 'INVALID_REQUEST', 'reference must be 1 to 40 letters, digits, _ or -');
    if (typeof amount !== 'number' || !isMinorAmount(amount)) return fail(res, 400, 'INVALID_REQUEST', 'amount must be a positive integer of pesewas');
    if (body.currency !== 'GHS') return fail(res, 400, 'INVALID_REQUEST', 'currency must be GHS');
    if (!accountNumber || !/^\d{6,20}$/.test(accountNumber) || !bankCode || !isGhipssCode(bankCode)) {
      return fail(res, 400, 'INVALID_REQUEST', 'debtorAccount needs an accountNumber of 6 to 20 digits and a GhIPSS bankCode');
    }
    const callbackUrl = textField(body.callbackUrl);
    const sandbox = (): CallbackPlan => {
      const after_seconds = ctx.defaultCallbackSeconds;
      if (accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.declines) return { after_seconds, status: 'failed', reason: 'MANDATE_DECLINED' };
      if (accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.insufficientFunds) return { after_seconds, status: 'failed', reason: 'INSUFFICIENT_FUNDS' };
      return { after_seconds, status: 'success' };
    };

    const debit = await engine.take(
      { req, res, successStatus: 202 },
      {
        book: 'debits',
        reference,
        query: { operation: 'collect', channel: 'bank_debit', account_number: accountNumber, bank_code: bankCode, amount },
        sandbox,
        sandboxBehaviour: () =>
          accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.notFound ? { respond: 'reject', reason: 'ACCOUNT_NOT_FOUND', http_status: 404 } : undefined,
        create: (now): MockDebit => ({
          debitId: `DD${sha256Hex(`debit:${reference}`).slice(0, 16).toUpperCase()}`,
          reference,
          amount,
          accountNumber,
          bankCode,
          narration: textField(body.narration) ?? '',
          status: 'PENDING_MANDATE',
          reasonCode: null,
          ...(callbackUrl ? { callbackUrl } : {}),
          createdAt: iso(now),
          updatedAt: iso(now),
        }),
        duplicate: async () => fail(res, 409, 'DUPLICATE_REFERENCE', `reference ${reference} was used before`, { debitId: (await debits.get(reference))?.debitId }),
      },
    );
    if (!debit) return;
    res.status(202).json(debitData(debit));
  });

  router.get('/dd/v1/debits/:reference', async (req, res) => {
    const debit = await debits.get(req.params.reference);
    if (!debit) return fail(res, 404, 'NOT_FOUND', `No debit with reference ${req.params.reference}`);
    res.status(200).json(debitData(debit));
  });

  router.post('/dd/v1/sandbox/debits/:debitId/:decision', async (req, res) => {
    const decision = req.params.decision;
    if (decision !== 'approve' && decision !== 'decline') return fail(res, 404, 'NOT_FOUND', 'Unknown sandbox action');
    const debit = await debits.find(req.params.debitId);
    if (!debit) return fail(res, 404, 'NOT_FOUND', `No debit ${req.params.debitId}`);
    if (debit.status !== 'PENDING_MANDATE') return fail(res, 409, 'ALREADY_DECIDED', `Debit ${debit.debitId} is ${debit.status}`);
    // Approving still debits the account: the account without funds fails there.
    const outcome: Outcome =
      decision === 'decline'
        ? { status: 'failed', reason: 'MANDATE_DECLINED' }
        : debit.accountNumber === DIRECT_DEBIT_TEST_ACCOUNTS.insufficientFunds
          ? { status: 'failed', reason: 'INSUFFICIENT_FUNDS' }
          : { status: 'success' };
    // Settled and reported by the engine, as a settlement job would.
    const after = (await engine.answer<MockDebit>('debits', debit.reference, outcome)) ?? debit;
    res.status(200).json(debitData(after));
  });

  router.use((_req, res) => fail(res, 404, 'NOT_FOUND', 'Route not found'));

  router.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = (err as { status?: number }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return fail(res, status, 'INVALID_REQUEST', 'Invalid request');
    ctx.logger.error('direct-debit mock failed', { error: String(err) });
    fail(res, 500, 'SYSTEM_ERROR', 'System error, try again later');
  });

  return router;
}
