import { merchantHeaders } from '../../src/kernel/api-client.ts';
import type { TestSandbox } from './test-sandbox.ts';

let formCounter = 0;

/**
 * POST a form-encoded body (application/x-www-form-urlencoded), with a fresh Idempotency-Key
 * and, unless told otherwise, the X-Service-Signature over the raw form.
 */
export function postForm(sb: TestSandbox, path: string, form: string | Record<string, string>, opts: { sign?: boolean; idempotencyKey?: string } = {}) {
  const raw = typeof form === 'string' ? form : new URLSearchParams(form).toString();
  const key = opts.idempotencyKey ?? `idem-form-${++formCounter}`;
  const headers = merchantHeaders({ method: 'POST', path, key: sb.key, idempotencyKey: key, sign: opts.sign ?? true, signingSecret: sb.signingSecret }, raw, sb.ry.wallClock.now());
  return sb.http.post(path).set('Content-Type', 'application/x-www-form-urlencoded').set(headers).send(raw);
}
