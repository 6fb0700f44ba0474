import type { Request, Response } from 'express';
import { z } from 'zod';
import type { HubtelOptions } from './options.ts';
import { fromMajor, toMajorString } from '../../kernel/money.ts';
import { normaliseMsisdn, type Network } from '../../kernel/msisdn.ts';
import { safeEqual, sha256Hex } from '../../kernel/secrets.ts';
import type { ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { MockQuery } from '../../mocks/engine/behaviour.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../mocks/engine/callback-sender.ts';
import type { MockContext } from '../../mocks/engine/mock-context.ts';
import { custom, defineWire, take, type TakeSpec, type WireAuth, type WireError } from '../../mocks/engine/define-wire.ts';
import type { MockTransactionBook } from '../../mocks/engine/mock-transaction-book.ts';
import { fakeNameFor } from '../../mocks/fake-name.ts';
import { defineMock } from '../../mocks/mock-definition.ts';

// A mock of Hubtel's Direct Receive Money, Direct Send Money, the two status checks and the
// Verification API. Real Hubtel spreads them over several hosts; here each host is a path prefix
// under the router (mounted at /mocks/hubtel):
//   /rmp        rmp.hubtel.com             receive money
//   /txnstatus  api-txnstatus.hubtel.com   receive status
//   /smp        smp.hubtel.com             send money
//   /smrsc      smrsc.hubtel.com           send status
//   /rnv        rnv.hubtel.com             verification (name enquiry)

export const HUBTEL_PROVIDER = 'hubtel';

export interface HubtelCredentials {
  clientId: string;
  clientSecret: string;
  posSalesId: string;
  prepaidDepositId: string;
}

export const HUBTEL_CHANNELS = { 'mtn-gh': 'MTN', 'vodafone-gh': 'TELECEL', 'tigo-gh': 'AT' } as const satisfies Record<string, Network>;
export type HubtelChannel = keyof typeof HUBTEL_CHANNELS;

// Receive (rmp) and send (smp, smrsc) answer in PascalCase; the status check and the
// Verification API answer in camelCase.
type HubtelHost = 'rmp' | 'txnstatus' | 'smp' | 'smrsc' | 'rnv';
const CAMEL_CASE_HOSTS: ReadonlySet<HubtelHost> = new Set(['txnstatus', 'rnv']);

const RECEIVE_MESSAGES: Record<string, string> = {
  '0000': 'success',
  '2001': 'failed',
  '4000': 'Validation errors.',
  '4070': 'Unable to complete payment at the moment. Fees not set for given conditions.',
  '4101': 'Business not fully set up to receive payments, or the API keys lack the mobilemoney-receive-direct scope.',
  '4103': 'Permission denied. Account is not allowed to transact on this channel.',
  '5000': 'Internal error.',
};
const SEND_MESSAGES: Record<string, string> = {
  '0000': 'success',
  '2001': 'Processor error.',
  '3050': 'Number not registered for mobile money.',
  '4000': 'Validation errors.',
  '4075': 'Insufficient prepaid balance.',
  '4101': 'Business not fully set up to send money, or the API keys lack the send-money scope.',
  '4103': 'Permission denied. Account is not allowed to transact on this channel.',
  '5000': 'Internal error.',
};

export interface HubtelFailure {
  /** Hubtel ResponseCode, e.g. 2001. */
  code: string;
  /** Hubtel's Message for the code. */
  message: string;
  /** Why, in words (Hubtel puts this in Data.Description of a failed callback). */
  description: string;
}

/**
 * Turns a scenario `reason` into the Hubtel code a failed callback or a refusal carries.
 * A 4-digit reason is already a Hubtel code and passes through. Generic reasons (MTN's names,
 * snake_case words) map to Hubtel's codes: on receive nearly every customer-side failure is 2001
 * (insufficient funds, wrong PIN, USSD timeout, limits); on send, insufficient funds is the
 * merchant's prepaid balance (4075) and an unknown wallet is 3050.
 */
export function hubtelFailure(reason: string | undefined, operation: 'collect' | 'payout'): HubtelFailure {
  const messages = operation === 'collect' ? RECEIVE_MESSAGES : SEND_MESSAGES;
  const raw = (reason ?? '').trim();
  if (/^\d{4}$/.test(raw)) {
    const message = messages[raw] ?? RECEIVE_MESSAGES[raw] ?? SEND_MESSAGES[raw] ?? 'failed';
    return { code: raw, message, description: message };
  }
  const key = raw.toUpperCase().replace(/[\s-]+/g, '_');
  const collect = operation === 'collect';
  const failed = (code: string, description: string): HubtelFailure => ({
    code,
    message: messages[code] ?? RECEIVE_MESSAGES[code] ?? SEND_MESSAGES[code] ?? 'failed',
    description,
  });
  switch (key) {
    case 'NOT_ENOUGH_FUNDS':
    case 'INSUFFICIENT_FUNDS':
    case 'INSUFFICIENT_BALANCE':
    case 'INTERNAL_PROCESSING_ERROR':
      return collect ? failed('2001', 'Insufficient funds in the mobile money wallet.') : failed('4075', 'Insufficient prepaid balance.');
    case 'PAYER_NOT_FOUND':
    case 'PAYEE_NOT_FOUND':
    case 'ACCOUNT_NOT_FOUND':
    case 'NOT_FOUND':
    case 'NOT_REGISTERED':
    case 'INVALID_MSISDN':
      return collect ? failed('2001', 'Account holder not found. Ensure the number matches the selected channel.') : failed('3050', 'Number not registered for mobile money.');
    case 'APPROVAL_REJECTED':
    case 'WRONG_PIN':
    case 'INVALID_PIN':
      return failed('2001', 'The customer entered no or an invalid PIN.');
    case 'EXPIRED':
    case 'TIMEOUT':
    case 'USSD_TIMEOUT':
    case 'COULD_NOT_PERFORM_TRANSACTION':
      return failed('2001', 'USSD session timeout: the customer did not approve in time.');
    case 'PAYER_LIMIT_REACHED':
    case 'PAYEE_LIMIT_REACHED':
    case 'LIMIT_REACHED':
    case 'LIMIT_EXCEEDED':
      return failed('2001', 'The mobile money user has reached a counter or balance limit.');
    case 'VALIDATION_ERROR':
    case 'INVALID_AMOUNT':
    case 'INVALID_REQUEST':
      return failed('4000', 'Validation errors.');
    case 'AMOUNT_TOO_LOW':
    case 'FEES_NOT_SET':
      return failed('4070', RECEIVE_MESSAGES['4070']!);
    case 'NOT_ALLOWED':
    case 'FORBIDDEN':
    case 'MISSING_SCOPE':
      return failed('4101', messages['4101']!);
    case 'CHANNEL_NOT_PERMITTED':
      return failed('4103', messages['4103']!);
    case 'INTERNAL_ERROR':
      return failed(collect ? '2001' : '5000', 'Internal error.');
    default:
      return failed('2001', raw ? `failed: ${raw}` : 'FAILED');
  }
}

/** HTTP status of a synchronous refusal: scope and channel refusals are 403, the rest 400. */
function refusalStatus(code: string): number {
  return code === '4101' || code === '4103' ? 403 : 400;
}

type Operation = 'receive' | 'send';

/** Everything needed to answer status checks and send the callback, even after a restart. */
interface MockTransaction {
  operation: Operation;
  clientReference: string;
  transactionId: string;
  externalTransactionId: string;
  amount: number; // minor units
  msisdn: string;
  channel: HubtelChannel;
  description: string;
  recipientName: string | null;
  callbackUrl: string;
  createdAt: number;
  state: 'pending' | 'success' | 'failed';
  failure?: HubtelFailure;
}

function major(minor: number): number {
  return Number(toMajorString(minor, 'GHS'));
}

/** Amount as Hubtel takes it: a positive decimal with at most 2 places, as a number (or numeric text). */
function parseAmount(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^\d+(?:\.\d{1,2})?$/.test(text)) return null;
  const minor = fromMajor(text, 'GHS');
  return minor > 0 ? minor : null;
}

function isChannel(value: unknown): value is HubtelChannel {
  return typeof value === 'string' && Object.hasOwn(HUBTEL_CHANNELS, value);
}

function isClientReference(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9]{1,36}$/.test(value);
}

function queryString(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** The Hubtel mock in the provider registry: its credentials come from providers.hubtel. */
export const hubtelMock = defineMock({
  name: HUBTEL_PROVIDER,
  credentials: (options: HubtelOptions): HubtelCredentials => {
    const c = options;
    return { clientId: c.client_id, clientSecret: c.client_secret, posSalesId: c.pos_sales_id, prepaidDepositId: c.prepaid_deposit_id };
  },
  create: (ctx, credentials) => createHubtelMock(ctx, credentials),
  access: (c) => ({
    credentials: [
      { name: 'client id', where: 'Basic auth user on every call', value: c.clientId, secret: false },
      { name: 'client secret', where: 'Basic auth password on every call', value: c.clientSecret, secret: true },
      { name: 'POS Sales ID', where: 'path segment of /rmp receive, /txnstatus and /rnv verify', value: c.posSalesId, secret: false },
      { name: 'Prepaid Deposit ID', where: 'path segment of /smp send and /smrsc status', value: c.prepaidDepositId, secret: false },
    ],
    notes: ["Hubtel's hosts are path prefixes: /rmp (rmp.hubtel.com), /txnstatus (api-txnstatus.hubtel.com), /smp (smp.hubtel.com), /smrsc (smrsc.hubtel.com), /rnv (rnv.hubtel.com)."],
  }),
});

/** An error on the Hubtel host the request went to: PascalCase or camelCase, as that host answers. */
function sendError(res: Response, error: WireError): void {
  if (res.headersSent || res.destroyed) return;
  const { status, code, message } = error;
  res.status(status).json(CAMEL_CASE_HOSTS.has(hostOf(res.req)) ? { message, responseCode: code, data: null } : { Message: message, ResponseCode: code, Data: null });
}

const hubtelError = (status: number, code: string, message: string): WireError => ({ status, code, message });

function reject(res: Response, behaviour: ProviderBehaviour, query: MockQuery): void {
  const failure = hubtelFailure(behaviour.reason ?? '4000', query.operation === 'payout' ? 'payout' : 'collect');
  const status = behaviour.http_status && behaviour.http_status >= 400 && behaviour.http_status < 500 ? behaviour.http_status : refusalStatus(failure.code);
  sendError(res, hubtelError(status, failure.code, failure.message));
}

function serverError(res: Response, behaviour: ProviderBehaviour): void {
  sendError(res, hubtelError(behaviour.http_status ?? 500, '5000', 'Internal error. Please try again later.'));
}

/**
 * Basic auth, then the merchant account in the path (the POS Sales ID or the Prepaid Deposit ID).
 * Hubtel's 4101 covers "client request keys do not match business API keys"; the mock answers it
 * with HTTP 401 (and a Basic challenge) when the Basic credentials are missing or wrong.
 */
const admit =
  (param: string, account: (c: HubtelCredentials) => string): WireAuth<HubtelCredentials> =>
  (req, credentials) => {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get('authorization') ?? '');
    const presented = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    if (!match || !safeEqual(presented, `${credentials.clientId}:${credentials.clientSecret}`)) {
      return {
        ...hubtelError(401, '4101', 'Authorization has been denied for this request. Check the Basic auth API keys.'),
        headers: { 'WWW-Authenticate': 'Basic realm="hubtel"' },
      };
    }
    // A POS Sales ID / Prepaid Deposit ID the keys do not belong to: 4101 "ensure your POS Sales
    // ID is correctly passed in the endpoint".
    const accountId = (req.params as Record<string, string | undefined>)[param];
    if (accountId === undefined || !safeEqual(accountId, account(credentials))) {
      return hubtelError(403, '4101', 'The API keys are not permitted on this merchant account. Check the account id in the endpoint.');
    }
    return null;
  };
const posSales = admit('posSalesId', (c) => c.posSalesId);
const prepaidDeposit = admit('prepaidDepositId', (c) => c.prepaidDepositId);

interface MoneyRequest {
  amount: number;
  msisdn: string;
  channel: HubtelChannel;
  clientReference: string;
  callbackUrl: string;
  description: string;
  /** Send only: the recipient's name as given, else null. */
  recipientName: string | null;
}

/** The fields receive and send share, every problem at once in one 4000 (as Hubtel words it). */
const moneyRequest = (fields: { msisdn: string; callback: string }) =>
  z.unknown().transform((raw, check): MoneyRequest => {
    const body = objectBody(raw);
    const problems: string[] = [];
    const msisdn = body[fields.msisdn];
    if (typeof msisdn !== 'string' || !/^233\d{9}$/.test(msisdn)) problems.push(`${fields.msisdn} must be 233 followed by 9 digits`);
    const channel = body.Channel;
    if (!isChannel(channel)) problems.push('Channel must be one of mtn-gh, vodafone-gh, tigo-gh');
    const amount = parseAmount(body.Amount);
    if (amount === null) problems.push('Amount must be greater than 0 with at most 2 decimal places');
    // Real Hubtel spells it PrimaryCallbackUrl on receive and PrimaryCallbackURL on send; take either.
    const callbackUrl = body.PrimaryCallbackUrl ?? body.PrimaryCallbackURL;
    if (typeof callbackUrl !== 'string' || !URL.canParse(callbackUrl)) problems.push(`${fields.callback} must be a URL`);
    const description = body.Description;
    if (typeof description !== 'string' || description.trim() === '') problems.push('Description is required');
    const clientReference = body.ClientReference;
    if (!isClientReference(clientReference)) problems.push('ClientReference must be alphanumeric, at most 36 characters');
    if (problems.length) {
      check.addIssue({ code: 'custom', message: `Validation errors: ${problems.join('; ')}` });
      return z.NEVER;
    }
    return {
      amount: amount!,
      msisdn: msisdn as string,
      channel: channel as HubtelChannel,
      clientReference: clientReference as string,
      callbackUrl: callbackUrl as string,
      description: description as string,
      recipientName: typeof body.RecipientName === 'string' && body.RecipientName ? body.RecipientName : null,
    };
  });

function ids(credentials: HubtelCredentials, clientReference: string, operation: Operation): { transactionId: string; externalTransactionId: string } {
  // Derived from the unique ClientReference, so replays produce the same ids.
  const hash = sha256Hex(`hubtel:${operation}:${credentials.posSalesId}:${clientReference}`);
  return {
    transactionId: hash.slice(0, 32),
    externalTransactionId: String(BigInt(`0x${hash.slice(32, 48)}`) % 10_000_000_000n).padStart(10, '0'),
  };
}

/** A receive or send, as the engine takes it: the ClientReference is the reference it deduplicates on. */
function takeMoney(operation: Operation, credentials: HubtelCredentials, input: MoneyRequest): TakeSpec<MockTransaction> {
  return {
    book: operation,
    reference: input.clientReference,
    query: {
      operation: operation === 'receive' ? 'collect' : 'payout',
      channel: 'momo',
      msisdn: normaliseMsisdn(input.msisdn) ?? input.msisdn,
      network: HUBTEL_CHANNELS[input.channel],
      amount: input.amount,
    },
    create: (acceptedAt) => ({
      operation,
      clientReference: input.clientReference,
      ...ids(credentials, input.clientReference, operation),
      amount: input.amount,
      msisdn: input.msisdn,
      channel: input.channel,
      description: input.description,
      recipientName: input.recipientName,
      callbackUrl: input.callbackUrl,
      createdAt: acceptedAt,
      state: 'pending',
    }),
    duplicate: () => hubtelError(400, '4000', 'Validation errors: ClientReference has already been used'),
  };
}

function receiveCallback(tx: MockTransaction, now: number) {
  const ok = tx.state === 'success';
  const amount = major(tx.amount);
  return {
    ResponseCode: ok ? '0000' : (tx.failure?.code ?? '2001'),
    Message: ok ? 'success' : (tx.failure?.message ?? 'failed'),
    Data: {
      Amount: amount,
      Charges: 0, // the sandbox charges no fees
      AmountAfterCharges: amount,
      Description: ok ? `The ${networkBrand(tx.channel)} payment has been approved and processed successfully` : (tx.failure?.description ?? 'FAILED'),
      ClientReference: tx.clientReference,
      TransactionId: tx.transactionId,
      ExternalTransactionId: tx.externalTransactionId,
      AmountCharged: amount,
      OrderId: tx.transactionId,
      PaymentDate: new Date(now).toISOString(),
    },
  };
}

function sendData(tx: MockTransaction) {
  const amount = major(tx.amount);
  return {
    AmountDebited: tx.state === 'success' ? amount : 0,
    TransactionId: tx.transactionId,
    Description:
      tx.state === 'pending'
        ? 'Your request has been accepted. We will notify you when the transaction is completed.'
        : tx.state === 'success'
          ? 'The transaction was successful.'
          : (tx.failure?.description ?? 'The transaction failed.'),
    ClientReference: tx.clientReference,
    ExternalTransactionId: tx.state === 'pending' ? '' : tx.externalTransactionId,
    Amount: amount,
    Charges: 0,
    Meta: null,
    RecipientName: tx.recipientName,
  };
}

function sendCallback(tx: MockTransaction) {
  const ok = tx.state === 'success';
  return {
    ResponseCode: ok ? '0000' : (tx.failure?.code ?? '2001'),
    Message: ok ? 'success' : (tx.failure?.message ?? 'failed'),
    Data: sendData(tx),
  };
}

/** How Hubtel settles a receive or send and calls back about it (a receive's callback is dated on the mock's clock). */
const transactions = (ctx: MockContext): TransactionWire<MockTransaction> => ({
  pending: (tx) => tx.state === 'pending',
  settle: (tx: MockTransaction, outcome: Outcome): MockTransaction => ({
    ...tx,
    state: outcome.status,
    failure: outcome.status === 'failed' ? hubtelFailure(outcome.reason, tx.operation === 'receive' ? 'collect' : 'payout') : undefined,
  }),
  // Hubtel POSTs once and does not retry.
  callback: (tx) => jsonCallback(tx.callbackUrl, 'POST', tx.operation === 'receive' ? receiveCallback(tx, ctx.clock.now()) : sendCallback(tx)),
});
// Status checks may name Hubtel's own ids instead of the ClientReference.
const byHubtelIds = (tx: MockTransaction) => [tx.transactionId, tx.externalTransactionId];

export const createHubtelMock = defineWire<HubtelCredentials>({
  provider: HUBTEL_PROVIDER,
  errors: {
    send: sendError,
    outage: hubtelError(503, '5000', 'Service unavailable. Please try again later.'),
    invalid: (problem) =>
      problem.kind === 'schema'
        ? hubtelError(400, '4000', problem.message)
        : // Unparseable JSON and other body-parser errors: Hubtel's 4000 on the host that was called.
          hubtelError(problem.kind === 'unreadable' ? problem.status : 400, '4000', 'Validation errors: the request body is not valid JSON'),
    // No notFound: a path that is none of Hubtel's leaves the mock.
    internal: hubtelError(500, '5000', 'Internal error.'),
  },
  refusals: { reject, serverError },
  bodyParser: 'json',
  bodyLimit: '100kb',
  books: { receive: { wire: transactions, lookupKeys: byHubtelIds }, send: { wire: transactions, lookupKeys: byHubtelIds } },
  operations: [
    take({
      method: 'post',
      path: '/rmp/merchantaccount/merchants/:posSalesId/receive/mobilemoney',
      auth: posSales,
      body: moneyRequest({ msisdn: 'CustomerMsisdn', callback: 'PrimaryCallbackUrl' }),
      successStatus: 200,
      take: ({ body, settings }) => takeMoney('receive', settings, { ...body, recipientName: null }),
      answer: (tx: MockTransaction) => {
        const amount = major(tx.amount);
        return {
          Message: 'Transaction pending. Expect callback request for final state',
          ResponseCode: '0001',
          Data: {
            TransactionId: tx.transactionId,
            Description: tx.description,
            ClientReference: tx.clientReference,
            Amount: amount,
            Charges: 0,
            AmountAfterCharges: amount,
            AmountCharged: amount,
            DeliveryFee: 0,
          },
        };
      },
    }),
    // Hubtel's status is Paid, Unpaid or Refunded; there is no "Failed". A receive that failed stays
    // Unpaid, so the mock reports it as Unpaid with the failure's code and message in responseCode
    // and message (the same code its callback carried); a pending one is Unpaid with 0000
    // "Successful", as in Hubtel's Unpaid sample. (inference: Hubtel does not document how a
    // failed receive looks here.)
    custom({
      method: 'get',
      path: '/txnstatus/transactions/:posSalesId/status',
      auth: posSales,
      handle: async ({ req, res, books, fail }) => {
        const tx = await findTransaction(books.receive!, req);
        if (!tx) return fail(hubtelError(404, '4000', 'Transaction not found'));
        const amount = major(tx.amount);
        const failed = tx.state === 'failed';
        res.status(200).json({
          message: failed ? (tx.failure?.description ?? 'failed') : 'Successful',
          responseCode: failed ? (tx.failure?.code ?? '2001') : '0000',
          data: {
            date: new Date(tx.createdAt).toISOString(),
            status: tx.state === 'success' ? 'Paid' : 'Unpaid',
            transactionId: tx.transactionId,
            externalTransactionId: tx.state === 'pending' ? null : tx.externalTransactionId,
            paymentMethod: 'mobilemoney',
            clientReference: tx.clientReference,
            currencyCode: null,
            amount,
            charges: 0,
            amountAfterCharges: amount,
            isFulfilled: null,
          },
        });
      },
    }),
    take({
      method: 'post',
      path: '/smp/api/merchants/:prepaidDepositId/send/mobilemoney',
      auth: prepaidDeposit,
      body: moneyRequest({ msisdn: 'RecipientMsisdn', callback: 'PrimaryCallbackURL' }),
      successStatus: 200,
      take: ({ body, settings }) => takeMoney('send', settings, body),
      answer: (tx: MockTransaction) => ({ ResponseCode: '0001', Message: 'Transaction pending. Expect callback request for final state', Data: sendData(tx) }),
    }),
    custom({
      method: 'get',
      path: '/smrsc/api/merchants/:prepaidDepositId/transactions/status',
      auth: prepaidDeposit,
      handle: async ({ req, res, books, fail }) => {
        const tx = await findTransaction(books.send!, req);
        if (!tx) return fail(hubtelError(404, '4000', 'Transaction not found'));
        res.status(200).json({
          ResponseCode: 'success',
          Data: {
            TransactionId: tx.transactionId,
            networkTransactionId: tx.state === 'pending' ? null : tx.externalTransactionId,
            Amount: major(tx.amount),
            Fees: 0,
            ClientReference: tx.clientReference,
            Channel: tx.channel,
            CustomerNumber: tx.msisdn,
            transactionStatus: tx.state,
            CreatedAt: new Date(tx.createdAt).toISOString(),
          },
        });
      },
    }),
    // (inference) The Verification API's response shape is not in Hubtel's official text; this
    // follows what integrations read: responseCode, message, data.name, data.isRegistered. An
    // unregistered wallet is 0000 with isRegistered false, and the adapter reads it the same way.
    custom({
      method: 'get',
      path: '/rnv/v2/merchantaccount/merchants/:posSalesId/mobilemoney/verify',
      auth: posSales,
      handle: async ({ req, res, lookup, fail }) => {
        const channel = queryString(req, 'channel');
        const msisdn = queryString(req, 'customerMsisdn');
        const problems: string[] = [];
        if (!isChannel(channel)) problems.push('channel must be one of mtn-gh, vodafone-gh, tigo-gh');
        if (!msisdn || !/^233\d{9}$/.test(msisdn)) problems.push('customerMsisdn must be 233 followed by 9 digits');
        if (problems.length) return fail(hubtelError(400, '4000', `Validation errors: ${problems.join('; ')}`));
        const normalised = normaliseMsisdn(msisdn!) ?? msisdn!;
        const looked = await lookup({ req, res, successStatus: 200 }, { operation: 'resolve', channel: 'momo', msisdn: normalised, network: HUBTEL_CHANNELS[channel as HubtelChannel] });
        if (!looked) return;
        const behaviour = looked.behaviour;
        if (behaviour?.resolves === false) {
          return void res.status(200).json({ responseCode: '0000', message: 'Customer is not registered on mobile money', data: { name: null, isRegistered: false } });
        }
        res.status(200).json({ responseCode: '0000', message: 'Success', data: { name: behaviour?.name ?? fakeNameFor(normalised), isRegistered: true } });
      },
    }),
  ],
});

/** The Hubtel host a request went to: the first segment of its path under the mock. */
function hostOf(req: Request): HubtelHost {
  return (req.path.split('/')[1] ?? 'rmp') as HubtelHost;
}

function objectBody(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

async function findTransaction(book: MockTransactionBook<MockTransaction>, req: Request): Promise<MockTransaction | undefined> {
  const clientReference = queryString(req, 'clientReference');
  if (clientReference) return book.get(clientReference);
  const id = queryString(req, 'hubtelTransactionId') ?? queryString(req, 'networkTransactionId');
  if (!id) return undefined;
  return book.find(id);
}

function networkBrand(channel: HubtelChannel): string {
  return channel === 'mtn-gh' ? 'MTN Mobile Money' : channel === 'vodafone-gh' ? 'Telecel Cash' : 'AT Money';
}
