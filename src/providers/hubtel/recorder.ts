import { callbackToken, type Config } from '../../config/config.ts';
import { providerBlock } from '../provider-options.ts';
import { hubtelOptions } from './options.ts';
import { fromHubtelClientReference } from './adapter.ts';
import { parseJsonObject, refusalOf, textField, type AnsweredBehaviour, type ClassifiedCall, type RecordedOperation, type ReportedOutcome, type WireProfile } from '../wire-profile.ts';

// Hubtel: five hosts, which the recorder serves from one proxy under the mock's host prefixes
// (rmp, txnstatus, smp, smrsc, rnv); the callback URL is PrimaryCallbackUrl (receive) or
// PrimaryCallbackURL (send) in the JSON body.

const HOST_PREFIXES = { receive: 'rmp', receiveStatus: 'txnstatus', send: 'smp', sendStatus: 'smrsc', verify: 'rnv' } as const;
const CALLBACK_FIELDS = ['PrimaryCallbackUrl', 'PrimaryCallbackURL'] as const;

/** A ClientReference, with our own id it encodes when it is one. */
function referencesOf(clientReference: string | undefined): string[] {
  if (!clientReference) return [];
  try {
    return [clientReference, fromHubtelClientReference(clientReference)];
  } catch {
    return [clientReference];
  }
}

function outcomeOfCode(code: string | undefined, references: string[]): ReportedOutcome | undefined {
  if (!code) return undefined;
  if (code === '0000') return { references, status: 'success' };
  if (code === '0001') return { references, status: 'pending' };
  return { references, status: 'failed', reason: code };
}

export const hubtelWire: WireProfile = {
  provider: 'hubtel',

  pointAt(config: Config, proxyBase: string) {
    const hosts = Object.fromEntries(Object.entries(HOST_PREFIXES).map(([host, prefix]) => [host, `${proxyBase}/${prefix}`]));
    return { ...providerBlock(hubtelOptions, config), hosts };
  },

  rewriteCallback(request, rewrite) {
    const body = parseJsonObject(request.body);
    const field = body && CALLBACK_FIELDS.find((f) => typeof body[f] === 'string');
    if (!body || !field) return request;
    return { ...request, body: JSON.stringify({ ...body, [field]: rewrite(body[field] as string) }) };
  },

  classify(request): ClassifiedCall {
    const url = new URL(request.path, 'http://proxy');
    const body = parseJsonObject(request.body) ?? {};
    const references = referencesOf(textField(body.ClientReference));
    if (request.method === 'POST' && /\/receive\/mobilemoney$/.test(url.pathname)) {
      const msisdn = textField(body.CustomerMsisdn);
      return { kind: 'initiation', operation: 'collect', key: msisdn ? { msisdn } : {}, references };
    }
    if (request.method === 'POST' && /\/send\/mobilemoney$/.test(url.pathname)) {
      const msisdn = textField(body.RecipientMsisdn);
      return { kind: 'initiation', operation: 'payout', key: msisdn ? { msisdn } : {}, references };
    }
    if (request.method === 'GET' && /\/mobilemoney\/verify$/.test(url.pathname)) {
      const msisdn = url.searchParams.get('customerMsisdn') ?? undefined;
      return { kind: 'initiation', operation: 'resolve', key: msisdn ? { msisdn } : {}, references: [] };
    }
    const polled = url.searchParams.get('clientReference');
    if (request.method === 'GET' && /\/status$/.test(url.pathname) && polled) return { kind: 'status', references: referencesOf(polled) };
    return { kind: 'other' };
  },

  answerOf(operation: RecordedOperation, status: number, body: string): AnsweredBehaviour {
    const json = parseJsonObject(body);
    const code = textField(json?.ResponseCode) ?? textField(json?.responseCode);
    if (status >= 200 && status < 300 && !json) return { respond: 'malformed' };
    if (operation === 'resolve') {
      const data = json?.data;
      if (status === 200 && code === '0000' && typeof data === 'object' && data !== null) {
        const record = data as Record<string, unknown>;
        if (record.isRegistered === false) return { respond: 'accept', resolves: false };
        const name = textField(record.name);
        return name ? { respond: 'accept', name } : { respond: 'malformed' };
      }
      return status >= 200 && status < 300 ? { respond: 'reject', ...(code ? { reason: code } : {}) } : refusalOf(status, code);
    }
    if (status >= 200 && status < 300) {
      // A 2xx that is not 0001/0000 is still a refusal on the merits.
      return code === '0001' || code === '0000' ? { respond: 'accept' } : { respond: 'reject', ...(code ? { reason: code } : {}) };
    }
    return refusalOf(status, code);
  },

  polledOutcome(status, body) {
    const json = parseJsonObject(body);
    if (status !== 200 || !json) return undefined;
    const data = (json.data ?? json.Data) as Record<string, unknown> | undefined;
    if (typeof data !== 'object' || data === null) return undefined;
    const references = referencesOf(textField(data.clientReference) ?? textField(data.ClientReference));
    const state = (textField(data.status) ?? textField(data.transactionStatus))?.toLowerCase();
    const code = textField(json.responseCode) ?? textField(json.ResponseCode);
    if (state === 'paid' || state === 'success' || state === 'successful') return { references, status: 'success' };
    if (state === 'failed') return { references, status: 'failed', reason: code && code !== '0000' ? code : 'failed' };
    if (state === 'unpaid' || state === 'pending') return code === '0000' || code === '0001' || !code ? { references, status: 'pending' } : { references, status: 'failed', reason: code };
    return undefined;
  },

  callbackOutcome(body) {
    const json = parseJsonObject(body);
    const data = json?.Data;
    if (!json || typeof data !== 'object' || data === null) return undefined;
    return outcomeOfCode(textField(json.ResponseCode), referencesOf(textField((data as Record<string, unknown>).ClientReference)));
  },

  secrets(config) {
    const p = providerBlock(hubtelOptions, config);
    return [p.client_id, p.client_secret, callbackToken(config, 'hubtel')];
  },
};
