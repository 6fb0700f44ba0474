import { callbackToken, type Config } from '../../config/config.ts';
import { providerBlock } from '../provider-options.ts';
import { bankRailOptions } from './options.ts';
import { hmacSha256Hex } from '../../kernel/secrets.ts';
import {
  jsonBodyOutcomes,
  parseJsonObject,
  refusalOf,
  textField,
  type AnsweredBehaviour,
  type ClassifiedCall,
  type RecordedOperation,
  type ReportedOutcome,
  type WireProfile,
} from '../wire-profile.ts';

// The GhIPSS-style bank rail: the callback URL is the body's callbackUrl, and the body is signed
// (x-signature over timestamp, method, path and raw body), so a rewritten body is signed again.

const ACCEPTED = new Set(['00', '09']);

function outcomeOf(body: Record<string, unknown>): ReportedOutcome | undefined {
  const references = [textField(body.sessionId), textField(body.transactionId)].filter((r): r is string => r !== undefined);
  const code = textField(body.responseCode);
  switch (body.status) {
    case 'SUCCESS':
      return { references, status: 'success' };
    case 'PENDING':
      return { references, status: 'pending' };
    case 'FAILED':
      return { references, status: 'failed', reason: code ?? '05' };
    default:
      return undefined;
  }
}

export const bankRailWire: WireProfile = {
  provider: 'bank-rail',

  pointAt(config: Config, proxyBase: string) {
    return { ...providerBlock(bankRailOptions, config), base_url: proxyBase };
  },

  rewriteCallback(request, rewrite, config) {
    const body = parseJsonObject(request.body);
    if (!body || typeof body.callbackUrl !== 'string') return request;
    const raw = JSON.stringify({ ...body, callbackUrl: rewrite(body.callbackUrl) });
    const timestamp = request.headers['x-timestamp'] ?? '';
    const signature = hmacSha256Hex(providerBlock(bankRailOptions, config).client_secret, `${timestamp}.${request.method.toUpperCase()}.${request.path}.${raw}`);
    return { ...request, body: raw, headers: { ...request.headers, 'x-signature': signature } };
  },

  classify(request): ClassifiedCall {
    const path = request.path.split('?')[0]!;
    const body = parseJsonObject(request.body) ?? {};
    const key = {
      ...(textField(body.accountNumber) ? { account_number: textField(body.accountNumber) } : {}),
      ...(textField(body.destinationBankCode) ? { bank_code: textField(body.destinationBankCode) } : {}),
    };
    if (request.method === 'POST' && /\/gip\/v1\/credit-transfers$/.test(path)) {
      return { kind: 'initiation', operation: 'payout', key, references: [textField(body.sessionId)].filter((r): r is string => r !== undefined) };
    }
    if (request.method === 'POST' && /\/gip\/v1\/name-enquiry$/.test(path)) return { kind: 'initiation', operation: 'resolve', key, references: [] };
    const poll = /\/gip\/v1\/credit-transfers\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && poll) return { kind: 'status', references: [decodeURIComponent(poll[1]!)] };
    return { kind: 'other' };
  },

  answerOf(operation: RecordedOperation, status: number, body: string): AnsweredBehaviour {
    const json = parseJsonObject(body);
    const code = textField(json?.responseCode);
    if (status >= 200 && status < 300 && !json) return { respond: 'malformed' };
    if (status < 200 || status >= 300) return refusalOf(status, code);
    if (operation === 'resolve') {
      if (code === '25') return { respond: 'accept', resolves: false };
      const name = textField(json!.accountName);
      if (code === '00' && name) return { respond: 'accept', name };
    } else if (code && ACCEPTED.has(code)) {
      return { respond: 'accept' };
    }
    return { respond: 'reject', ...(code ? { reason: code } : {}) };
  },

  ...jsonBodyOutcomes(outcomeOf),

  secrets(config) {
    const p = providerBlock(bankRailOptions, config);
    return [p.client_id, p.client_secret, callbackToken(config, 'bank-rail')];
  },
};
