import { callbackToken, type Config } from '../../config/config.ts';
import { providerBlock } from '../provider-options.ts';
import { paystackOptions } from './options.ts';
import { PAYSTACK_MOMO_BANK_CODES } from './adapter.ts';
import {
  parseJsonObject,
  refusalOf,
  textField,
  type AnsweredBehaviour,
  type ClassifiedCall,
  type EarlierExchange,
  type RecordedKey,
  type RecordedOperation,
  type ReportedOutcome,
  type WireProfile,
} from '../wire-profile.ts';

// Paystack (reference/upstream-providers.md §3): no callback URL travels with a call; webhooks go
// to the one URL set in Paystack's dashboard (the mock: providers.paystack.webhook_url), which
// the recorder serves at railyard's own path and passes on byte for byte, so
// x-paystack-signature (HMAC-SHA512 of the raw body) still holds. A transfer names only its
// recipient code: whom it pays is read from the POST /transferrecipient that made the code.

export const PAYSTACK_WEBHOOK_PATH = '/internal/callbacks/paystack';

const WALLET_BANK_CODES = new Set(Object.values(PAYSTACK_MOMO_BANK_CODES));
/** The webhooks railyard reads, as the status their data settles to. */
const EVENT_STATUS: Readonly<Record<string, string>> = { 'charge.success': 'success', 'transfer.success': 'success', 'transfer.failed': 'failed', 'transfer.reversed': 'reversed' };
const PENDING = new Set(['pay_offline', 'send_otp', 'pending', 'ongoing', 'processing', 'queued', 'otp', 'received']);

function objectField(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The number of a wallet (bank code MTN, VOD, ATL), else the bank account. */
function keyOf(accountNumber: string | undefined, bankCode: string | undefined): RecordedKey {
  if (!accountNumber) return {};
  if (bankCode && WALLET_BANK_CODES.has(bankCode.toUpperCase())) return { msisdn: accountNumber };
  return { account_number: accountNumber, ...(bankCode ? { bank_code: bankCode } : {}) };
}

/** Whom a transfer to `recipientCode` pays: the details of the recipient call that answered with that code. */
function recipientKey(recipientCode: string | undefined, earlier: readonly EarlierExchange[]): RecordedKey {
  if (!recipientCode) return {};
  const made = earlier.findLast(
    (e) => e.request.method === 'POST' && /\/transferrecipient$/.test(e.request.path.split('?')[0]!) && textField(objectField(parseJsonObject(e.body ?? '')?.data)?.recipient_code) === recipientCode,
  );
  const sent = made && parseJsonObject(made.request.body);
  return sent ? keyOf(textField(sent.account_number), textField(sent.bank_code)) : {};
}

/** A charge's or transfer's `data` as an outcome; `failed` carries Paystack's gateway_response. */
function outcomeOfData(data: Record<string, unknown>): ReportedOutcome | undefined {
  const references = [textField(data.reference), textField(data.transfer_code)].filter((r): r is string => r !== undefined);
  const status = textField(data.status);
  if (status === 'success') return { references, status: 'success' };
  if (status && PENDING.has(status)) return { references, status: 'pending' };
  if (status === 'reversed') return { references, status: 'failed', reason: 'reversed' };
  if (status === 'failed' || status === 'abandoned') return { references, status: 'failed', reason: textField(data.gateway_response) ?? 'Declined' };
  return undefined;
}

export const paystackWire: WireProfile = {
  provider: 'paystack',
  webhookPath: PAYSTACK_WEBHOOK_PATH,

  // webhook_url is the mock's stand-in for the dashboard setting: it matters when the upstream
  // is railyard's own in-process mock; any other upstream is told the URL by its operator.
  pointAt(config: Config, proxyBase: string, callbackOrigin: string) {
    return { ...providerBlock(paystackOptions, config), base_url: proxyBase, webhook_url: `${callbackOrigin}${PAYSTACK_WEBHOOK_PATH}` };
  },

  rewriteCallback(request) {
    return request;
  },

  classify(request, earlier): ClassifiedCall {
    const url = new URL(request.path, 'http://proxy');
    const body = parseJsonObject(request.body) ?? {};
    const references = [textField(body.reference)].filter((r): r is string => r !== undefined);
    if (request.method === 'POST' && /\/charge$/.test(url.pathname)) {
      const msisdn = textField(objectField(body.mobile_money)?.phone);
      return { kind: 'initiation', operation: 'collect', key: msisdn ? { msisdn } : {}, references };
    }
    if (request.method === 'POST' && /\/transfer$/.test(url.pathname)) {
      return { kind: 'initiation', operation: 'payout', key: recipientKey(textField(body.recipient), earlier), references };
    }
    if (request.method === 'GET' && /\/bank\/resolve$/.test(url.pathname)) {
      const key = keyOf(url.searchParams.get('account_number') ?? undefined, url.searchParams.get('bank_code') ?? undefined);
      return { kind: 'initiation', operation: 'resolve', key, references: [] };
    }
    const verify = /\/(?:transaction|transfer)\/verify\/([^/]+)$/.exec(url.pathname);
    if (request.method === 'GET' && verify) return { kind: 'status', references: [decodeURIComponent(verify[1]!)] };
    return { kind: 'other' };
  },

  answerOf(operation: RecordedOperation, status: number, body: string): AnsweredBehaviour {
    const json = parseJsonObject(body);
    const message = textField(json?.message);
    const data = objectField(json?.data);
    const answered = status >= 200 && status < 300;
    if (operation === 'resolve') {
      // Paystack's word for an account that does not exist.
      if (status === 422) return { respond: 'accept', resolves: false };
      if (!answered) return refusalOf(status, message);
      const name = textField(data?.account_name);
      return json?.status === true && name ? { respond: 'accept', name } : { respond: 'malformed' };
    }
    // A reference Paystack has seen: it holds the transaction, and the adapter verifies it.
    if (status === 400 && message && /duplicate/i.test(message)) return { respond: 'accept' };
    if (!answered) return refusalOf(status, message);
    if (json?.status !== true || !data) return { respond: 'malformed' };
    const outcome = outcomeOfData(data);
    if (outcome?.status === 'failed') return { respond: 'reject', reason: outcome.reason ?? 'Declined' };
    return outcome ? { respond: 'accept' } : { respond: 'malformed' };
  },

  polledOutcome(status, body) {
    const json = parseJsonObject(body);
    const data = objectField(json?.data);
    return status === 200 && json?.status === true && data ? outcomeOfData(data) : undefined;
  },

  callbackOutcome(body) {
    const json = parseJsonObject(body);
    const data = objectField(json?.data);
    // The event names the outcome, as the adapter reads it; data.status only agrees.
    const status = typeof json?.event === 'string' ? EVENT_STATUS[json.event] : undefined;
    return data && status ? outcomeOfData({ ...data, status }) : undefined;
  },

  secrets(config) {
    return [providerBlock(paystackOptions, config).secret_key, callbackToken(config, 'paystack')];
  },
};
