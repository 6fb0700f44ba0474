import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../src/recorder/redactor.ts';

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
});
