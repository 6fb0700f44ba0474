/*
 * paystack: a mock of Paystack's Ghana API (reference §3; the shapes follow Paystack's OpenAPI
 * description, PaystackOSS/openapi, and its response samples). docs/providers.md has the
 * fidelity matrix: every Paystack endpoint that touches GHS mobile money or GhIPSS, served or not.
 *
 * Authentication: `Authorization: Bearer <secret key>` on every call, else 401.
 * Every answer is {status, message, data?}; amounts are integer pesewas. Every refusal is
 *   {status:false, message, meta:{nextStep}, type:'validation_error'|'processor_error'|'api_error', code}
 *   e.g. 400 code duplicate_reference "Duplicate Transaction Reference",
 *        400 code invalid_transfer_recipient "Recipient specified is invalid".
 *
 * POST /charge  {email, amount, currency:'GHS', reference?, metadata?, mobile_money:{phone:'0XXXXXXXXX', provider:'mtn'|'vod'|'atl'|'tgo'}}
 *   200 data {reference, status:'pay_offline', display_text}        mtn, atl/tgo: a prompt on the phone
 *   200 data {reference, status:'send_otp', display_text}           vod: a voucher to enter (POST /charge/submit_otp);
 *       the charge does not settle until the voucher is submitted: a settlement due before it waits for it
 * POST /charge/submit_otp {otp, reference}   200 data: the charge as Check Pending Charge gives it
 * GET /charge/:reference                     Check Pending Charge: status send_otp | pay_offline | success | failed
 * GET /transaction/verify/:reference         Verify Transaction: status pending | success | failed, with
 *   customer {id, customer_code, ...}, authorization {authorization_code, bin, last4 (masked number), reusable, ...},
 *   fees, metadata, paidAt, createdAt, transaction_date, requested_amount
 * GET /transaction?perPage=&page=            List Transactions, newest first, meta {total, skipped, perPage, page, pageCount}
 * GET /transaction/:id                       Fetch Transaction by its integer id
 * POST /transferrecipient {type:'mobile_money'|'ghipss', name, account_number, bank_code, currency:'GHS', description?, metadata?}
 *   201 data {id, recipient_code:'RCP_…', integration, is_deleted, email, description, metadata, details, ...}
 *   The same type, bank_code and account_number give the same recipient again.
 * POST /transfer {source:'balance', amount, recipient:'RCP_…', reference, reason, currency:'GHS'}
 *   200 data {reference, transfer_code:'TRF_…', status:'pending', recipient: <the recipient's integer id>, ...}
 * GET /transfer/verify/:reference   Verify Transfer; GET /transfer/:id_or_code   Fetch Transfer:
 *   data {..., status:'pending'|'success'|'failed'|'reversed', recipient: {the recipient, expanded}, session, fee_charged, ...}
 * GET /bank/resolve?account_number=&bank_code=   (GhIPSS code, or MTN/VOD/ATL for a wallet)
 *   200 data {account_number, account_name, bank_id}; 422 when it cannot resolve
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
 * delay (a Telecel charge once its voucher is in); every account resolves to a seeded fake name.
 */
import type express from 'express';
import { z } from 'zod';
import { textField } from '../../kernel/json-object.ts';
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

/** A charge's step (Check Pending Charge's words): a voucher to enter, a prompt on the phone, or its end. */
type ChargeStep = 'send_otp' | 'pay_offline' | 'success' | 'failed';
type TransferStatus = 'pending' | 'success' | 'failed' | 'reversed';

interface MockCharge {
  id: number;
  reference: string;
  amount: number;
  email: string;
  phone: string;
  provider: string;
  /** send_otp until a Telecel voucher is in; pay_offline while the customer approves; then its end. */
  step: ChargeStep;
  gatewayResponse: string;
  /** The metadata the charge was sent with ('' when none, as Paystack gives it). */
  metadata: Record<string, unknown> | '';
  /** Where the charge request came from, as Paystack records it. */
  ipAddress: string;
  createdAt: string;
  paidAt: string | null;
  /** A settlement that fell due while the voucher was still awaited: applied when it comes in. */
  held?: Outcome;
  webhookUrl?: string;
}

interface MockRecipient {
  id: number;
  recipientCode: string;
  type: 'mobile_money' | 'ghipss';
  name: string;
  accountNumber: string;
  bankCode: string;
  description?: string;
  metadata?: Record<string, unknown> | null;
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

/** The mock's one integration (Paystack's account id), on every recipient and transfer. */
const INTEGRATION = numericId(`integration:${PROVIDER}`) % 1_000_000;
/** When the mock's bank list was made: Paystack dates each bank. */
const BANKS_DATED = '2020-01-01T00:00:00.000Z';
/** The mock's fee on a successful charge: 1.95% of the amount, rounded to the pesewa (its choice, documented). */
const chargeFee = (amount: number): number => Math.round((amount * 195) / 10_000);
/** Order keys of the charges book (List Transactions reads them backwards): creation time, then reference. */
const CHARGE_ORDER = 'at:';

function customerOf(email: string) {
  return {
    id: numericId(`customer:${email}`) % 100_000_000,
    first_name: null,
    last_name: null,
    email,
    customer_code: `CUS_${sha256Hex(`customer:${email}`).slice(0, 15)}`,
    phone: null,
    metadata: null,
    risk_action: 'default',
    international_format_phone: null,
  };
}

/** A wallet's authorization: the number masked as Paystack masks it (first three digits in bin, last three in last4). */
function authorizationOf(c: MockCharge) {
  const digits = c.phone.replace(/\D/g, '');
  return {
    authorization_code: `AUTH_${sha256Hex(`authorization:${c.reference}`).slice(0, 10)}`,
    bin: `${digits.slice(0, 3)}XXX`,
    last4: `X${digits.slice(-3)}`,
    exp_month: '12',
    exp_year: '9999',
    channel: 'mobile_money',
    card_type: '',
    bank: WALLET_NAMES[CHARGE_PROVIDERS[c.provider] ?? 'MTN'],
    country_code: 'GH',
    brand: WALLET_NAMES[CHARGE_PROVIDERS[c.provider] ?? 'MTN'],
    reusable: false,
    signature: `SIG_${sha256Hex(`signature:${c.phone}`).slice(0, 20)}`,
    account_name: null,
  };
}

/** Verify Transaction's status word for a charge. */
const transactionStatus = (c: MockCharge): 'pending' | 'success' | 'failed' => (c.step === 'success' || c.step === 'failed' ? c.step : 'pending');

/** A charge as Verify Transaction, Fetch Transaction, List Transactions and charge.success give it. */
function chargeData(c: MockCharge) {
  const settled = c.step === 'success';
  return {
    id: c.id,
    domain: 'test',
    status: transactionStatus(c),
    reference: c.reference,
    receipt_number: null,
    amount: c.amount,
    message: null,
    gateway_response: c.gatewayResponse,
    paid_at: c.paidAt,
    created_at: c.createdAt,
    channel: 'mobile_money',
    currency: 'GHS',
    ip_address: c.ipAddress,
    metadata: c.metadata,
    log: null,
    fees: settled ? chargeFee(c.amount) : null,
    fees_split: null,
    authorization: authorizationOf(c),
    customer: customerOf(c.email),
    plan: null,
    split: {},
    order_id: null,
    paidAt: c.paidAt,
    createdAt: c.createdAt,
    requested_amount: c.amount,
    pos_transaction_data: null,
    source: null,
    fees_breakdown: null,
    connect: null,
    transaction_date: c.createdAt,
    plan_object: {},
    subaccount: {},
  };
}

/** A charge as Check Pending Charge (and submit_otp) gives it: its step, and what the customer is asked. */
function pendingChargeData(c: MockCharge) {
  return {
    status: c.step,
    amount: c.amount,
    currency: 'GHS',
    transaction_date: c.createdAt,
    reference: c.reference,
    domain: 'test',
    redirect_url: null,
    metadata: c.metadata,
    gateway_response: c.gatewayResponse,
    message: null,
    channel: 'mobile_money',
    fees: c.step === 'success' ? chargeFee(c.amount) : null,
    authorization: authorizationOf(c),
    customer: customerOf(c.email),
    ...(c.step === 'send_otp' ? { display_text: VOUCHER } : c.step === 'pay_offline' ? { display_text: PROMPT } : {}),
  };
}

function recipientData(r: MockRecipient) {
  return {
    active: true,
    createdAt: r.createdAt,
    currency: 'GHS',
    description: r.description ?? '',
    domain: 'test',
    email: '',
    id: r.id,
    integration: INTEGRATION,
    metadata: r.metadata ?? null,
    name: r.name,
    recipient_code: r.recipientCode,
    type: r.type,
    updatedAt: r.createdAt,
    is_deleted: false,
    isDeleted: false,
    details: { authorization_code: null, account_number: r.accountNumber, account_name: r.name, bank_code: r.bankCode, bank_name: bankLabel(r.bankCode) },
  };
}

/** The fields every transfer answer shares. */
function transferFields(t: MockTransfer) {
  return {
    amount: t.amount,
    currency: 'GHS',
    domain: 'test',
    failures: null,
    id: t.id,
    integration: INTEGRATION,
    reason: t.reason,
    reference: t.reference,
    source: 'balance',
    source_details: null,
    status: t.status,
    titan_code: null,
    transfer_code: t.transferCode,
    request: numericId(`request:${t.reference}`) % 100_000_000,
    transferred_at: t.status === 'success' ? t.updatedAt : null,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

/** Initiate Transfer's answer: the recipient by its integer id, as Paystack gives it there. */
function initiatedTransferData(t: MockTransfer) {
  return { transfersessionid: [], transfertrials: [], ...transferFields(t), recipient: t.recipient.id };
}

/** Fetch and Verify Transfer's answer (and the transfer webhooks'): the recipient expanded. */
function transferData(t: MockTransfer) {
  return {
    ...transferFields(t),
    recipient: recipientData(t.recipient),
    session: { provider: null, id: null },
    fee_charged: 0,
    fees_breakdown: null,
    gateway_response: t.gatewayResponse,
  };
}

function bankLabel(code: string): string {
  const wallet = WALLET_BANKS[code.toUpperCase()];
  return wallet ? WALLET_NAMES[wallet] : (bankName(code) ?? code);
}

function ok(res: express.Response, httpStatus: number, message: string, data: unknown, meta?: unknown): void {
  res.status(httpStatus).json({ status: true, message, data, ...(meta ? { meta } : {}) });
}

/** Paystack's error types (its Error schema's enum). */
type PaystackErrorType = 'validation_error' | 'processor_error' | 'api_error';

/** A refusal in Paystack's words: its message, a code, the type, and the next step it suggests. */
function paystackError(status: number, code: string, message: string, nextStep: string, type: PaystackErrorType = 'validation_error'): WireError {
  return { status, code, message, extra: { meta: { nextStep }, type } };
}

function sendError(res: express.Response, e: WireError): void {
  const extra = e.extra ?? {};
  res.status(e.status).json({ status: false, message: e.message, meta: extra.meta, type: extra.type, code: e.code });
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
  pending: (c) => c.step === 'send_otp' || c.step === 'pay_offline',
  settle: (c: MockCharge, outcome: Outcome, now: number): MockCharge => {
    // Paystack decides nothing before the voucher is in: the settlement waits for it.
    if (c.step === 'send_otp') return { ...c, held: outcome };
    const { held: _held, ...charge } = c;
    return outcome.status === 'success'
      ? { ...charge, step: 'success', gatewayResponse: 'Approved', paidAt: iso(now) }
      : { ...charge, step: 'failed', gatewayResponse: paystackGatewayResponse(outcome.reason) };
  },
  // Paystack has no webhook for a failed charge.
  callback: (c) => (c.webhookUrl && c.step === 'success' ? jsonCallback(c.webhookUrl, 'POST', { event: 'charge.success', data: chargeData(c) }) : undefined),
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
  sendError(
    res,
    paystackError(behaviour.http_status ?? 400, 'transaction_declined', paystackGatewayResponse(behaviour.reason), 'Ask the customer to try again or use another payment method', 'processor_error'),
  );
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  sendError(res, paystackError(behaviour.http_status ?? 500, 'unknown_error', 'An error occurred while processing your request', 'Try again after a while', 'api_error'));
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
      'A Telecel (vod) charge waits for its voucher: POST /charge/submit_otp {otp, reference}; any 4 to 8 digits are accepted.',
      `Webhooks (x-paystack-signature: hex HMAC-SHA512 of the raw body with the secret key) go to ${s.webhookUrl ?? "the service's /internal/callbacks/paystack"}.`,
      'Off in the router by default: providers.paystack.enabled: true puts it in failover for momo and bank.',
    ],
  }),
});

/** An object given as metadata, or undefined (Paystack also takes a JSON string; the mock keeps objects). */
const metadataField = z
  .unknown()
  .optional()
  .transform((v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined));

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
  metadata: metadataField,
});

const recipientRequest = z.object({
  type: z.enum(['mobile_money', 'ghipss'], { error: 'Recipient type must be mobile_money or ghipss' }),
  name: z.string({ error: 'Name is required' }).min(1, { error: 'Name is required' }).max(100, { error: 'Name is required' }),
  account_number: z.string({ error: 'account_number and bank_code are required' }).min(1, { error: 'account_number and bank_code are required' }),
  bank_code: z.string({ error: 'account_number and bank_code are required' }).min(1, { error: 'account_number and bank_code are required' }),
  currency: z.literal('GHS', { error: 'Currency not supported' }).optional(),
  description: z
    .unknown()
    .optional()
    .transform((v) => textField(v)),
  metadata: metadataField,
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

const otpRequest = z.object({
  otp: z.unknown().transform((v, check) => {
    const otp = typeof v === 'number' ? String(v) : textField(v);
    if (!otp || !/^\d{4,8}$/.test(otp)) {
      check.addIssue({ code: 'custom', message: 'Invalid OTP' });
      return z.NEVER;
    }
    return otp;
  }),
  reference: z.string({ error: 'Reference is required' }).min(1, { error: 'Reference is required' }),
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
      available_for_direct_debit: false,
      active: true,
      is_deleted: false,
      country: 'Ghana',
      currency: 'GHS',
      type: b.type,
      createdAt: BANKS_DATED,
      updatedAt: BANKS_DATED,
    }));
}

/** A positive whole number from the query string, or the default; undefined when given but not one. */
function pageNumber(value: unknown, fallback: number): number | undefined {
  const text = textField(value);
  if (text === undefined) return fallback;
  return /^[1-9]\d{0,5}$/.test(text) ? Number(text) : undefined;
}

const invalid = (message: string): WireError => paystackError(400, 'invalid_params', message, 'Check the parameters and try again');
const TRANSACTION_NOT_FOUND = paystackError(404, 'transaction_not_found', 'Transaction reference not found', 'Ensure that you are passing the reference of a transaction on your integration');
const TRANSFER_NOT_FOUND = paystackError(404, 'transfer_not_found', 'Transfer not found', 'Ensure that you are passing the id, code or reference of a transfer on your integration');

export const createPaystackMock = defineWire<PaystackMockSettings>({
  provider: PROVIDER,
  errors: {
    send: sendError,
    outage: paystackError(503, 'service_unavailable', 'Service Unavailable', 'Try again after a while', 'api_error'),
    invalid: (problem) =>
      problem.kind === 'schema' ? invalid(problem.message) : problem.kind === 'unreadable' ? { ...invalid('Invalid request'), status: problem.status } : invalid('Invalid JSON body'),
    notFound: paystackError(404, 'route_not_found', 'Route not found', 'Check the method and path against the API reference', 'api_error'),
    internal: paystackError(500, 'unknown_error', 'An error occurred while processing your request', 'Try again after a while', 'api_error'),
  },
  refusals: { reject, serverError },
  auth: bearerKey((settings) => settings.secretKey, paystackError(401, 'invalid_key', 'Invalid key', 'Ensure that you provide the correct authorization key for the request')),
  sign: (settings) => (message) => ({ 'x-paystack-signature': hmacSha512Hex(settings.secretKey, message.body) }),
  books: {
    // A charge is found by its integer id too (Fetch Transaction), and listed by its creation time.
    charges: { wire: CHARGES, lookupKeys: (c: MockCharge) => [`id:${c.id}`, `${CHARGE_ORDER}${c.createdAt}:${c.reference}`] },
    // A transfer is found by its integer id and by its transfer code (Fetch Transfer).
    transfers: { wire: TRANSFERS, lookupKeys: (t: MockTransfer) => [`id:${t.id}`, `code:${t.transferCode}`] },
  },
  instance: (ctx): PaystackInstance => ({ recipients: ctx.books.open<MockRecipient>(PROVIDER, 'recipients'), generated: 0 }),
  operations: [
    take({
      method: 'post',
      path: '/charge',
      body: chargeRequest,
      successStatus: 200,
      take: ({ req, body, ctx, settings, instance }) => {
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
            step: momo.network === 'TELECEL' ? 'send_otp' : 'pay_offline',
            gatewayResponse: 'Pending',
            metadata: body.metadata ?? '',
            ipAddress: (req.ip ?? '127.0.0.1').replace(/^::ffff:/, ''),
            createdAt: iso(now),
            paidAt: null,
            ...(webhookUrl ? { webhookUrl } : {}),
          }),
          duplicate: () => paystackError(400, 'duplicate_reference', 'Duplicate Transaction Reference', 'Try again with a new reference for the charge'),
        };
      },
      answer: (charge: MockCharge) => ({
        status: true,
        message: 'Charge attempted',
        data: { reference: charge.reference, status: charge.step, display_text: charge.step === 'send_otp' ? VOUCHER : PROMPT },
      }),
    }),
    custom({
      method: 'post',
      path: '/charge/submit_otp',
      body: otpRequest,
      handle: async ({ body, res, books, answer, fail: refuse }) => {
        const charges = books.charges as MockTransactionBook<MockCharge>;
        const charge = await charges.get(body.reference);
        if (!charge) return refuse(TRANSACTION_NOT_FOUND);
        if (charge.step !== 'send_otp') return refuse(paystackError(400, 'invalid_charge_state', 'Charge is not awaiting an OTP', 'Check the charge with GET /charge/:reference'));
        // The voucher is in: the customer's approval follows, and a settlement already due applies now.
        const { held, ...rest } = charge;
        await charges.set(body.reference, { ...rest, step: 'pay_offline' });
        const now = held ? await answer<MockCharge>('charges', body.reference, held) : undefined;
        ok(res, 200, 'Charge attempted', pendingChargeData(now ?? { ...rest, step: 'pay_offline' }));
      },
    }),
    read({
      method: 'get',
      path: '/charge/:reference',
      book: 'charges',
      param: 'reference',
      by: 'reference',
      missing: () => TRANSACTION_NOT_FOUND,
      answer: (charge: MockCharge) => ({ status: true, message: 'Charge retrieved', data: pendingChargeData(charge) }),
    }),
    read({
      method: 'get',
      path: '/transaction/verify/:reference',
      book: 'charges',
      param: 'reference',
      by: 'reference',
      missing: () => TRANSACTION_NOT_FOUND,
      answer: (charge: MockCharge) => ({ status: true, message: 'Verification successful', data: chargeData(charge) }),
    }),
    custom({
      method: 'get',
      path: '/transaction',
      handle: async ({ req, res, books, fail: refuse }) => {
        const perPage = pageNumber(req.query.perPage ?? req.query.per_page, 50);
        const page = pageNumber(req.query.page, 1);
        if (perPage === undefined || perPage > 100 || page === undefined) return refuse(invalid('perPage must be 1 to 100 and page a positive number'));
        const skipped = (page - 1) * perPage;
        const { items, total } = await (books.charges as MockTransactionBook<MockCharge>).page(CHARGE_ORDER, { limit: perPage, offset: skipped });
        ok(res, 200, 'Transactions retrieved', items.map(chargeData), { total, total_volume: 0, skipped, perPage, page, pageCount: Math.max(1, Math.ceil(total / perPage)) });
      },
    }),
    custom({
      method: 'get',
      path: '/transaction/:id',
      handle: async ({ req, res, books, fail: refuse }) => {
        const id = (req.params as Record<string, string>).id!;
        const charge = /^\d+$/.test(id) ? await (books.charges as MockTransactionBook<MockCharge>).find(`id:${id}`) : undefined;
        if (!charge) return refuse(paystackError(404, 'transaction_not_found', 'Transaction not found', 'Ensure that you are passing the id of a transaction on your integration'));
        ok(res, 200, 'Transaction retrieved', chargeData(charge));
      },
    }),
    custom({
      method: 'post',
      path: '/transferrecipient',
      body: recipientRequest,
      handle: async ({ body, res, ctx, instance, fail: refuse }) => {
        const { type, name, account_number: accountNumber, bank_code: bankCode } = body;
        const destination = destinationOf(bankCode, accountNumber);
        if (!destination || (destination.channel === 'momo') !== (type === 'mobile_money'))
          return refuse(paystackError(400, 'invalid_bank_details', 'Account number or bank code is invalid', 'Check the account number and the bank code (GET /bank)'));
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
          ...(body.description ? { description: body.description } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
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
        if (!recipient) return paystackError(400, 'invalid_transfer_recipient', 'Recipient specified is invalid', 'Create the recipient with POST /transferrecipient and pass its recipient_code');
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
          duplicate: () => paystackError(400, 'duplicate_reference', 'Duplicate Transfer Reference', 'Try again with a new reference for the transfer'),
        };
      },
      answer: (transfer: MockTransfer) => ({ status: true, message: 'Transfer has been queued', data: initiatedTransferData(transfer) }),
    }),
    read({
      method: 'get',
      path: '/transfer/verify/:reference',
      book: 'transfers',
      param: 'reference',
      by: 'reference',
      missing: () => TRANSFER_NOT_FOUND,
      answer: (transfer: MockTransfer) => ({ status: true, message: 'Transfer retrieved', data: transferData(transfer) }),
    }),
    custom({
      method: 'get',
      path: '/transfer/:idOrCode',
      handle: async ({ req, res, books, fail: refuse }) => {
        const idOrCode = (req.params as Record<string, string>).idOrCode!;
        const transfers = books.transfers as MockTransactionBook<MockTransfer>;
        const transfer = await transfers.find(/^\d+$/.test(idOrCode) ? `id:${idOrCode}` : `code:${idOrCode}`);
        if (!transfer) return refuse(TRANSFER_NOT_FOUND);
        ok(res, 200, 'Transfer retrieved', transferData(transfer));
      },
    }),
    custom({
      method: 'get',
      path: '/bank/resolve',
      handle: async ({ req, res, lookup, fail: refuse }) => {
        const accountNumber = textField(req.query.account_number);
        const bankCode = textField(req.query.bank_code);
        if (!accountNumber || !bankCode) return refuse(invalid('account_number and bank_code are required'));
        const destination = destinationOf(bankCode, accountNumber);
        const unresolved = paystackError(422, 'invalid_bank_details', RESOLVE_FAILED, 'Check the account number and the bank code, then try again');
        if (!destination) return refuse(unresolved);
        const looked = await lookup({ req, res, successStatus: 200 }, { operation: 'resolve', ...destination });
        if (!looked) return;
        if (looked.behaviour?.resolves === false) return refuse(unresolved);
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
