import { HTTP_STATUS } from '../../src/http/error-mapper.ts';
import type { Draft } from './draft.ts';
import { parseJson, type Json } from './json-text.ts';
import type { ResponseValidator } from './response-validator.ts';
import type { WireResponse } from './send-request.ts';

export type Check = 'server_error' | 'not_envelope' | 'status_mismatch' | 'error_details' | 'state_changed' | 'undocumented_status' | 'response_schema' | 'no_response';

const ERROR_CODES = new Set(Object.keys(HTTP_STATUS));

export function checkResponse(draft: Draft, res: WireResponse, validate: ResponseValidator, before: string | undefined, after: string | undefined): { check: Check; detail: string }[] {
  const problems: { check: Check; detail: string }[] = [];
  const body = parseJson(res.text) as Json | undefined;
  const code: unknown = body?.error?.code;
  if (res.status >= 500 && !(res.status === 502 && code === 'provider_unavailable')) {
    problems.push({ check: 'server_error', detail: `${res.status} ${typeof code === 'string' ? code : 'without an error code'}` });
  }
  if (res.status >= 400) {
    const shape = envelopeProblem(res, body);
    if (shape) problems.push({ check: 'not_envelope', detail: shape });
    else if (HTTP_STATUS[code as keyof typeof HTTP_STATUS] !== res.status) {
      problems.push({ check: 'status_mismatch', detail: `${code} is ${HTTP_STATUS[code as keyof typeof HTTP_STATUS]} in the decisions table, answered ${res.status}` });
    } else {
      const details = detailsProblem(draft, body!);
      if (details) problems.push({ check: 'error_details', detail: details });
    }
  }
  // A buy parked for compliance review is refused (403 compliance_block) yet creates its
  // trade, under_review, by design (spec): the one refusal that changes state.
  const stateChanged = before !== after;
  const parked = code === 'compliance_block' && body?.error?.details?.order_reference !== undefined;
  if (stateChanged && !parked) problems.push({ check: 'state_changed', detail: `answered ${res.status} ${String(code)} but the state changed: ${changedLines(before!, after!)}` });
  if (draft.op && draft.documented) {
    if (!draft.op.statuses.has(res.status)) {
      problems.push({ check: 'undocumented_status', detail: `${res.status}${typeof code === 'string' ? ` ${code}` : ''} is not among the documented ${[...draft.op.statuses].join(', ')}` });
    } else if (res.status < 300 && draft.op.textStatuses.has(res.status)) {
      const media = draft.op.textStatuses.get(res.status)!;
      const got = String(res.headers['content-type'] ?? '(none)');
      if (got.split(';')[0]!.trim() !== media) problems.push({ check: 'response_schema', detail: `content-type ${got}, not the documented ${media}` });
    } else if (res.status < 300) {
      const invalid = body === undefined ? 'the body is not JSON' : validate(draft.op, res.status, body);
      if (invalid) problems.push({ check: 'response_schema', detail: invalid });
    }
  }
  return problems;
}

/**
 * What the decisions table promises in details: validation_error names each offending field;
 * a 404 from an operation with a path id names that id (Stripe's `No such charge: 'chg_x'`).
 */
function detailsProblem(draft: Draft, body: Json): string | null {
  const { code, details } = body.error;
  if (code === 'validation_error') {
    const fields = details?.fields;
    const named = Array.isArray(fields) && fields.length > 0 && fields.every((f) => typeof f?.field === 'string' && typeof f?.message === 'string');
    if (!named) return 'validation_error without details.fields naming the offending fields';
  }
  if (code === 'not_found' && draft.op && draft.documented && draft.op.pathParams.length) {
    const ids = Object.values(draft.pathParams).map((p) => (p.raw ? p.value : Buffer.from(p.value, 'utf8').toString('utf8')));
    if (!ids.includes(details?.id)) return `not_found from ${draft.op.operationId} without details.id naming the id in the path`;
    if (!String(body.message).startsWith('No such ')) return `not_found from ${draft.op.operationId} worded ${JSON.stringify(body.message.slice(0, 80))}, not "No such <object>: '<id>'"`;
  }
  return null;
}

/** Digests are lines (storeDigest: one per table); a change names the lines that differ. */
function changedLines(before: string, after: string): string {
  const old = new Set(before.split('\n'));
  const changed = after.split('\n').filter((line) => !old.has(line));
  return changed.length ? changed.join('; ') : 'the digest differs';
}

function envelopeProblem(res: WireResponse, body: Json | undefined): string | null {
  if (!/^application\/json\b/.test(String(res.headers['content-type'] ?? ''))) return `content-type ${res.headers['content-type'] ?? '(none)'}, not application/json`;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object';
  const extra = Object.keys(body).filter((k) => !['status', 'message', 'error'].includes(k));
  if (extra.length) return `unexpected top-level fields ${extra.join(', ')}`;
  if (body.status !== false) return 'status is not false';
  if (typeof body.message !== 'string' || body.message.length === 0) return 'message is not a non-empty string';
  const error = body.error;
  if (!error || typeof error !== 'object' || Array.isArray(error)) return 'error is not an object';
  if (Object.keys(error).some((k) => k !== 'code' && k !== 'details')) return `error has fields besides code and details: ${Object.keys(error).join(', ')}`;
  if (typeof error.code !== 'string' || !ERROR_CODES.has(error.code)) return `error.code ${JSON.stringify(error.code)} is not an ErrorCode`;
  if ('details' in error && (error.details === null || typeof error.details !== 'object' || Array.isArray(error.details))) return 'error.details is not an object';
  return null;
}
