import { MatchersV3 as M } from '@pact-foundation/pact';

// What a contract promises about a body: the values a scenario asserts, and the enum-like fields a
// consumer branches on (status, type, currency...), exactly; everything else by its type, with
// patterns for ids and timestamps, and each-like for lists. Secrets never reach a pact file.

/** Keys whose string values a consumer branches on: kept exact. */
const EXACT_KEYS = new Set(['status', 'type', 'currency', 'channel', 'object', 'network', 'side', 'asset', 'environment']);
/** Keys holding secrets: the pact gets a placeholder, matched by type. */
const SECRET_KEY = /secret|token|password|api_?key/i;
/** Keys of numbers that are not money amounts: matched as any number. */
const PRICE_KEY = /rate|price/i;

const ID = /^([a-z]{2,4})_[0-9a-hjkmnp-tv-z]{20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIMESTAMP_S = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

export const REDACTED = 'redacted-in-contracts';

export interface MatcherOptions {
  /** A partial copy of the body whose leaf values must be equal (a script's `expect.body`). */
  exact?: unknown;
  /**
   * Asynchronous messages: pact_ffi 0.5.8 fails every regex matcher on a message body (it reports
   * "Expected 'chg_x' to match '^chg_'"), so ids and uuids are matched by type there.
   */
  message?: boolean;
  /** A provider's own wire format: its amounts are in its units (Hubtel's are cedis), any number. */
  providerUnits?: boolean;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isLeaf(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

/** A string by what it looks like: an id (its prefix), a uuid, a timestamp, or any string. */
function stringMatcher(value: string, message: boolean): unknown {
  if (TIMESTAMP_MS.test(value)) return M.datetime("yyyy-MM-dd'T'HH:mm:ss.SSSX", value);
  if (TIMESTAMP_S.test(value)) return M.datetime("yyyy-MM-dd'T'HH:mm:ssX", value);
  if (message) return M.string(value);
  const id = ID.exec(value);
  if (id) return M.regex(`^${id[1]}_[0-9a-z]+$`, value);
  if (UUID.test(value)) return M.uuid(value);
  return M.string(value);
}

function leafMatcher(key: string | null, value: unknown, exact: boolean, options: MatcherOptions): unknown {
  if (typeof value === 'string' && key !== null && SECRET_KEY.test(key)) return M.string(REDACTED);
  if (exact || value === null) return value;
  if (typeof value === 'string') return EXACT_KEYS.has(key ?? '') ? value : stringMatcher(value, options.message === true);
  if (typeof value === 'number') {
    // Railyard's amounts are integer minor units, a promise; a rate or price that happened to be
    // whole when recorded is still a number, and so is every amount in a provider's own units.
    return Number.isInteger(value) && !options.providerUnits && !PRICE_KEY.test(key ?? '') ? M.integer(value) : M.number(value);
  }
  if (typeof value === 'boolean') return M.boolean(value);
  return value;
}

/** A list's field holding ids of several kinds (a report's lines name charges and payouts): any id. */
class AnyId {
  constructor(readonly example: string) {}
}

function mixedIds(values: unknown[]): boolean {
  const prefixes = new Set(values.map((v) => (typeof v === 'string' ? ID.exec(v)?.[1] : undefined)));
  return prefixes.size > 1 && !prefixes.has(undefined);
}

function kind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/**
 * One item standing for a list's items: the fields every item has with one type. A field some
 * items lack, or that is null in some and a string in others, is optional: left out.
 */
export function itemTemplate(items: readonly unknown[]): unknown {
  if (!items.every(isPlainObject)) return items[0];
  const objects = items as Record<string, unknown>[];
  const out: Record<string, unknown> = {};
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();
  for (const key of keys) {
    const values = objects.map((o) => o[key]);
    if (values.some((v) => v === undefined)) continue;
    const kinds = new Set(values.map(kind));
    if (kinds.size !== 1) continue;
    if (kinds.has('object')) out[key] = itemTemplate(values);
    else if (mixedIds(values)) out[key] = new AnyId(values[0] as string);
    else if (kinds.has('array')) out[key] = (values as unknown[][]).flat().length ? [itemTemplate((values as unknown[][]).flat())] : [];
    else out[key] = values[0];
  }
  return out;
}

function shape(key: string | null, value: unknown, exact: unknown, options: MatcherOptions): unknown {
  if (value instanceof AnyId) return M.regex('^[a-z]+_[0-9a-z]+$', value.example);
  if (isLeaf(value)) return leafMatcher(key, value, exact !== undefined && isLeaf(exact) && exact === value, options);
  if (Array.isArray(value)) {
    // A list promises its items' shape, not their number: at least one when it had one.
    if (value.length === 0) return M.like([]);
    return M.eachLike(shape(null, itemTemplate(value), undefined, options));
  }
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) {
    out[k] = shape(k, obj[k], isPlainObject(exact) ? exact[k] : undefined, options);
  }
  return out;
}

/** The pact-js matcher tree for a JSON body. */
export function bodyMatchers(body: unknown, options: MatcherOptions = {}): unknown {
  return shape(null, body, options.exact, options);
}

/** The same body with secrets replaced by the placeholder: for examples that carry no matcher. */
export function redactSecrets(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(redactSecrets);
  if (!isPlainObject(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' && SECRET_KEY.test(k) ? REDACTED : redactSecrets(v)]));
}

const REFERENCE = /\$\{([^}]*)\}/g;

/** The provider-state variable for a script reference: `charge.body.data.id` → `charge_body_data_id`. */
export function stateVariable(expression: string): string {
  return expression.trim().replace(/[^A-Za-z0-9_]/g, '_');
}

/** A script template's references, in order. */
export function references(template: unknown): string[] {
  if (typeof template === 'string') return [...template.matchAll(REFERENCE)].map((m) => m[1]!.trim());
  if (Array.isArray(template)) return template.flatMap(references);
  if (isPlainObject(template)) return Object.values(template).flatMap(references);
  return [];
}

/** A template string as a provider-state expression: `/charges/${charge.body.data.id}` → `/charges/${charge_body_data_id}`. */
export function stateExpression(template: string): string {
  return template.replace(REFERENCE, (_m, expression: string) => `\${${stateVariable(expression)}}`);
}

/**
 * A request body for the contract: values the script wrote as references become provider-state
 * values (the verifier fills them in from the state), the rest are examples.
 */
export function requestBody(sent: unknown, template: unknown): unknown {
  if (typeof template === 'string' && references(template).length > 0) {
    return M.fromProviderState(stateExpression(template), sent as never);
  }
  if (Array.isArray(sent)) return sent.map((v, i) => requestBody(v, Array.isArray(template) ? template[i] : undefined));
  if (isPlainObject(sent)) {
    return Object.fromEntries(Object.entries(sent).map(([k, v]) => [k, requestBody(v, isPlainObject(template) ? template[k] : undefined)]));
  }
  return sent;
}
