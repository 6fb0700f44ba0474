import type { Response } from 'express';
import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { seedFromString } from '../../kernel/ids.ts';
import { fromMajor } from '../../kernel/money.ts';
import { normaliseMsisdn } from '../../kernel/msisdn.ts';
import type { MtnMomoOptions } from './options.ts';
import { safeEqual, sha256Hex } from '../../kernel/secrets.ts';
import type { CallbackPlan, ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { MockQuery } from '../../mocks/engine/behaviour.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../mocks/engine/callback-sender.ts';
import type { MockContext } from '../../mocks/engine/mock-context.ts';
import { custom, defineWire, read, take, type WireAuth, type WireError, type WireOperation } from '../../mocks/engine/define-wire.ts';
import type { SessionRecords } from '../../mocks/engine/mock-transaction-book.ts';
import { fakeNameFor } from '../../mocks/fake-name.ts';
import { defineMock } from '../../mocks/mock-definition.ts';

// A mock of MTN's MoMo Open API (Collection and Disbursement products plus sandbox user
// provisioning), faithful to the wire facts in reference/upstream-providers.md §1, so that both
// railyard's adapter and off-the-shelf MoMo SDKs work against it unchanged.

const PROVIDER = 'mtn-momo';

/** The pre-provisioned API user the service's adapter uses (a production-style user). */
export interface MtnMomoCredentials {
  apiUser: string;
  apiKey: string;
  collectionSubscriptionKey: string;
  disbursementSubscriptionKey: string;
  /** X-Target-Environment every product call must carry, e.g. 'sandbox'. */
  targetEnvironment: string;
}

type Product = 'collection' | 'disbursement';
type TxStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

export type MtnSandboxOutcome =
  | { kind: 'failed'; reason: string }
  /** Stays PENDING for good: no settlement, no callback. */
  | { kind: 'ongoing' }
  /** PENDING, then SUCCESSFUL after `afterSeconds` of business time. */
  | { kind: 'delayed'; afterSeconds: number };

export type MtnSandboxAccountHolder = { result: false } | { httpStatus: number; code: string };

const failed = (reason: string): MtnSandboxOutcome => ({ kind: 'failed', reason });
const ONGOING: MtnSandboxOutcome = { kind: 'ongoing' };
// Measured against the live sandbox: …454 moves to SUCCESSFUL after about 25 s.
const DELAYED: MtnSandboxOutcome = { kind: 'delayed', afterSeconds: 25 };

/**
 * MTN's own sandbox test numbers, used when no scenario rule matches. Source: MTN MoMo developer
 * portal, "Sandbox Use Cases" (momodeveloper.mtn.com/content/html_widgets/881wm.html): "Any other
 * number results in Success". Outcome names map to the wire as Failed → FAILED
 * INTERNAL_PROCESSING_ERROR, Rejected → APPROVAL_REJECTED, Expired → EXPIRED, Ongoing/Delayed →
 * PENDING. The RequestToPay and Transfer columns differ from …455 on.
 */
export const MTN_SANDBOX_TEST_NUMBERS: {
  readonly requestToPay: Readonly<Record<string, MtnSandboxOutcome>>;
  readonly transfer: Readonly<Record<string, MtnSandboxOutcome>>;
  readonly accountHolderActive: Readonly<Record<string, MtnSandboxAccountHolder>>;
} = {
  requestToPay: {
    '46733123450': failed('INTERNAL_PROCESSING_ERROR'), // PayerFailed
    '46733123451': failed('APPROVAL_REJECTED'), // PayerRejected
    '46733123452': failed('EXPIRED'), // PayerExpired
    '46733123453': ONGOING, // PayerOngoing
    '46733123454': DELAYED, // PayerDelayed
    '46733123455': failed('PAYER_NOT_FOUND'),
    '46733123456': failed('PAYEE_NOT_ALLOWED_TO_RECEIVE'),
    '46733123457': failed('NOT_ALLOWED'),
    '46733123458': failed('NOT_ALLOWED_TARGET_ENVIRONMENT'),
    '46733123459': failed('INVALID_CALLBACK_URL_HOST'),
    '46733123460': failed('INVALID_CURRENCY'),
    '46733123461': failed('INTERNAL_PROCESSING_ERROR'),
    '46733123462': failed('SERVICE_UNAVAILABLE'),
    '46733123463': failed('COULD_NOT_PERFORM_TRANSACTION'),
  },
  transfer: {
    '46733123450': failed('INTERNAL_PROCESSING_ERROR'), // PayeeFailed
    '46733123451': failed('APPROVAL_REJECTED'), // PayeeRejected
    '46733123452': failed('EXPIRED'), // PayeeExpired
    '46733123453': ONGOING, // PayeeOngoing
    '46733123454': DELAYED, // PayeeDelayed
    '46733123455': failed('NOT_ENOUGH_FUNDS'),
    '46733123456': failed('PAYER_LIMIT_REACHED'),
    '46733123457': failed('PAYEE_NOT_FOUND'),
    '46733123458': failed('NOT_ALLOWED'),
    '46733123459': failed('NOT_ALLOWED_TARGET_ENVIRONMENT'),
    '46733123460': failed('INVALID_CALLBACK_URL_HOST'),
    '46733123461': failed('INVALID_CURRENCY'),
    '46733123462': failed('INTERNAL_PROCESSING_ERROR'),
    '46733123463': failed('SERVICE_UNAVAILABLE'),
  },
  accountHolderActive: {
    '46733123450': { httpStatus: 404, code: 'RESOURCE_NOT_FOUND' }, // MsisdnNotFound
    '46733123451': { result: false }, // NotActive
    '46733123452': { httpStatus: 500, code: 'NOT_ALLOWED' },
    '46733123453': { httpStatus: 500, code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' },
    '46733123454': { httpStatus: 500, code: 'INTERNAL_PROCESSING_ERROR' },
    '46733123455': { httpStatus: 503, code: 'SERVICE_UNAVAILABLE' },
  },
};

// MTN answers these with HTTP 500 (reference §1): they are about the caller's setup at MTN, not
// the payer, so the router fails over on them like on any 5xx. Every other reject is a 4xx.
const REFUSALS_SENT_AS_500 = new Set(['NOT_ALLOWED', 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'INVALID_CALLBACK_URL_HOST', 'INVALID_CURRENCY']);

const MESSAGES: Record<string, string> = {
  RESOURCE_NOT_FOUND: 'Requested resource was not found.',
  RESOURCE_ALREADY_EXIST: 'Duplicated reference id. Creation of resource failed.',
  NOT_ALLOWED: 'Authorization failed. Insufficient permissions.',
  NOT_ALLOWED_TARGET_ENVIRONMENT: 'Access to target environment is forbidden.',
  INVALID_CALLBACK_URL_HOST: 'Callback URL with host not allowed.',
  INVALID_CURRENCY: 'Currency not supported.',
  PAYER_NOT_FOUND: 'Payer not found.',
  PAYEE_NOT_FOUND: 'Payee not found.',
  SERVICE_UNAVAILABLE: 'Service unable to handle request.',
  INTERNAL_PROCESSING_ERROR: 'An internal error occurred while processing.',
  COULD_NOT_PERFORM_TRANSACTION: 'Could not perform transaction.',
};

// The sandbox accepts EUR (MTN's real sandbox currency) and GHS (railyard's).
const CURRENCIES = new Set(['GHS', 'EUR']);

// MTN's real sandbox (`--as-real-sandbox`): X-Target-Environment sandbox, EUR only, callback
// hosts by name. Its numbers: the documented ones (46733123450 to …463) and, since "any other
// number results in Success", the rest of their block succeeds; a number outside the block (a
// Ghana number that missed the adapter's sandbox_identities) is refused as an unknown party.
const REAL_SANDBOX = { targetEnvironment: 'sandbox', currency: 'EUR', numbers: /^467331234\d\d$/ } as const;
const isRealSandboxNumber = (partyId: string) => REAL_SANDBOX.numbers.test(partyId);
const hasIpHost = (url: string) => isIP(new URL(url).hostname.replace(/^\[|\]$/g, '')) !== 0;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^\d+(?:\.\d+)?$/;
const TOKEN_SECONDS = 3600;

interface Party {
  partyIdType: string;
  partyId: string;
}

interface MockTransaction {
  product: Product;
  referenceId: string;
  amount: string;
  currency: string;
  externalId?: string;
  party: Party;
  payerMessage?: string;
  payeeNote?: string;
  status: TxStatus;
  reason?: string;
  financialTransactionId?: string;
  callbackUrl?: string;
}

/** A sandbox-provisioned API user. */
interface ApiUser {
  providerCallbackHost: string;
  apiKey?: string;
}

/** A token as kept: under its hash, so neither memory nor the store holds the token itself. */
interface IssuedToken {
  product: Product;
  expiresAt: number;
}

/** The MTN MoMo mock in the provider registry: its credentials come from providers.mtn-momo. */
export const mtnMomoMock = defineMock({
  name: PROVIDER,
  credentials: (options: MtnMomoOptions): MtnMomoCredentials => {
    const c = options;
    return {
      apiUser: c.api_user,
      apiKey: c.api_key,
      collectionSubscriptionKey: c.collection_subscription_key,
      disbursementSubscriptionKey: c.disbursement_subscription_key,
      targetEnvironment: c.target_environment,
    };
  },
  create: (ctx, credentials) => createMtnMomoMock(ctx, credentials),
  realSandbox: [
    'X-Target-Environment other than sandbox: 500 NOT_ALLOWED_TARGET_ENVIRONMENT',
    'a currency other than EUR: 500 INVALID_CURRENCY',
    'a callback URL whose host is an IP address: 500 INVALID_CALLBACK_URL_HOST',
    "a payer or payee outside MTN's test block 46733123400-499: 404 PAYER_NOT_FOUND / PAYEE_NOT_FOUND (name enquiry: 404 RESOURCE_NOT_FOUND)",
    "no scenario rules: 46733123450-463 give MTN's documented outcomes, the rest of the block succeeds",
  ],
  access: (c) => ({
    credentials: [
      { name: 'collection subscription key', where: 'Ocp-Apim-Subscription-Key header on /collection/* and /v1_0/apiuser', value: c.collectionSubscriptionKey, secret: true },
      { name: 'disbursement subscription key', where: 'Ocp-Apim-Subscription-Key header on /disbursement/* and /v1_0/apiuser', value: c.disbursementSubscriptionKey, secret: true },
      { name: 'API user', where: 'Basic auth user on POST /{collection,disbursement}/token', value: c.apiUser, secret: false },
      { name: 'API key', where: 'Basic auth password on POST /{collection,disbursement}/token', value: c.apiKey, secret: true },
      { name: 'target environment', where: 'X-Target-Environment header on every product call', value: c.targetEnvironment, secret: false },
    ],
    notes: [
      'Or provision your own API user, as on MTN\'s sandbox: POST /v1_0/apiuser with X-Reference-Id: <a new UUID>, a subscription key and {"providerCallbackHost":"<host>"}; then POST /v1_0/apiuser/<uuid>/apikey for its key (kept until railyard restarts).',
      "POST /{collection,disbursement}/token with Basic <API user>:<API key> and the product's subscription key gives a bearer token for an hour.",
      "MTN's sandbox numbers 46733123450 to 46733123463 behave as MTN documents when no scenario rule matches; any other number succeeds.",
    ],
  }),
});

/** What one MTN mock keeps besides its books: its sandbox session (provisioned API users, issued tokens). */
interface MtnInstance {
  /** Sandbox-provisioned API users (POST /v1_0/apiuser; the configured user lives outside them). */
  users: SessionRecords<ApiUser>;
  /** The tokens issued, keyed by the token's hash (a lookup compares no secrets). */
  tokens: SessionRecords<IssuedToken>;
}

const mtn = (status: number, code: string, message = MESSAGES[code] ?? code): WireError => ({ status, code, message });
const badRequest = (message: string): WireError => mtn(400, 'BAD_REQUEST', message);
const unauthorised = (message = 'Access denied due to invalid subscription key.'): WireError => mtn(401, 'UNAUTHORIZED', message);
// The token endpoint answers in OAuth's words, {error}, not MTN's {code, message}.
const OAUTH = 'oauth';
const oauthError = (message: string): WireError => ({ status: 401, code: OAUTH, message });
const INVALID_SUBSCRIPTION_KEY = 'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.';
const referenceHeader = { header: 'x-reference-id', valid: (id: string) => UUID.test(id), invalid: badRequest('X-Reference-Id must be a UUID.') };

const subscriptionKey = (credentials: MtnMomoCredentials, product: Product) => (product === 'collection' ? credentials.collectionSubscriptionKey : credentials.disbursementSubscriptionKey);

/** Either product's subscription key (sandbox provisioning takes both). */
const anySubscriptionKey: WireAuth<MtnMomoCredentials> = (req, credentials) => {
  const key = req.get('ocp-apim-subscription-key') ?? '';
  // Both checks always run, so timing does not say which key matched.
  const collection = safeEqual(key, credentials.collectionSubscriptionKey);
  const disbursement = safeEqual(key, credentials.disbursementSubscriptionKey);
  return collection || disbursement ? null : unauthorised();
};

/** A product call: its subscription key, a bearer token issued for it, and the target environment. */
const productCall =
  (product: Product): WireAuth<MtnMomoCredentials> =>
  async (req, credentials, ctx, instance: MtnInstance) => {
    if (!safeEqual(req.get('ocp-apim-subscription-key') ?? '', subscriptionKey(credentials, product))) return unauthorised(INVALID_SUBSCRIPTION_KEY);
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
    const issued = await instance.tokens.get(sha256Hex(bearer));
    const valid = issued !== undefined && issued.product === product && issued.expiresAt > ctx.clock.now();
    if (!valid) return unauthorised('Access token is missing, invalid or expired.');
    const environment = ctx.asRealSandbox ? REAL_SANDBOX.targetEnvironment : credentials.targetEnvironment;
    if (!safeEqual(req.get('x-target-environment') ?? '', environment)) return mtn(500, 'NOT_ALLOWED_TARGET_ENVIRONMENT');
    return null;
  };

/** The API user id when Basic auth names a known user with the right key. */
async function basicAuthUser(header: string | undefined, credentials: MtnMomoCredentials, users: SessionRecords<ApiUser>): Promise<string | undefined> {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const user = decoded.slice(0, colon);
  const key = decoded.slice(colon + 1);
  if (safeEqual(user, credentials.apiUser)) return safeEqual(key, credentials.apiKey) ? user : undefined;
  const known = await users.get(user);
  if (!known?.apiKey) return undefined;
  return safeEqual(key, known.apiKey) ? user : undefined;
}

async function issueToken(ctx: MockContext, tokens: SessionRecords<IssuedToken>, product: Product, apiUser: string) {
  const now = ctx.clock.now();
  const expiresAt = now + TOKEN_SECONDS * 1000;
  // Shaped like MTN's JWT (clientId, expires, sessionId); the signature is random bytes.
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const token = [
    part({ typ: 'JWT', alg: 'R256' }),
    part({ clientId: apiUser, expires: new Date(expiresAt).toISOString(), sessionId: randomBytes(16).toString('hex') }),
    randomBytes(32).toString('base64url'),
  ].join('.');
  await tokens.set(sha256Hex(token), { product, expiresAt });
  return { access_token: token, token_type: 'access_token', expires_in: TOKEN_SECONDS };
}

/** MTN's own sandbox for a number no scenario rule decides: its documented test numbers, else success. */
function sandboxPlan(outcome: MtnSandboxOutcome | undefined, defaultSeconds: number): CallbackPlan | null {
  if (!outcome) return { after_seconds: defaultSeconds, status: 'success' };
  switch (outcome.kind) {
    case 'failed':
      return { after_seconds: defaultSeconds, status: 'failed', reason: outcome.reason };
    case 'delayed':
      return { after_seconds: outcome.afterSeconds, status: 'success' };
    case 'ongoing':
      return null;
  }
}

/** A request-to-pay or transfer body, checked in the order (and the words) of parseTransferBody. */
const transferRequest = (partyField: 'payer' | 'payee') =>
  z.unknown().transform((raw, check) => {
    const body = parseTransferBody(raw, partyField);
    if (typeof body !== 'string') return body;
    check.addIssue({ code: 'custom', message: body });
    return z.NEVER;
  });

/** Account holder checks and balance, the same on both products. */
function productOperations(product: Product): WireOperation<MtnMomoCredentials>[] {
  const auth = productCall(product);
  return [
    custom<MtnMomoCredentials>({
      method: 'post',
      path: `/${product}/token`,
      auth: (req, credentials) => (safeEqual(req.get('ocp-apim-subscription-key') ?? '', subscriptionKey(credentials, product)) ? null : oauthError(INVALID_SUBSCRIPTION_KEY)),
      handle: async ({ req, res, settings, ctx, instance, fail }) => {
        const { users, tokens } = instance as MtnInstance;
        const apiUser = await basicAuthUser(req.get('authorization'), settings, users);
        if (!apiUser) return fail(oauthError('login_failed'));
        res.json(await issueToken(ctx, tokens, product, apiUser));
      },
    }),
    custom<MtnMomoCredentials>({
      method: 'get',
      path: `/${product}/v1_0/accountholder/:idType/:id/active`,
      auth,
      handle: async ({ req, res, params, lookup, fail, ctx }) => {
        const idType = String(params.idType).toLowerCase();
        // MTN documents the id type in lower case; the mtn-momo SDK's Collections sends "MSISDN",
        // so the mock takes either case rather than break a widely used client.
        if (idType !== 'msisdn' && idType !== 'email' && idType !== 'party_code') return fail(badRequest('accountHolderIdType must be msisdn, email or party_code.'));
        const id = String(params.id);
        if (ctx.asRealSandbox && idType === 'msisdn' && !isRealSandboxNumber(id)) return fail(mtn(404, 'RESOURCE_NOT_FOUND'));
        if (idType === 'msisdn') {
          const looked = await lookup({ req, res, successStatus: 200 }, query({ operation: 'resolve', ...partyQuery(id) }));
          if (!looked) return;
          if (looked.behaviour) return void res.json({ result: looked.behaviour.resolves !== false });
        }
        const sandbox = MTN_SANDBOX_TEST_NUMBERS.accountHolderActive[id];
        if (sandbox && 'code' in sandbox) return fail(mtn(sandbox.httpStatus, sandbox.code));
        res.json({ result: !sandbox });
      },
    }),
    custom<MtnMomoCredentials>({
      method: 'get',
      path: `/${product}/v1_0/accountholder/:idType/:id/basicuserinfo`,
      auth,
      handle: async ({ req, res, params, lookup, fail, ctx }) => {
        if (String(params.idType).toLowerCase() !== 'msisdn') return fail(badRequest('basicuserinfo takes an msisdn.'));
        const id = String(params.id);
        if (ctx.asRealSandbox && !isRealSandboxNumber(id)) return fail(mtn(404, 'RESOURCE_NOT_FOUND'));
        const party = partyQuery(id);
        const looked = await lookup({ req, res, successStatus: 200 }, query({ operation: 'resolve', ...party }));
        if (!looked) return;
        const behaviour = looked.behaviour;
        if (behaviour?.resolves === false) return fail(mtn(404, 'RESOURCE_NOT_FOUND'));
        const sandbox = behaviour ? undefined : MTN_SANDBOX_TEST_NUMBERS.accountHolderActive[id];
        if (sandbox && 'code' in sandbox) return fail(mtn(sandbox.httpStatus, sandbox.code));
        res.json(basicUserInfo(party.msisdn, behaviour?.name ?? fakeNameFor(party.msisdn)));
      },
    }),
    custom<MtnMomoCredentials>({
      method: 'get',
      path: `/${product}/v1_0/account/balance`,
      auth,
      handle: ({ res, ctx }) => void res.json({ availableBalance: '1000000.00', currency: ctx.asRealSandbox ? REAL_SANDBOX.currency : 'GHS' }),
    }),
  ];
}

/** Request to pay (collection) and transfer (disbursement): taken under the caller's X-Reference-Id, answered 202 with no body. */
function transactionOperations(product: Product, resource: string, partyField: 'payer' | 'payee'): WireOperation<MtnMomoCredentials>[] {
  const auth = productCall(product);
  const table = product === 'collection' ? MTN_SANDBOX_TEST_NUMBERS.requestToPay : MTN_SANDBOX_TEST_NUMBERS.transfer;
  return [
    take({
      method: 'post',
      path: `/${product}/v1_0/${resource}`,
      auth,
      reference: referenceHeader,
      body: transferRequest(partyField),
      successStatus: 202,
      take: ({ req, body, reference, ctx }) => {
        const strict = ctx.asRealSandbox === true;
        if (strict ? body.currency !== REAL_SANDBOX.currency : !CURRENCIES.has(body.currency)) return mtn(500, 'INVALID_CURRENCY');
        const callbackUrl = req.get('x-callback-url');
        // MTN also checks the callback host against providerCallbackHost and refuses IP hosts; the
        // mock refuses IP hosts only as the real sandbox, because railyard calls back to itself on
        // 127.0.0.1.
        if (callbackUrl !== undefined && (!URL.canParse(callbackUrl) || (strict && hasIpHost(callbackUrl)))) return mtn(500, 'INVALID_CALLBACK_URL_HOST');
        if (strict && (body.party.partyIdType !== 'MSISDN' || !isRealSandboxNumber(body.party.partyId))) {
          return mtn(404, partyField === 'payer' ? 'PAYER_NOT_FOUND' : 'PAYEE_NOT_FOUND');
        }
        return {
          book: product,
          reference,
          query: query({ operation: product === 'collection' ? 'collect' : 'payout', ...partyQuery(body.party.partyId), amount: minorOrUndefined(body.amount) }),
          sandbox: () => sandboxPlan(table[body.party.partyId], ctx.defaultCallbackSeconds),
          create: (): MockTransaction => ({
            product,
            referenceId: reference,
            amount: body.amount,
            currency: body.currency,
            externalId: body.externalId,
            party: body.party,
            payerMessage: body.payerMessage,
            payeeNote: body.payeeNote,
            status: 'PENDING',
            callbackUrl,
          }),
          duplicate: () => mtn(409, 'RESOURCE_ALREADY_EXIST'),
        };
      },
      answer: () => undefined,
    }),
    read({
      method: 'get',
      path: `/${product}/v1_0/${resource}/:referenceId`,
      auth,
      book: product,
      param: 'referenceId',
      by: 'reference',
      missing: () => mtn(404, 'RESOURCE_NOT_FOUND'),
      answer: statusObject,
    }),
  ];
}

/** A call on MTN is a momo call on the MTN network. */
function query(call: Pick<MockQuery, 'operation' | 'msisdn' | 'amount'>): MockQuery {
  return { channel: 'momo', network: 'MTN', ...call };
}

function serverError(res: Response, behaviour: ProviderBehaviour): void {
  const status = behaviour.http_status ?? 500;
  mtnError(res, status, behaviour.reason ?? (status === 503 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_PROCESSING_ERROR'));
}

function reject(res: Response, behaviour: ProviderBehaviour): void {
  // MTN's own status codes: 400 by default (a refusal on the merits, no failover); 409 and 404
  // for their codes; its NOT_ALLOWED family with a 500, which fails over.
  const code = behaviour.reason ?? 'BAD_REQUEST';
  const status = behaviour.http_status ?? (code === 'RESOURCE_ALREADY_EXIST' ? 409 : code === 'RESOURCE_NOT_FOUND' ? 404 : REFUSALS_SENT_AS_500.has(code) ? 500 : 400);
  mtnError(res, status, code);
}

/** How MTN settles a transaction and calls back about it. */
const TRANSACTIONS: TransactionWire<MockTransaction> = {
  pending: (tx) => tx.status === 'PENDING',
  settle: (tx: MockTransaction, outcome: Outcome): MockTransaction =>
    outcome.status === 'success'
      ? { ...tx, status: 'SUCCESSFUL', reason: undefined, financialTransactionId: financialTransactionId(tx.referenceId) }
      : { ...tx, status: 'FAILED', reason: outcome.reason ?? 'INTERNAL_PROCESSING_ERROR', financialTransactionId: undefined },
  // Real MTN may use PUT or POST for either product (listeners must accept both); the mock uses
  // PUT for collections and POST for disbursements so receivers get exercised with both.
  callback: (tx) => (tx.callbackUrl ? jsonCallback(tx.callbackUrl, tx.product === 'collection' ? 'PUT' : 'POST', statusObject(tx)) : undefined),
};

function mtnError(res: Response, status: number, code: string, message = MESSAGES[code] ?? code): void {
  res.status(status).json({ code, message });
}

/** RailQuery party fields: 233… when it is a Ghana number, else the partyId as sent. */
function partyQuery(partyId: string): { msisdn: string } {
  return { msisdn: normaliseMsisdn(partyId) ?? partyId };
}

function minorOrUndefined(amount: string): number | undefined {
  try {
    return fromMajor(amount, 'GHS');
  } catch {
    return undefined; // more decimals than pesewas: the engine just sees no amount
  }
}

interface TransferBody {
  amount: string;
  currency: string;
  externalId?: string;
  party: Party;
  payerMessage?: string;
  payeeNote?: string;
}

/** The validated body, or the reason it is a bad request. */
function parseTransferBody(raw: unknown, partyField: 'payer' | 'payee'): TransferBody | string {
  if (typeof raw !== 'object' || raw === null) return 'A JSON body is required.';
  const body = raw as Record<string, unknown>;
  const { amount, currency, externalId, payerMessage, payeeNote } = body;
  if (typeof amount !== 'string' || !DECIMAL.test(amount) || !/[1-9]/.test(amount)) {
    return 'amount must be a positive decimal string.';
  }
  if (typeof currency !== 'string' || currency === '') return 'currency is required.';
  if (externalId !== undefined && typeof externalId !== 'string') return 'externalId must be a string.';
  const party = body[partyField] as Record<string, unknown> | undefined;
  if (typeof party !== 'object' || party === null) return `${partyField} is required.`;
  const { partyIdType, partyId } = party;
  if (typeof partyId !== 'string' || partyId === '') return `${partyField}.partyId is required.`;
  if (partyIdType === 'MSISDN') {
    // E.164 without the plus.
    if (!/^\d{5,15}$/.test(partyId)) return `${partyField}.partyId must be an MSISDN of digits only, with the country code.`;
  } else if (partyIdType === 'EMAIL') {
    if (!/^[^@\s]+@[^@\s]+$/.test(partyId)) return `${partyField}.partyId must be an e-mail address.`;
  } else if (partyIdType === 'PARTY_CODE') {
    if (!UUID.test(partyId)) return `${partyField}.partyId must be a UUID.`;
  } else {
    return `${partyField}.partyIdType must be MSISDN, EMAIL or PARTY_CODE.`;
  }
  for (const [field, value] of [
    ['payerMessage', payerMessage],
    ['payeeNote', payeeNote],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return `${field} must be a string.`;
    if (value.length > 160) return `${field} must be at most 160 characters.`;
    if (/['\u2019]/.test(value)) return `${field} must not contain an apostrophe.`;
  }
  return {
    amount,
    currency,
    externalId,
    party: { partyIdType, partyId },
    payerMessage: payerMessage as string | undefined,
    payeeNote: payeeNote as string | undefined,
  };
}

/** MTN's status object; also the callback body. */
function statusObject(tx: MockTransaction): Record<string, unknown> {
  return {
    financialTransactionId: tx.financialTransactionId,
    externalId: tx.externalId,
    amount: tx.amount,
    currency: tx.currency,
    [tx.product === 'collection' ? 'payer' : 'payee']: tx.party,
    payerMessage: tx.payerMessage,
    payeeNote: tx.payeeNote,
    status: tx.status,
    reason: tx.reason, // a plain string, as in MTN's own example
  };
}

/** A stable numeric id per transaction, like MTN's financialTransactionId. */
function financialTransactionId(referenceId: string): string {
  const digest = createHash('sha256').update(referenceId).digest();
  return String((digest.readUInt32BE(0) % 900_000_000) + 100_000_000);
}

function basicUserInfo(identifier: string, name: string) {
  const space = name.indexOf(' ');
  const seed = seedFromString(identifier);
  const year = 1960 + (seed % 45);
  const month = String(((seed >>> 8) % 12) + 1).padStart(2, '0');
  const day = String(((seed >>> 12) % 28) + 1).padStart(2, '0');
  return {
    given_name: space < 0 ? name : name.slice(0, space),
    family_name: space < 0 ? '' : name.slice(space + 1),
    birthdate: `${year}-${month}-${day}`,
    locale: 'en_GH',
    gender: (seed >>> 20) % 2 === 0 ? 'MALE' : 'FEMALE',
    status: 'ACTIVE',
  };
}

export const createMtnMomoMock = defineWire<MtnMomoCredentials>({
  provider: PROVIDER,
  errors: {
    send: (res, e) => void res.status(e.status).json(e.code === OAUTH ? { error: e.message } : { code: e.code, message: e.message }),
    outage: mtn(503, 'SERVICE_UNAVAILABLE'),
    invalid: (problem) =>
      problem.kind === 'schema'
        ? badRequest(problem.message)
        : problem.kind === 'not_an_object'
          ? badRequest('A JSON body is required.')
          : problem.type === 'entity.parse.failed'
            ? badRequest('The request body is not valid JSON.')
            : mtn(500, 'INTERNAL_PROCESSING_ERROR'),
    notFound: mtn(404, 'RESOURCE_NOT_FOUND'),
    internal: mtn(500, 'INTERNAL_PROCESSING_ERROR'),
  },
  refusals: { reject, serverError },
  bodyParser: 'json',
  books: { collection: { wire: TRANSACTIONS }, disbursement: { wire: TRANSACTIONS } },
  // Session records, shared through the database where instances share it.
  instance: (ctx): MtnInstance => ({
    users: ctx.books.session<ApiUser>(PROVIDER, 'apiusers'),
    tokens: ctx.books.session<IssuedToken>(PROVIDER, 'tokens', { expired: (token, now) => token.expiresAt <= now, immutable: true }),
  }),
  operations: [
    // ---- Sandbox provisioning ----
    custom({
      method: 'post',
      path: '/v1_0/apiuser',
      auth: anySubscriptionKey,
      reference: referenceHeader,
      handle: async ({ req, res, reference: id, settings, instance, fail }) => {
        const { users } = instance as MtnInstance;
        const host = (req.body as { providerCallbackHost?: unknown } | undefined)?.providerCallbackHost;
        if (typeof host !== 'string' || host === '') return fail(badRequest('providerCallbackHost is required.'));
        if (id === settings.apiUser || (await users.get(id)) !== undefined) return fail(mtn(409, 'RESOURCE_ALREADY_EXIST'));
        await users.set(id, { providerCallbackHost: host });
        res.status(201).end();
      },
    }),
    custom({
      method: 'get',
      path: '/v1_0/apiuser/:id',
      auth: anySubscriptionKey,
      handle: async ({ res, params, settings, instance, fail }) => {
        const user = await (instance as MtnInstance).users.get(String(params.id));
        if (!user) return fail(mtn(404, 'RESOURCE_NOT_FOUND'));
        res.json({ providerCallbackHost: user.providerCallbackHost, targetEnvironment: settings.targetEnvironment });
      },
    }),
    custom({
      method: 'post',
      path: '/v1_0/apiuser/:id/apikey',
      auth: anySubscriptionKey,
      handle: async ({ res, params, instance, fail }) => {
        const { users } = instance as MtnInstance;
        const id = String(params.id);
        const user = await users.get(id);
        if (!user) return fail(mtn(404, 'RESOURCE_NOT_FOUND'));
        // A new key replaces the old one, as in MTN's sandbox.
        const apiKey = randomBytes(16).toString('hex');
        await users.set(id, { ...user, apiKey });
        res.status(201).json({ apiKey });
      },
    }),
    ...productOperations('collection'),
    ...productOperations('disbursement'),
    ...transactionOperations('collection', 'requesttopay', 'payer'),
    ...transactionOperations('disbursement', 'transfer', 'payee'),
  ],
});
