import { signRequest } from '../../src/kernel/sign-request.ts';
import type { Draft } from './draft.ts';
import { jsonText } from './json-text.ts';
import type { WireRequest } from './send-request.ts';

export function toWire(d: Draft, now: () => number): WireRequest {
  let path = d.path.replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) => {
    const p = d.pathParams[name];
    return p ? (p.raw ? p.value : percentEncode(p.value)) : '';
  });
  const query = d.query.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`);
  if (d.rawQuery !== null) query.push(d.rawQuery);
  if (query.length) path += `?${query.join('&')}`;

  const rawBody = d.body.kind === 'none' ? undefined : d.body.kind === 'raw' ? d.body.text : jsonText(d.body.value);
  const headers: Record<string, string | string[]> = {};
  const authorization = d.authorization ?? (d.identity ? `Bearer ${d.identity.key}` : null);
  if (authorization !== null) headers.authorization = headerSafe(authorization);
  if (d.contentType !== null && rawBody !== undefined) headers['content-type'] = headerSafe(d.contentType);
  let idempotencyKey: string | undefined;
  if (d.idempotencyKey !== null) {
    const values = Array.isArray(d.idempotencyKey) ? d.idempotencyKey.map(headerSafe) : headerSafe(d.idempotencyKey);
    headers['idempotency-key'] = values;
    // What the server reads: node joins a repeated header with ", ".
    idempotencyKey = Array.isArray(values) ? values.join(', ') : values;
  }
  for (const [name, value] of Object.entries(d.headers)) headers[name] = Array.isArray(value) ? value.map(headerSafe) : headerSafe(value);
  if (d.sign !== null && d.sign !== 'missing') {
    const secret = d.sign === 'other-key' ? 'whsec_not_the_signing_secret' : (d.identity?.secret ?? '');
    const seconds = Math.floor(now() / 1000);
    const timestamp =
      d.sign === 'stale'
        ? String(seconds - 301)
        : d.sign === 'future'
          ? String(seconds + 301)
          : d.sign === 'millis'
            ? String(seconds * 1000)
            : d.sign === 'garbage-timestamp'
              ? '1.7e9'
              : d.sign === 'empty'
                ? ''
                : String(seconds);
    // The body as the server reads it back from UTF-8 (a lone surrogate arrives as U+FFFD).
    const received = Buffer.from(rawBody ?? '', 'utf8').toString('utf8');
    const signed = {
      method: d.method,
      pathAndQuery: d.sign === 'other-path' ? `${path}x` : path,
      idempotencyKey,
      rawBody: d.sign === 'other-body' ? `${received} ` : received,
    };
    const signature = d.sign === 'wrong' ? 'ab'.repeat(32) : d.sign === 'empty' ? '' : signRequest(secret, timestamp, signed);
    headers['x-service-timestamp'] = timestamp;
    headers['x-service-signature'] = d.sign === 'uppercase' ? signature.toUpperCase() : signature;
  }
  return { method: d.method, path, headers, ...(rawBody === undefined ? {} : { body: rawBody }) };
}

/** Header values are bytes: non-ASCII text goes as UTF-8, which the server reads back as latin1. */
export function headerSafe(value: string): string {
  const latin1 = Buffer.from(value, 'utf8').toString('latin1');
  // CR, LF, NUL and other controls cannot be sent at all: node refuses them client-side.
  return latin1.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

export function percentEncode(text: string): string {
  // Buffer turns a lone surrogate into U+FFFD, where encodeURIComponent would throw.
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
