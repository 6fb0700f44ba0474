import type { Config } from '../config/config.ts';
import { parseJsonObject } from '../kernel/json-object.ts';
import type { Behaviour } from '../scenarios/scenario-schema.ts';

// What the recorder must know of one upstream's wire format: where railyard's adapter is pointed,
// which field carries the callback URL (or, for an upstream with one webhook URL set in its
// dashboard, where that URL points), and how to read calls, answers and callbacks back into the
// scenario vocabulary (operation, number or account, outcome).

export type RecordedOperation = 'collect' | 'payout' | 'resolve';

/** A request as it crossed the proxy (body as raw text, header names lower case). */
export interface WireRequest {
  method: string;
  /** Path and query, exactly as the adapter sent it. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Whom a call concerns: the scenario's match fields. */
export interface RecordedKey {
  msisdn?: string;
  account_number?: string;
  bank_code?: string;
}

/** A call the proxy saw earlier in the recording, with its answer when it got one. */
export interface EarlierExchange {
  request: WireRequest;
  status?: number;
  body?: string;
}

/** One call read back: an initiation, a status poll, or anything else (tokens). */
export type ClassifiedCall = { kind: 'initiation'; operation: RecordedOperation; key: RecordedKey; references: string[] } | { kind: 'status'; references: string[] } | { kind: 'other' };

/** A transaction's outcome as a callback or a status poll told it. */
export interface ReportedOutcome {
  references: string[];
  status: 'success' | 'failed' | 'pending';
  reason?: string;
}

/**
 * An upstream sandbox's test identities mapped back to the service's own (MTN's test numbers to
 * the Ghana numbers the merchant used), so a recording names what the merchant sent.
 */
export interface RecordedIdentities {
  /** The merchant's key for the key a call named upstream; unchanged when nothing maps it. */
  merchantKey(key: RecordedKey): RecordedKey;
  /** What the recording log adds to a call: both identities, e.g. "0551234987 as 46733123400, 2.00 EUR". */
  describe(request: WireRequest): string | undefined;
}

/** The scenario behaviour an answered initiation shows (respond, reason, name, ...). */
export type AnsweredBehaviour = Omit<Behaviour, 'latency_ms' | 'callback' | 'extra_callbacks'>;

export interface WireProfile {
  readonly provider: string;
  /**
   * The provider's config with railyard's adapter pointed at the proxy (proxyBase has the
   * upstream's path); callbackOrigin is where the upstream can reach the proxy.
   */
  pointAt(config: Config, proxyBase: string, callbackOrigin: string): Record<string, unknown>;
  /**
   * For an upstream whose webhooks go to one URL set once (Paystack's dashboard), not one sent
   * with each call: the path railyard receives them on, which the proxy serves too.
   */
  readonly webhookPath?: string;
  /** The request with its callback URL replaced by rewrite(original); re-signed where the wire signs bodies. */
  rewriteCallback(request: WireRequest, rewrite: (url: string) => string, config: Config): WireRequest;
  /** What a call is; `earlier` are the calls before it, for a wire whose calls build on earlier answers. */
  classify(request: WireRequest, earlier: readonly EarlierExchange[]): ClassifiedCall;
  /** What an answered initiation did, in scenario terms. */
  answerOf(operation: RecordedOperation, status: number, body: string): AnsweredBehaviour;
  /** A status poll's answer; undefined when it says nothing readable. */
  polledOutcome(status: number, body: string): ReportedOutcome | undefined;
  /** A callback the upstream sent; undefined when it cannot be read. */
  callbackOutcome(body: string): ReportedOutcome | undefined;
  /** The test identities this configuration maps; undefined: calls name the merchant's own. */
  identities?(config: Config): RecordedIdentities | undefined;
  /** The credential values this provider's config holds: never written to a recording. */
  secrets(config: Config): string[];
}

/**
 * polledOutcome and callbackOutcome of a wire whose status answers and callbacks carry the same
 * JSON body: a 200 status answer, or any callback, read by `outcomeOf`.
 */
export function jsonBodyOutcomes(outcomeOf: (body: Record<string, unknown>) => ReportedOutcome | undefined): Pick<WireProfile, 'polledOutcome' | 'callbackOutcome'> {
  return {
    polledOutcome(status, body) {
      const json = parseJsonObject(body);
      return status === 200 && json ? outcomeOf(json) : undefined;
    },
    callbackOutcome(body) {
      const json = parseJsonObject(body);
      return json ? outcomeOf(json) : undefined;
    },
  };
}

export { parseJsonObject };

/** A field's value when it is a string with something in it. */
export function textField(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The generic reading of a non-2xx answer: 5xx is a server error, 4xx a refusal with the upstream's code. */
export function refusalOf(status: number, code: string | undefined): AnsweredBehaviour {
  if (status >= 500) return { respond: 'server_error', http_status: status };
  return { respond: 'reject', http_status: status, ...(code ? { reason: code } : {}) };
}

export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
