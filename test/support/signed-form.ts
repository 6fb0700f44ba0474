import { signRequest } from '../../src/kernel/sign-request.ts';
import type { TestSandbox } from './test-sandbox.ts';

let formCounter = 0;

/**
 * POST a form-encoded body (application/x-www-form-urlencoded), with a fresh Idempotency-Key
 * and, unless told otherwise, the X-Service-Signature over the raw form.
 */
export function postForm(sb: TestSandbox, path: string, form: string | Record<string, string>, opts: { sign?: boolean; idempotencyKey?: string } = {}) {
  const raw = typeof form === 'string' ? form : new URLSearchParams(form).toString();
  const key = opts.idempotencyKey ?? `idem-form-${++formCounter}`;
  let req = sb.http.post(path).set('Authorization', `Bearer ${sb.key}`).set('Content-Type', 'application/x-www-form-urlencoded').set('Idempotency-Key', key);
  if (opts.sign ?? true) {
    const ts = String(Math.floor(sb.ry.wallClock.now() / 1000));
    req = req.set('X-Service-Timestamp', ts).set('X-Service-Signature', signRequest(sb.signingSecret, ts, { method: 'POST', pathAndQuery: path, idempotencyKey: key, rawBody: raw }));
  }
  return req.send(raw);
}
