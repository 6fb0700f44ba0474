import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../src/recorder/redactor.ts';

describe('Redactor', () => {
  const redactor = new Redactor(['api-key-1234567', 'sub-key-abcdef', 'x']);

  it('blanks the headers that carry credentials, whatever their value', () => {
    expect(
      redactor.headers({ Authorization: 'Bearer anything', 'Ocp-Apim-Subscription-Key': 'k', 'x-signature': 'abc', 'content-type': 'application/json' }),
    ).toEqual({ Authorization: REDACTED, 'Ocp-Apim-Subscription-Key': REDACTED, 'x-signature': REDACTED, 'content-type': 'application/json' });
  });

  it('replaces every known secret wherever it appears, and its base64 form', () => {
    const basic = Buffer.from('api-key-1234567').toString('base64');
    expect(redactor.text(`/callbacks/api-key-1234567?k=sub-key-abcdef ${basic}`)).toBe(`/callbacks/${REDACTED}?k=${REDACTED} ${REDACTED}`);
  });

  it('blanks token and secret fields of JSON bodies', () => {
    expect(redactor.text('{"access_token":"eyJ0","token_type":"Bearer","client_secret":"s3"}')).toBe(`{"access_token":"${REDACTED}","token_type":"Bearer","client_secret":"${REDACTED}"}`);
  });

  it('leaves values too short to be secrets alone, so numbers survive', () => {
    expect(redactor.text('x marks 0551234987')).toBe('x marks 0551234987');
  });
});
