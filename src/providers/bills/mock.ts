/*
 * bills: a mock of a Ghana biller aggregator (airtime, data bundles, ECG prepaid, GWCL water,
 * DSTV and GOtv), in the manner of the aggregators Ghanaian fintechs use. No public standard
 * exists, so railyard defines this small wire (docs/v1/bills.md):
 *
 * Authentication: `Authorization: Bearer <api key>` on every call, else
 *   401 {status:'error', code:'UNAUTHORIZED', message}
 * Every answer is {status:'success', message, data} or {status:'error', code, message}; amounts are
 * integer pesewas.
 *
 * GET  /billers                 the billers it vends for: code, category, customer format, products
 * POST /vends {reference, biller, product?, customer, amount, currency:'GHS', callback_url?}
 *   202 data {reference, vend_id:'VND…', status:'pending', ...}   accepted; the outcome follows
 *   400 code INVALID_REQUEST | UNKNOWN_BILLER | UNKNOWN_PRODUCT     a malformed vend
 *   404 code INVALID_CUSTOMER                                       no such number, meter or smartcard
 *   409 code DUPLICATE_REFERENCE, data: the vend                    a reference seen before
 * GET  /vends/:reference        200 data {..., status:'pending'|'successful'|'failed', token, units, failure_code}
 *                               404 code NOT_FOUND
 *
 * Callbacks: POST {event:'vend.successful'|'vend.failed', data: <the vend>} to the vend's
 * callback_url, once, with X-Bills-Signature = hex HMAC-SHA256(signing secret, raw body). A
 * successful ECG-PREPAID vend carries its 20-digit token and its units (kWh).
 *
 * Sandbox behaviour when no scenario rule decides (a vend is a `payout` on channel `bills`;
 * rules match the number as msisdn, a meter, account or smartcard as account_number):
 *   a utility customer (meter, account, smartcard) ending in 2 is unknown: 404 INVALID_CUSTOMER;
 *   ending in 3: accepted, then the vend fails (VEND_FAILED);
 *   ending in 4: a slow vend, successful 90 s after acceptance;
 *   anything else, and every phone number: successful after the default callback delay.
 */
import type express from 'express';
import { z } from 'zod';
import type { BillsOptions } from './options.ts';
import { iso } from '../../kernel/clock.ts';
import { textField } from '../../kernel/json-object.ts';
import { isMinorAmount } from '../../kernel/money.ts';
import { normaliseMsisdn, type Network } from '../../kernel/msisdn.ts';
import { hmacSha256Hex, sha256Hex } from '../../kernel/secrets.ts';
import type { CallbackPlan, ProviderBehaviour } from '../../scenarios/scenario-types.ts';
import type { Outcome, TransactionWire } from '../../mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take } from '../../mocks/engine/define-wire.ts';
import { defineMock } from '../../mocks/mock-definition.ts';
import { bearerKey } from '../../mocks/engine/api-key-auth.ts';
import { reasonWord } from '../../mocks/engine/reason-word.ts';

export interface BillsMockSettings {
  apiKey: string;
  signingSecret: string;
}

const PROVIDER = 'bills';
/** How long the sandbox's slow vend (a utility customer ending in 4) takes. */
export const SLOW_VEND_SECONDS = 90;
/** The sandbox's ECG tariff for the units a token buys: 1.50 GHS per kWh. */
const ECG_PESEWAS_PER_KWH = 150;

interface Biller {
  code: string;
  name: string;
  category: 'airtime' | 'data' | 'electricity' | 'water' | 'tv';
  /** What the customer field is, and its format. */
  customer: 'msisdn' | { label: string; pattern: RegExp };
  network?: Network;
  /** Products it sells by code (data bundles, TV packages); none for an open amount. */
  products?: readonly string[];
}

const BILLERS: readonly Biller[] = [
  { code: 'MTN-AIRTIME', name: 'MTN airtime', category: 'airtime', customer: 'msisdn', network: 'MTN' },
  { code: 'TELECEL-AIRTIME', name: 'Telecel airtime', category: 'airtime', customer: 'msisdn', network: 'TELECEL' },
  { code: 'AT-AIRTIME', name: 'AT airtime', category: 'airtime', customer: 'msisdn', network: 'AT' },
  { code: 'MTN-DATA', name: 'MTN data bundles', category: 'data', customer: 'msisdn', network: 'MTN', products: ['MTN-DATA-500MB', 'MTN-DATA-1GB', 'MTN-DATA-5GB'] },
  { code: 'TELECEL-DATA', name: 'Telecel data bundles', category: 'data', customer: 'msisdn', network: 'TELECEL', products: ['TELECEL-DATA-1GB', 'TELECEL-DATA-3GB'] },
  { code: 'AT-DATA', name: 'AT data bundles', category: 'data', customer: 'msisdn', network: 'AT', products: ['AT-DATA-1GB', 'AT-DATA-4GB'] },
  { code: 'ECG-PREPAID', name: 'ECG prepaid electricity', category: 'electricity', customer: { label: 'meter number', pattern: /^\d{11}$/ } },
  { code: 'GWCL', name: 'Ghana Water', category: 'water', customer: { label: 'account number', pattern: /^\d{10}$/ } },
  { code: 'DSTV', name: 'DStv', category: 'tv', customer: { label: 'smartcard number', pattern: /^\d{10}$/ }, products: ['DSTV-PADI', 'DSTV-COMPACT', 'DSTV-PREMIUM'] },
  { code: 'GOTV', name: 'GOtv', category: 'tv', customer: { label: 'IUC number', pattern: /^\d{10}$/ }, products: ['GOTV-SMALLIE', 'GOTV-MAX'] },
];

type VendStatus = 'pending' | 'successful' | 'failed';

interface MockVend {
  reference: string;
  vendId: string;
  biller: string;
  product: string | null;
  customer: string;
  amount: number;
  status: VendStatus;
  token: string | null;
  units: string | null;
  failureCode: string | null;
  createdAt: string;
  completedAt: string | null;
  callbackUrl?: string;
}

function vendData(v: MockVend) {
  return {
    reference: v.reference,
    vend_id: v.vendId,
    biller: v.biller,
    product: v.product,
    customer: v.customer,
    amount: v.amount,
    currency: 'GHS',
    status: v.status,
    token: v.token,
    units: v.units,
    failure_code: v.failureCode,
    created_at: v.createdAt,
    completed_at: v.completedAt,
  };
}

/** A 20-digit prepaid token in groups of four, the same for the same vend on every run. */
function tokenFor(reference: string): string {
  const digits = BigInt(`0x${sha256Hex(`token:${reference}`).slice(0, 24)}`)
    .toString()
    .padStart(20, '0')
    .slice(-20);
  return digits.match(/\d{4}/g)!.join('-');
}

function unitsFor(amount: number): string {
  const tenths = Math.floor((amount * 10) / ECG_PESEWAS_PER_KWH);
  return `${Math.floor(tenths / 10)}.${tenths % 10} kWh`;
}

/** A scenario's reason as the aggregator's failure code: VEND_FAILED unless it names one. */
function failureCode(reason: string | undefined): string {
  return reasonWord(reason).toUpperCase() || 'VEND_FAILED';
}

const VENDS: TransactionWire<MockVend> = {
  pending: (v) => v.status === 'pending',
  settle: (v: MockVend, outcome: Outcome, now: number): MockVend =>
    outcome.status === 'success'
      ? {
          ...v,
          status: 'successful',
          completedAt: iso(now),
          failureCode: null,
          ...(v.biller === 'ECG-PREPAID' ? { token: tokenFor(v.reference), units: unitsFor(v.amount) } : {}),
        }
      : { ...v, status: 'failed', completedAt: iso(now), failureCode: failureCode(outcome.reason) },
  callback: (v) => (v.callbackUrl && v.status !== 'pending' ? jsonCallback(v.callbackUrl, 'POST', { event: `vend.${v.status}`, data: vendData(v) }) : undefined),
};

function fail(res: express.Response, httpStatus: number, code: string, message: string, data?: unknown): void {
  res.status(httpStatus).json({ status: 'error', code, message, ...(data !== undefined ? { data } : {}) });
}

function reject(res: express.Response, behaviour: ProviderBehaviour): void {
  const code = failureCode(behaviour.reason);
  fail(res, behaviour.http_status ?? (code === 'INVALID_CUSTOMER' ? 404 : 400), code, `Vend refused: ${code}`);
}

function serverError(res: express.Response, behaviour: ProviderBehaviour): void {
  fail(res, behaviour.http_status ?? 500, 'SYSTEM_ERROR', 'The biller is not available; try again later');
}

/** The sandbox's plan for a utility customer, by its last digit (see the header). */
function sandboxPlan(biller: Biller, customer: string, defaultSeconds: number): CallbackPlan {
  if (biller.customer !== 'msisdn' && customer.endsWith('3')) return { after_seconds: defaultSeconds, status: 'failed', reason: 'VEND_FAILED' };
  if (biller.customer !== 'msisdn' && customer.endsWith('4')) return { after_seconds: SLOW_VEND_SECONDS, status: 'success' };
  return { after_seconds: defaultSeconds, status: 'success' };
}

/** The bills mock in the provider registry: its keys come from providers.bills. */
export const billsMock = defineMock({
  name: PROVIDER,
  credentials: (options: BillsOptions): BillsMockSettings => ({ apiKey: options.api_key, signingSecret: options.signing_secret }),
  create: (ctx, settings) => createBillsMock(ctx, settings),
  access: (s) => ({
    credentials: [
      { name: 'api key', where: 'Authorization: Bearer header on every call', value: s.apiKey, secret: true },
      { name: 'callback signing secret', where: 'X-Bills-Signature: hex HMAC-SHA256 of the raw callback body', value: s.signingSecret, secret: true },
    ],
    notes: [
      'Vends airtime and data (MTN, TELECEL, AT), ECG prepaid (a token), GWCL water, DSTV and GOtv: GET /billers lists them.',
      'Utility customers ending in 2 are unknown (404 INVALID_CUSTOMER), in 3 fail after acceptance, in 4 vend slowly (90 s); the rest succeed.',
    ],
  }),
});

/** A vend request's plain fields, in the order (and the words) the aggregator checks them; the biller, product and customer follow. */
const vendRequest = (() => {
  const reference = 'reference must be 6 to 64 letters, digits, - or _';
  const amount = 'amount must be a positive whole number of pesewas';
  return z.object({
    reference: z.string({ error: reference }).regex(/^[A-Za-z0-9_-]{6,64}$/, { error: reference }),
    amount: z.number({ error: amount }).refine(isMinorAmount, { error: amount }),
    currency: z.literal('GHS', { error: 'currency must be GHS' }),
    callback_url: z
      .unknown()
      .optional()
      .transform(textField)
      .refine((url) => url === undefined || URL.canParse(url), { error: 'callback_url must be an absolute URL' }),
    biller: z.unknown().optional().transform(textField),
    product: z
      .unknown()
      .optional()
      .transform((v) => textField(v) ?? null),
    customer: z.unknown().optional().transform(textField),
  });
})();

const billersList = () =>
  BILLERS.map((b) => ({
    code: b.code,
    name: b.name,
    category: b.category,
    customer: b.customer === 'msisdn' ? 'phone number (0XXXXXXXXX or 233XXXXXXXXX)' : b.customer.label,
    network: b.network ?? null,
    products: b.products ?? [],
  }));

export const createBillsMock = defineWire<BillsMockSettings>({
  provider: PROVIDER,
  errors: {
    send: (res, e) => fail(res, e.status, e.code, e.message, e.extra?.data),
    outage: { status: 503, code: 'SYSTEM_ERROR', message: 'Service Unavailable' },
    invalid: (problem) => ({
      status: problem.kind === 'unreadable' ? problem.status : 400,
      code: 'INVALID_REQUEST',
      message: problem.kind === 'schema' ? problem.message : problem.kind === 'unreadable' ? 'Invalid request' : 'The body must be a JSON object',
    }),
    notFound: { status: 404, code: 'NOT_FOUND', message: 'Route not found' },
    internal: { status: 500, code: 'SYSTEM_ERROR', message: 'An error occurred while processing your request' },
  },
  refusals: { reject, serverError },
  auth: bearerKey((settings) => settings.apiKey, { status: 401, code: 'UNAUTHORIZED', message: 'Invalid API key' }),
  sign: (settings) => (message) => ({ 'x-bills-signature': hmacSha256Hex(settings.signingSecret, message.body) }),
  books: { vends: { wire: VENDS } },
  operations: [
    custom({ method: 'get', path: '/billers', handle: ({ res }) => void res.json({ status: 'success', message: 'Billers', data: billersList() }) }),
    take({
      method: 'post',
      path: '/vends',
      body: vendRequest,
      successStatus: 202,
      take: ({ body, ctx }) => {
        const { reference, amount, product, callback_url: callbackUrl, customer: given } = body;
        const biller = BILLERS.find((b) => b.code === body.biller);
        if (!biller) return { status: 400, code: 'UNKNOWN_BILLER', message: `biller must be one of ${BILLERS.map((b) => b.code).join(', ')}` };
        if (biller.products ? !product || !biller.products.includes(product) : product !== null) {
          return {
            status: 400,
            code: 'UNKNOWN_PRODUCT',
            message: biller.products ? `product must be one of ${biller.products.join(', ')}` : `${biller.code} takes an open amount, no product`,
          };
        }
        if (!given) return { status: 400, code: 'INVALID_REQUEST', message: 'customer is required' };
        const msisdn = biller.customer === 'msisdn' ? normaliseMsisdn(given) : null;
        if (biller.customer === 'msisdn' ? !msisdn : !biller.customer.pattern.test(given) || given.endsWith('2')) {
          return { status: 404, code: 'INVALID_CUSTOMER', message: `No ${biller.customer === 'msisdn' ? 'subscriber' : biller.customer.label} ${given} at ${biller.code}` };
        }
        const customer = msisdn ?? given;
        return {
          book: 'vends',
          reference,
          query: {
            operation: 'payout',
            channel: 'bills',
            ...(msisdn ? { msisdn, ...(biller.network ? { network: biller.network } : {}) } : { account_number: customer }),
            amount,
          },
          sandbox: () => sandboxPlan(biller, customer, ctx.defaultCallbackSeconds),
          create: (now): MockVend => ({
            reference,
            vendId: `VND${sha256Hex(`vend:${reference}`).slice(0, 16).toUpperCase()}`,
            biller: biller.code,
            product,
            customer,
            amount,
            status: 'pending',
            token: null,
            units: null,
            failureCode: null,
            createdAt: iso(now),
            completedAt: null,
            ...(callbackUrl ? { callbackUrl } : {}),
          }),
          duplicate: (existing: MockVend | undefined) => ({
            status: 409,
            code: 'DUPLICATE_REFERENCE',
            message: `Reference ${reference} was used before`,
            extra: { data: vendData(existing!) },
          }),
        };
      },
      answer: (vend: MockVend) => ({ status: 'success', message: 'Vend accepted', data: vendData(vend) }),
    }),
    read({
      method: 'get',
      path: '/vends/:reference',
      book: 'vends',
      param: 'reference',
      by: 'reference',
      missing: (reference) => ({ status: 404, code: 'NOT_FOUND', message: `No vend ${reference}` }),
      answer: (vend: MockVend) => ({ status: 'success', message: 'Vend', data: vendData(vend) }),
    }),
  ],
});
