import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { bearerKey, headerKey } from '../../../src/mocks/engine/api-key-auth.ts';
import type { WireError } from '../../../src/mocks/engine/define-wire.ts';

// A static API key on every call: where it goes is the wire's, the check is the engine's.

const refusal: WireError = { status: 401, code: 'KEY', message: 'bad key' };
const settings = { key: 'sk_test_acme' };
const request = (headers: Record<string, string>) => ({ get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;
const check = (auth: ReturnType<typeof bearerKey<typeof settings>>, headers: Record<string, string>) => auth(request(headers), settings, {} as never, undefined);

describe('bearerKey', () => {
  const auth = bearerKey((s: typeof settings) => s.key, refusal);

  it('admits the configured key as a Bearer token', () => {
    expect(check(auth, { authorization: 'Bearer sk_test_acme' })).toBeNull();
  });

  it.each<Record<string, string>>([{}, { authorization: 'Bearer sk_test_other' }, { authorization: 'Bearer ' }, { authorization: 'sk_test_acme' }, { authorization: 'Basic sk_test_acme' }])(
    'refuses %j',
    (headers) => {
      expect(check(auth, headers)).toBe(refusal);
    },
  );
});

describe('headerKey', () => {
  const auth = headerKey('x-api-key', (s: typeof settings) => s.key, refusal);

  it('admits the configured key in its header', () => {
    expect(check(auth, { 'x-api-key': 'sk_test_acme' })).toBeNull();
  });

  it.each<Record<string, string>>([{}, { 'x-api-key': '' }, { 'x-api-key': 'sk_test_acm' }, { authorization: 'Bearer sk_test_acme' }])('refuses %j', (headers) => {
    expect(check(auth, headers)).toBe(refusal);
  });
});
