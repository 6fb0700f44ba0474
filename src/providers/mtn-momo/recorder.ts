import { callbackToken, type Config } from '../../config/config.ts';
import { providerBlock } from '../provider-options.ts';
import { mtnMomoOptions } from './options.ts';
import { sandboxIdentitiesFor } from './sandbox-identities.ts';
import {
  jsonBodyOutcomes,
  isJsonText,
  parseJsonObject,
  refusalOf,
  textField,
  type AnsweredBehaviour,
  type ClassifiedCall,
  type RecordedOperation,
  type ReportedOutcome,
  type WireProfile,
  type WireRequest,
} from '../wire-profile.ts';

// MTN MoMo Open API (reference/upstream-providers.md §1): the callback URL travels in the
// X-Callback-Url header; callbacks and status polls carry externalId, our reference.

// MTN answers these with 500 although they are refusals on the merits.
const REFUSALS_SENT_AS_5XX = new Set(['NOT_ALLOWED', 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'INVALID_CALLBACK_URL_HOST', 'INVALID_CURRENCY']);

function pathOf(request: WireRequest): string {
  return request.path.split('?')[0]!;
}

function outcomeOf(body: Record<string, unknown>): ReportedOutcome | undefined {
  const references = [textField(body.externalId), textField(body.referenceId)].filter((r): r is string => r !== undefined);
  const status = textField(body.status)?.toUpperCase();
  if (status === 'SUCCESSFUL') return { references, status: 'success' };
  if (status === 'PENDING' || status === 'CREATED') return { references, status: 'pending' };
  if (status !== 'FAILED') return undefined;
  const reason = body.reason;
  const code = textField(reason) ?? (typeof reason === 'object' && reason !== null ? textField((reason as { code?: unknown }).code) : undefined);
  return { references, status: 'failed', reason: code ?? 'FAILED' };
}

export const mtnMomoWire: WireProfile = {
  provider: 'mtn-momo',

  pointAt(config: Config, proxyBase: string) {
    return { ...providerBlock(mtnMomoOptions, config), base_url: proxyBase };
  },

  rewriteCallback(request, rewrite) {
    const original = request.headers['x-callback-url'];
    if (!original) return request;
    return { ...request, headers: { ...request.headers, 'x-callback-url': rewrite(original) } };
  },

  classify(request): ClassifiedCall {
    const path = pathOf(request);
    const body = parseJsonObject(request.body) ?? {};
    const reference = request.headers['x-reference-id'];
    const references = [textField(body.externalId), reference].filter((r): r is string => r !== undefined);
    const party = (field: 'payer' | 'payee') => {
      const value = body[field];
      return typeof value === 'object' && value !== null ? textField((value as { partyId?: unknown }).partyId) : undefined;
    };
    if (request.method === 'POST' && /\/collection\/v1_0\/requesttopay$/.test(path)) {
      const msisdn = party('payer');
      return { kind: 'initiation', operation: 'collect', key: msisdn ? { msisdn } : {}, references };
    }
    if (request.method === 'POST' && /\/disbursement\/v1_0\/transfer$/.test(path)) {
      const msisdn = party('payee');
      return { kind: 'initiation', operation: 'payout', key: msisdn ? { msisdn } : {}, references };
    }
    const holder = /\/collection\/v1_0\/accountholder\/msisdn\/([^/]+)\/basicuserinfo$/.exec(path);
    if (request.method === 'GET' && holder) {
      return { kind: 'initiation', operation: 'resolve', key: { msisdn: decodeURIComponent(holder[1]!) }, references: [] };
    }
    const poll = /\/(?:collection\/v1_0\/requesttopay|disbursement\/v1_0\/transfer)\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && poll) return { kind: 'status', references: [decodeURIComponent(poll[1]!)] };
    return { kind: 'other' };
  },

  answerOf(operation: RecordedOperation, status: number, body: string): AnsweredBehaviour {
    const json = parseJsonObject(body);
    const code = textField(json?.code) ?? textField(json?.error);
    if (operation === 'resolve') {
      if (status === 404) return { respond: 'accept', resolves: false };
      if (status === 200 && !json) return { respond: 'malformed' };
      if (status === 200) {
        const parts = [textField(json!.given_name), textField(json!.family_name)].filter((p): p is string => p !== undefined);
        const name = parts.length ? parts.join(' ') : textField(json!.name);
        return name ? { respond: 'accept', name } : { respond: 'malformed' };
      }
      return refusalOf(status, code);
    }
    // A repeated X-Reference-Id is MTN saying it already holds the transaction.
    if (status === 409 && code === 'RESOURCE_ALREADY_EXIST') return { respond: 'accept' };
    if (status >= 200 && status < 300) return body.trim() === '' || isJsonText(body) ? { respond: 'accept' } : { respond: 'malformed' };
    if (status >= 500 && code && REFUSALS_SENT_AS_5XX.has(code)) return { respond: 'reject', http_status: status, reason: code };
    return refusalOf(status, code);
  },

  ...jsonBodyOutcomes(outcomeOf),

  identities(config) {
    const identities = sandboxIdentitiesFor(providerBlock(mtnMomoOptions, config));
    if (!identities) return undefined;
    return {
      merchantKey(key) {
        const merchant = key.msisdn === undefined ? undefined : identities.merchantMsisdn(key.msisdn);
        return merchant ? { ...key, msisdn: merchant } : key;
      },
      describe(request) {
        const call = mtnMomoWire.classify(request, []);
        const upstream = call.kind === 'initiation' ? call.key.msisdn : undefined;
        const mapped = upstream === undefined ? undefined : identities.describe(upstream);
        if (!mapped) return undefined;
        const body = parseJsonObject(request.body);
        const amount = textField(body?.amount);
        const currency = textField(body?.currency);
        return amount && currency ? `${mapped}, ${amount} ${currency}` : mapped;
      },
    };
  },

  secrets(config) {
    const p = providerBlock(mtnMomoOptions, config);
    return [p.api_user, p.api_key, p.collection_subscription_key, p.disbursement_subscription_key, callbackToken(config, 'mtn-momo')];
  },
};
