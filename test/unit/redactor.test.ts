import { describe, expect, it } from 'vitest';
import { jsonLogger, redactingLogger } from '../../src/kernel/logger.ts';
import { REDACTED, Redactor } from '../../src/kernel/redactor.ts';

describe('Redactor', () => {
  const redactor = new Redactor(['api-key-1234567', 'sub-key-abcdef', 'x']);

  it('replaces every known secret wherever it appears', () => {
    expect(redactor.text('/callbacks/api-key-1234567?k=sub-key-abcdef')).toBe(`/callbacks/${REDACTED}?k=${REDACTED}`);
  });

  it('replaces the base64 form too', () => {
    expect(redactor.text(`Basic ${Buffer.from('api-key-1234567').toString('base64')}`)).toBe(`Basic ${REDACTED}`);
  });

  it('leaves values too short to be secrets alone, so numbers survive', () => {
    expect(redactor.text('x marks 0551234987')).toBe('x marks 0551234987');
  });

  it('replaces secrets by their shape too: issued keys and signing secrets, whsec_ secrets, cbt_ tokens, Authorization credentials, URL passwords', () => {
    const none = new Redactor([]);
    expect(none.text('key sk_live_abc123_DEF and sig_test_xyz secret')).toBe(`key ${REDACTED} and ${REDACTED} secret`);
    expect(none.text('/internal/callbacks/hubtel/cbt_0123abcd?x=1')).toBe(`/internal/callbacks/hubtel/${REDACTED}?x=1`);
    expect(none.text('{"secret":"whsec_AbC+/9=="}')).toBe(`{"secret":"${REDACTED}"}`);
    expect(none.text('Authorization: Bearer abc.def-ghi, Basic dXNlcjpwYXNz')).toBe(`Authorization: Bearer ${REDACTED}, Basic ${REDACTED}`);
    expect(none.text('Basic authentication failed; a Bearer token is required')).toBe('Basic authentication failed; a Bearer token is required');
    expect(none.text('fetch https://user:p4ss@upstream.example/x failed')).toBe(`fetch https://${REDACTED}@upstream.example/x failed`);
    expect(none.text('chg_01kdvdna000ax4jac2pg trf_01kdvdna000kqda8gs6q 0551234987')).toBe('chg_01kdvdna000ax4jac2pg trf_01kdvdna000kqda8gs6q 0551234987');
  });
});

describe('redactingLogger', () => {
  it('redacts the message and every string field, however deep, and leaves the rest as it is', () => {
    const lines: string[] = [];
    const log = redactingLogger(
      jsonLogger((l) => lines.push(l)),
      (t) => new Redactor(['configured-secret-1']).text(t),
    );
    log.warn('call to /x/configured-secret-1 failed', { error: 'Bearer sk_test_abcdef', nested: { list: ['configured-secret-1', 7] }, ms: 3 });
    expect(JSON.parse(lines[0]!)).toEqual({ level: 'warn', msg: `call to /x/${REDACTED} failed`, error: `Bearer ${REDACTED}`, nested: { list: [REDACTED, 7] }, ms: 3 });
  });

  it('replaces a secret made of characters that mean something in a pattern, and returns text with no secret as it was', () => {
    const odd = new Redactor(['p4ss.word+(1)|[x]$', 'a?b*c\\d^e']);
    expect(odd.text('u=p4ss.word+(1)|[x]$ v=a?b*c\\d^e')).toBe(`u=${REDACTED} v=${REDACTED}`);
    expect(odd.text('p4ssXword+(1)|[x]$ a?b*c')).toBe('p4ssXword+(1)|[x]$ a?b*c');
  });
});
