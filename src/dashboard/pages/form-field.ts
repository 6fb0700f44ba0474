import { randomToken } from '../dashboard-sessions.ts';
import { html, type Html } from '../html.ts';
import type { PageContext } from '../page-context.ts';

// What a page reads from its request: a form field, a query parameter, and the Idempotency-Key
// each form carries.

/** A form field of the POST, trimmed; empty when absent or not text. */
export function field(ctx: PageContext, name: string): string {
  const body: unknown = ctx.req.body;
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value.trim() : '';
}

/** A query parameter, at most 200 characters; undefined when absent or empty. */
export function queryText(ctx: PageContext, name: string): string | undefined {
  const value = ctx.req.query[name];
  return typeof value === 'string' && value !== '' ? value.slice(0, 200) : undefined;
}

/** A fresh Idempotency-Key per rendered form: submitting the same form twice is one request. */
export function idemField(): Html {
  return html`<input type="hidden" name="idem" value="${randomToken(18)}">`;
}

/** The form's Idempotency-Key, or a fresh one when the form sent none that looks like one. */
export function idemOf(ctx: PageContext): string {
  const idem = field(ctx, 'idem');
  return /^[A-Za-z0-9_-]{8,64}$/.test(idem) ? `dash-${idem}` : `dash-${randomToken(18)}`;
}
