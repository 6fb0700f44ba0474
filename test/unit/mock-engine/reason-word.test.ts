import { describe, expect, it } from 'vitest';
import { reasonWord } from '../../../src/mocks/engine/reason-word.ts';
import { bankResponseCodeFor } from '../../../src/providers/bank-rail/mock.ts';
import { declineCode } from '../../../src/providers/card-processor/mock.ts';
import { directDebitReason } from '../../../src/providers/direct-debit/mock.ts';
import { paystackGatewayResponse } from '../../../src/providers/paystack/mock.ts';

// A scenario's failure reason is free text; every wire looks up the same word in its own table.

describe('reasonWord', () => {
  it('makes one lower-case word of a reason, however it is written', () => {
    expect(reasonWord('NOT_ENOUGH_FUNDS')).toBe('not_enough_funds');
    expect(reasonWord('  Not enough funds. ')).toBe('not_enough_funds');
    expect(reasonWord('declined-by customer!')).toBe('declined_by_customer');
    expect(reasonWord('51')).toBe('51');
  });

  it('is empty for no reason, or one with no letter or digit', () => {
    expect(reasonWord(undefined)).toBe('');
    expect(reasonWord('  ')).toBe('');
    expect(reasonWord('...')).toBe('');
  });
});

describe('each wire reads a reason the same way', () => {
  const spellings = ['not enough funds', 'NOT_ENOUGH_FUNDS', 'Not-Enough-Funds.'];

  it.each(spellings)('%s is insufficient funds at every wire', (reason) => {
    expect(declineCode(reason)).toBe('insufficient_funds');
    expect(directDebitReason(reason)).toBe('INSUFFICIENT_FUNDS');
    expect(paystackGatewayResponse(reason)).toBe(paystackGatewayResponse('not_enough_funds'));
    expect(bankResponseCodeFor(reason)).toBe(bankResponseCodeFor('not_enough_funds'));
  });

  it('the direct-debit rail drops punctuation at the ends of a reason, as the other wires do', () => {
    expect(directDebitReason('declined.')).toBe('MANDATE_DECLINED');
    expect(directDebitReason('?')).toBe('FAILED');
  });
});
