/*
 * paystack: a mock of Paystack's Ghana API (reference §3), the parts railyard's adapter uses.
 *
 * Authentication: `Authorization: Bearer <secret key>` on every call, else
 *   401 {status:false, message:'Invalid key'}
 * Every answer is {status, message, data?}; amounts are integer pesewas.
 *
 * POST /charge  {email, amount, currency:'GHS', reference?, mobile_money:{phone:'0XXXXXXXXX', provider:'mtn'|'vod'|'atl'|'tgo'}}
 *   200 data {reference, status:'pay_offline', display_text}        mtn, atl/tgo: a prompt on the phone
 *   200 data {reference, status:'send_otp', display_text}           vod: a voucher to enter (POST /charge/submit_otp)
 *   (the mock settles a charge as the scenario says, whether or not a voucher is submitted)
 *   400 {status:false, message:'Duplicate Transaction Reference'}    a reference seen before
 * POST /charge/submit_otp {otp, reference}   200 data {reference, status:'pay_offline', display_text}
 * GET /transaction/verify/:reference
 *   200 data {id, status:'pending'|'success'|'failed', reference, amount, gateway_response, channel:'mobile_money', ...}
 *   400 {status:false, message:'Transaction reference not found'}
 * POST /transferrecipient {type:'mobile_money'|'ghipss', name, account_number, bank_code, currency:'GHS'}
 *   201 data {recipient_code:'RCP_…', type, name, details:{account_number, bank_code, bank_name}, ...}
 *   The same type, bank_code and account_number give the same recipient again.
 * POST /transfer {source:'balance', amount, recipient:'RCP_…', reference, reason, currency:'GHS'}
 *   200 data {reference, transfer_code:'TRF_…', status:'pending', ...}
 *   400 {status:false, message:'Duplicate Transfer Reference'}
 * GET /transfer/verify/:reference   200 data {..., status:'pending'|'success'|'failed'|'reversed'}; 404 unknown
 * GET /bank/resolve?account_number=&bank_code=   (GhIPSS code, or MTN/VOD/ATL for a wallet)
 *   200 data {account_number, account_name, bank_id}
 *   422 {status:false, message:'Could not resolve account name. Check parameters or try again.'}
 * GET /bank?currency=GHS[&type=ghipss|mobile_money]   the banks and wallets it knows
 *
 * Webhooks: POST {event, data} to the webhook URL (Paystack's dashboard setting: configured, or
 * the service's /internal/callbacks/paystack), with x-paystack-signature = hex HMAC-SHA512 of the
 * raw body keyed with the secret key. Events: charge.success (a failed charge sends none: the
 * caller verifies), transfer.success, transfer.failed, transfer.reversed (a scenario failure
 * whose reason is "reversed"). Sent once, never retried (live Paystack retries; railyard's mocks
 * leave retries to scenarios' duplicate callbacks).
 *
 * Sandbox behaviour when no scenario rule decides: every charge, Paystack's test number
 * 0551234987 (provider mtn) among them, and every transfer succeeds after the default callback
 * delay; every account resolves to a seeded fake name.
 */
import type express from 'express';
import { z } from 'zod';
import { parseJsonObject, textField } from '../../kernel/json-object.ts';
import type { PaystackOptions } from './options.ts';
import { bankName, GHIPSS_BANKS, isGhipssCode } from '../../kernel/banks.ts';
import { iso } from '../../kernel/clock.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { normaliseMsisdn, type Network } from '../../kernel/msisdn.ts';
import { hmacSha512Hex, sha256Hex } from '../../kernel/secrets.ts';
import type { ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { MockQuery } from '../../mocks/engine/behaviour.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take, type WireError } from '../../mocks/engine/define-wire.ts';
import type { MockContext } from '../../mocks/engine/mock-context.ts';
import type { MockTransactionBook } from '../../mocks/engine/mock-transaction-book.ts';
import { fakeNameFor } from '../../mocks/fake-name.ts';
import { defineMock } from '../../mocks/mock-definition.ts';
import { bearerKey } from '../../mocks/engine/api-key-auth.ts';
import { reasonWord } from '../../mocks/engine/reason-word.ts';

export interface PaystackMockSettings {
  secretKey: string;
  /** Where webhooks go; undefined: the service's /internal/callbacks/paystack, when known. */
  webhookUrl?: string;
}

const PROVIDER = 'paystack';
/** Paystack's Ghana test MoMo number (provider mtn). */
export const PAYSTACK_TEST_NUMBER = '0551234987';

const CHARGE_PROVIDERS: Readonly<Record<string, Network>> = { mtn: 'MTN', vod: 'TELECEL', atl: 'AT', tgo: 'AT' };
/** A transfer recipient's bank_code for a wallet. */
const WALLET_BANKS: Readonly<Record<string, Network>> = { MTN: 'MTN', VOD: 'TELECEL', ATL: 'AT' };
const WALLET_NAMES: Readonly<Record<Network, string>> = { MTN: 'MTN Mobile Money', TELECEL: 'Telecel Cash', AT: 'AT Money' };
const PROMPT = 'Please complete authorization process on your mobile phone';
const VOUCHER = 'Please dial *110# to generate a voucher code. Then input the voucher';
const TRANSFER_REFERENCE = /^[a-z0-9_-]{16,50}$/;

// Scenario reasons in every provider's vocabulary, as Paystack's gateway_response words.
const GATEWAY_RESPONSES: Readonly<Record<string, string>> = {
  insufficient_funds: 'Insufficient Funds',
  not_enough_funds: 'Insufficient Funds',
  internal_processing_error: 'Insufficient Funds',
  '2001': 'Insufficient Funds',
  '51': 'Insufficient Funds',
  account_not_found: 'Account Not Found',
  payer_not_found: 'Account Not Found',
  payee_not_found: 'Account Not Found',
  '25': 'Account Not Found',
  '3050': 'Account Not Found',
  expired: 'Transaction Timed Out',
  could_not_perform_transaction: 'Transaction Timed Out',
};

/** Paystack's gateway_response for a scenario's failure reason; "Declined" for anything else. */
export function paystackGatewayResponse(reason: string | undefined): string {
  return GATEWAY_RESPONSES[reasonWord(reason)] ?? 'Declined';
}

type ChargeStatus = 'pending' | 'success' | 'failed';
type TransferStatus = 'pending' | 'success' | 'failed' | 'reversed';

interface MockCharge {
  id: number;
  reference: string;
  amount: number;
  email: string;
  phone: string;
  provider: string;
  status: ChargeStatus;
  gatewayResponse: string;
  createdAt: string;
  paidAt: string | null;
  webhookUrl?: string;
}

interface MockRecipient {
  id: number;
  recipientCode: string;
  type: 'mobile_money' | 'ghipss';
  name: string;
  accountNumber: string;
  bankCode: string;
  createdAt: string;
}

interface MockTransfer {
  id: number;
  reference: string;
  transferCode: string;
  amount: number;
  reason: string;
  recipient: MockRecipient;
  status: TransferStatus;
  gatewayResponse: string | null;
  createdAt: string;
  updatedAt: string;
  webhookUrl?: string;
}

/** Paystack's ids are integers; ours derive from the reference so replays give the same ones. */
function numericId(seed: string): number {
  return Number.parseInt(sha256Hex(seed).slice(0, 8), 16);
}

function chargeData(c: MockCharge) {
  return {
    id: c.id,
    domain: 'test',
    status: c.status,
    reference: c.reference,
    amount: c.amount,
    gateway_response: c.gatewayResponse,
    paid_at: c.paidAt,
    created_at: c.createdAt,
    channel: 'mobile_money',
    currency: 'GHS',
    customer: { email: c.email },
    authorization: { channel: 'mobile_money', bank: WALLET_NAMES[CHARGE_PROVIDERS[c.provider] ?? 'MTN'], mobile_money_number: c.phone },
  };
}

function recipientData(r: MockRecipient) {
  return {
    active: true,
    currency: 'GHS',
    domain: 'test',
    id: r.id,
    name: r.name,
    recipient_code: r.recipientCode,
    type: r.type,
    details: { authorization_code: null, account_number: r.accountNumber, account_name: r.name, bank_code: r.bankCode, bank_name: bankLabel(r.bankCode) },
    createdAt: r.createdAt,
    updatedAt: r.createdAt,
  };
}

function transferData(t: MockTransfer) {
  return {
    amount: t.amount,
    currency: 'GHS',
    domain: 'test',
    id: t.id,
    reason: t.reason,
    reference: t.reference,
    source: 'balance',
    status: t.status,
    transfer_code: t.transferCode,
    gateway_response: t.gatewayResponse,
    recipient: recipientData(t.recipient),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    transferred_at: t.status === 'success' ? t.updatedAt : null,
  };
}

function bankLabel(code: string): string {
  const wallet = WALLET_BANKS[code.toUpperCase()];
  return wallet ? WALLET_NAMES[wallet] : (bankName(code) ?? code);
}

function fail(res: express.Response, httpStatus: number, message: string): void {
  res.status(httpStatus).json({ status: false, message });
}

function ok(res: express.Response, httpStatus: number, message: string, data: unknown): void {
  res.status(httpStatus).json({ status: true, message, data });
}

/** Where a bank code and account number lead: a GhIPSS bank account, or a wallet (bank code MTN/VOD/ATL). */
function destinationOf(bankCode: string, accountNumber: string): Omit<MockQuery, 'operation'> | undefined {
  const wallet = WALLET_BANKS[bankCode.toUpperCase()];
  if (wallet) {
    const msisdn = normaliseMsisdn(accountNumber);
    return msisdn ? { channel: 'momo', msisdn, network: wallet } : undefined;
  }
  if (!isGhipssCode(bankCode) || !/^\d{8,16}$/.test(accountNumber)) return undefined;
  return { channel: 'bank', account_number: accountNumber, bank_code: bankCode };
}

const CHARGES: TransactionWire<MockCharge> = {
  pending: (c) => c.status === 'pending',
  settle: (c: MockCharge, outcome: Outcome, now: number): MockCharge =>
    outcome.status === 'success' ? { ...c, status: 'success', gatewayResponse: 'Approved', paidAt: iso(now) } : { ...c, status: 'failed', gatewayResponse: paystackGatewayResponse(outcome.reason) },
  // Paystack has no webhook for a failed charge.
  callback: (c) => (c.webhookUrl && c.status === 'success' ? jsonCallback(c.webhookUrl, 'POST', { event: 'charge.success', data: chargeData(c) }) : undefined),
};

const TRANSFERS: TransactionWire<MockTransfer> = {
  pending: (t) => t.status === 'pending',
  settle: (t: MockTransfer, outcome: Outcome, now: number): MockTransfer => {
    const reversed = outcome.status === 'failed' && /revers/i.test(outcome.reason ?? '');
    const status: TransferStatus = outcome.status === 'success' ? 'success' : reversed ? 'reversed' : 'failed';
    return { ...t, status, gatewayResponse: status === 'failed' ? paystackGatewayResponse(outcome.reason) : null, updatedAt: iso(now) };
  },
  callback: (t) => (t.webhookUrl && t.status !== 'pending' ? jsonCallback(t.webhookUrl, 'POST', { event: `transfer.${t.status}`, data: transferData(t) }) : undefined),
};

function reject(res: express.Response, behaviour: ProviderBehaviour): void {
  fail(res, behaviour.http_status ?? 400, paystackGatewayResponse(behaviour.reason));
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  fail(res, behaviour.http_status ?? 500, 'An error occurred while processing your request');
}

/** The Paystack mock in the provider registry: its secret key comes from providers.paystack. */
export const paystackMock = defineMock({
  name: PROVIDER,
  credentials: (options: PaystackOptions): PaystackMockSettings => {
    const c = options;
    return { secretKey: c.secret_key, ...(c.webhook_url ? { webhookUrl: c.webhook_url } : {}) };
  },
  create: (ctx, settings) => createPaystackMock(ctx, settings),
  access: (s) => ({
    credentials: [{ name: 'secret key', where: 'Authorization: Bearer header on every call', value: s.secretKey, secret: true }],
    notes: [
      `Test number ${PAYSTACK_TEST_NUMBER} (mobile_money.provider "mtn"); every number succeeds unless a scenario says otherwise.`,
      `Webhooks (x-paystack-signature: hex HMAC-SHA512 of the raw body with the secret key) go to ${s.webhookUrl ?? "the service's /internal/callbacks/paystack"}.`,
      'Off in the router by default: providers.paystack.enabled: true puts it in failover for momo and bank.',
    ],
  }),
});

/** A mobile-money charge, in the order (and the words) Paystack checks it. */
const chargeRequest = z.object({
  email: z.string({ error: 'Invalid Email Address Passed' }).regex(/^[^@\s]+@[^@\s]+$/, { error: 'Invalid Email Address Passed' }),
  amount: z.number({ error: 'Invalid Amount Sent' }).refine(isMinorAmount, { error: 'Invalid Amount Sent' }),
  currency: z.literal('GHS', { error: 'Currency not supported by merchant' }).optional(),
  mobile_money: z
    .unknown()
    .optional()
    .transform((value, check) => {
      const momo = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
      const provider = textField(momo?.provider)?.toLowerCase();
      if (!momo || !provider || !(provider in CHARGE_PROVIDERS)) {
        check.addIssue({ code: 'custom', message: 'mobile_money.provider must be one of mtn, vod, atl, tgo' });
        return z.NEVER;
      }
      const phone = textField(momo.phone);
      const msisdn = phone ? normaliseMsisdn(phone) : null;
      if (!phone || !msisdn) {
        check.addIssue({ code: 'custom', message: 'mobile_money.phone must be a Ghana mobile number' });
        return z.NEVER;
      }
      return { provider, phone, msisdn, network: CHARGE_PROVIDERS[provider]! };
    }),
  reference: z
    .unknown()
    .optional()
    .transform(textField)
    .refine((given) => given === undefined || /^[A-Za-z0-9._=-]{1,100}$/.test(given), { error: 'Invalid reference' }),
});

const recipientRequest = z.object({
  type: z.enum(['mobile_money', 'ghipss'], { error: 'Recipient type must be mobile_money or ghipss' }),
  name: z.string({ error: 'Name is required' }).min(1, { error: 'Name is required' }).max(100, { error: 'Name is required' }),
  account_number: z.string({ error: 'account_number and bank_code are required' }).min(1, { error: 'account_number and bank_code are required' }),
  bank_code: z.string({ error: 'account_number and bank_code are required' }).min(1, { error: 'account_number and bank_code are required' }),
  currency: z.literal('GHS', { error: 'Currency not supported' }).optional(),
});

const transferRequest = z.object({
  source: z.literal('balance', { error: 'Source must be balance' }),
  amount: z.number({ error: 'Invalid amount' }).refine(isMinorAmount, { error: 'Invalid amount' }),
  currency: z.literal('GHS', { error: 'Currency not supported' }).optional(),
  reference: z.string({ error: 'Reference must be 16 to 50 lowercase letters, digits, - or _' }).regex(TRANSFER_REFERENCE, { error: 'Reference must be 16 to 50 lowercase letters, digits, - or _' }),
  recipient: z
    .unknown()
    .optional()
    .transform((v) => textField(v) ?? ''),
  reason: z
    .unknown()
    .optional()
    .transform((v) => textField(v) ?? ''),
});

/** What one Paystack mock keeps besides its books: its transfer recipients, and a count for the references it makes up. */
interface PaystackInstance {
  recipients: MockTransactionBook<MockRecipient>;
  generated: number;
}

const RESOLVE_FAILED = 'Could not resolve account name. Check parameters or try again.';

/** Where webhooks go (Paystack's dashboard setting), read when a transaction is accepted, so it travels with the transaction. */
function webhookUrlOf(settings: PaystackMockSettings, ctx: MockContext): string | undefined {
  return settings.webhookUrl ?? (ctx.serviceBaseUrl ? `${ctx.serviceBaseUrl().replace(/\/+$/, '')}/internal/callbacks/${PROVIDER}` : undefined);
}

function banksList(type: string | undefined) {
  const wallets = Object.entries(WALLET_BANKS).map(([code, network]) => ({ name: WALLET_NAMES[network], code, type: 'mobile_money' }));
  const banks = Object.entries(GHIPSS_BANKS).map(([code, name]) => ({ name, code, type: 'ghipss' }));
  return [...banks, ...wallets]
    .filter((b) => !type || b.type === type)
    .map((b) => ({
      id: numericId(`bank:${b.code}`) % 1000,
      name: b.name,
      slug: b.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      code: b.code,
      longcode: b.code,
      gateway: b.type === 'ghipss' ? 'ghipss' : null,
      pay_with_bank: false,
      supports_transfer: true,
      active: true,
      country: 'Ghana',
      currency: 'GHS',
      type: b.type,
    }));
}

const failure = (status: number, message: string): WireError => ({ status, code: '', message });

export const createPaystackMock = defineWire<PaystackMockSettings>({
  provider: PROVIDER,
  errors: {
    send: (res, e) => fail(res, e.status, e.message),
    outage: failure(503, 'Service Unavailable'),
    invalid: (problem) => (problem.kind === 'schema' ? failure(400, problem.message) : problem.kind === 'unreadable' ? failure(problem.status, 'Invalid request') : failure(400, 'Invalid JSON body')),
    notFound: failure(404, 'Route not found'),
    internal: failure(500, 'An error occurred while processing your request'),
  },
  refusals: { reject, serverError },
  auth: bearerKey((settings) => settings.secretKey, failure(401, 'Invalid key')),
  sign: (settings) => (message) => ({ 'x-paystack-signature': hmacSha512Hex(settings.secretKey, message.body) }),
  books: { charges: { wire: CHARGES }, transfers: { wire: TRANSFERS } },
  instance: (ctx): PaystackInstance => ({ recipients: ctx.books.open<MockRecipient>(PROVIDER, 'recipients'), generated: 0 }),
  operations: [
    take({
      method: 'post',
      path: '/charge',
      body: chargeRequest,
      successStatus: 200,
      take: ({ body, ctx, settings, instance }) => {
        const { email, amount, mobile_money: momo } = body;
        const state = instance as PaystackInstance;
        const reference = body.reference ?? `T${sha256Hex(`${ctx.clock.now()}:${momo.msisdn}:${++state.generated}`).slice(0, 15)}`;
        const webhookUrl = webhookUrlOf(settings, ctx);
        return {
          book: 'charges',
          reference,
          query: { operation: 'collect', channel: 'momo', msisdn: momo.msisdn, network: momo.network, amount },
          create: (now): MockCharge => ({
            id: numericId(`charge:${reference}`),
            reference,
            amount,
            email,
            phone: momo.phone,
            provider: momo.provider,
            status: 'pending',
            gatewayResponse: 'Pending',
            createdAt: iso(now),
            paidAt: null,
            ...(webhookUrl ? { webhookUrl } : {}),
          }),
          duplicate: () => failure(400, 'Duplicate Transaction Reference'),
        };
      },
      answer: (charge: MockCharge, { body }) => {
        const voucher = body.mobile_money.network === 'TELECEL';
        return { status: true, message: 'Charge attempted', data: { reference: charge.reference, status: voucher ? 'send_otp' : 'pay_offline', display_text: voucher ? VOUCHER : PROMPT } };
      },
    }),
    custom({
      method: 'post',
      path: '/charge/submit_otp',
      handle: async ({ req, res, books, fail: refuse }) => {
        const body = parseJsonObject(req.body);
        const reference = textField(body?.reference);
        if (!reference || !textField(body?.otp)) return refuse(failure(400, 'otp and reference are required'));
        if (!(await books.charges!.has(reference))) return refuse(failure(400, 'Transaction reference not found'));
        ok(res, 200, 'Charge attempted', { reference, status: 'pay_offline', display_text: PROMPT });
      },
    }),
    read({
      method: 'get',
      path: '/transaction/verify/:reference',
      book: 'charges',
      param: 'reference',
      by: 'reference',
      missing: () => failure(400, 'Transaction reference not found'),
      answer: (charge: MockCharge) => ({ status: true, message: 'Verification successful', data: chargeData(charge) }),
    }),
    custom({
      method: 'post',
      path: '/transferrecipient',
      body: recipientRequest,
      handle: async ({ body, res, ctx, instance, fail: refuse }) => {
        const { type, name, account_number: accountNumber, bank_code: bankCode } = body;
        const destination = destinationOf(bankCode, accountNumber);
        if (!destination || (destination.channel === 'momo') !== (type === 'mobile_money')) return refuse(failure(400, 'Account number or bank code is invalid'));
        const { recipients } = instance as PaystackInstance;
        const key = `${type}:${bankCode.toUpperCase()}:${accountNumber}`;
        const recipientCode = `RCP_${sha256Hex(key).slice(0, 15)}`;
        const known = await recipients.get(recipientCode);
        const recipient: MockRecipient = known ?? {
          id: numericId(`recipient:${key}`),
          recipientCode,
          type,
          name,
          accountNumber,
          bankCode: bankCode.toUpperCase(),
          createdAt: iso(ctx.clock.now()),
        };
        if (!known) await recipients.set(recipientCode, recipient);
        ok(res, 201, 'Transfer recipient created successfully', recipientData(recipient));
      },
    }),
    take({
      method: 'post',
      path: '/transfer',
      body: transferRequest,
      successStatus: 200,
      take: async ({ body, ctx, settings, instance }) => {
        const { amount, reference, reason } = body;
        const recipient = await (instance as PaystackInstance).recipients.get(body.recipient);
        if (!recipient) return failure(400, 'Invalid transfer recipient');
        const destination = destinationOf(recipient.bankCode, recipient.accountNumber)!;
        const webhookUrl = webhookUrlOf(settings, ctx);
        return {
          book: 'transfers',
          reference,
          query: { operation: 'payout', ...destination, amount },
          create: (now): MockTransfer => ({
            id: numericId(`transfer:${reference}`),
            reference,
            transferCode: `TRF_${sha256Hex(reference).slice(0, 15)}`,
            amount,
            reason,
            recipient,
            status: 'pending',
            gatewayResponse: null,
            createdAt: iso(now),
            updatedAt: iso(now),
            ...(webhookUrl ? { webhookUrl } : {}),
          }),
          duplicate: () => failure(400, 'Duplicate Transfer Reference'),
        };
      },
      answer: (transfer: MockTransfer) => ({ status: true, message: 'Transfer has been queued', data: transferData(transfer) }),
    }),
    read({
      method: 'get',
      path: '/transfer/verify/:reference',
      book: 'transfers',
      param: 'reference',
      by: 'reference',
      missing: () => failure(404, 'Transfer not found'),
      answer: (transfer: MockTransfer) => ({ status: true, message: 'Transfer retrieved', data: transferData(transfer) }),
    }),
    custom({
      method: 'get',
      path: '/bank/resolve',
      handle: async ({ req, res, lookup, fail: refuse }) => {
        const accountNumber = textField(req.query.account_number);
        const bankCode = textField(req.query.bank_code);
        if (!accountNumber || !bankCode) return refuse(failure(400, 'account_number and bank_code are required'));
        const destination = destinationOf(bankCode, accountNumber);
        if (!destination) return refuse(failure(422, RESOLVE_FAILED));
        const looked = await lookup({ req, res, successStatus: 200 }, { operation: 'resolve', ...destination });
        if (!looked) return;
        if (looked.behaviour?.resolves === false) return refuse(failure(422, RESOLVE_FAILED));
        const holder = destination.msisdn ?? `${bankCode}:${accountNumber}`;
        ok(res, 200, 'Account number resolved', {
          account_number: accountNumber,
          account_name: looked.behaviour?.name ?? fakeNameFor(holder),
          bank_id: numericId(`bank:${bankCode.toUpperCase()}`) % 1000,
        });
      },
    }),
    custom({ method: 'get', path: '/bank', handle: ({ req, res }) => ok(res, 200, 'Banks retrieved', banksList(textField(req.query.type))) }),
  ],
});
