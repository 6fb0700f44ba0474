import { describe, expect, it } from 'vitest';
import { buildRecordedScenario } from '../../src/recorder/recorded-scenario.ts';
import type { RecordedCallback, RecordedExchange } from '../../src/recorder/recording-proxy.ts';
import { Redactor } from '../../src/kernel/redactor.ts';
import { wireProfileFor } from '../../src/recorder/wire-profiles.ts';

// From exchanges and callbacks (times in ms on the recorder's clock) to scenario rules, on MTN's
// and the bank rail's wires.

const mtn = wireProfileFor('mtn-momo');
const bank = wireProfileFor('bank-rail');

function requestToPay(msisdn: string, externalId: string, at: number, answer: Partial<RecordedExchange> = {}): RecordedExchange {
  return {
    request: {
      method: 'POST',
      path: '/collection/v1_0/requesttopay',
      headers: { 'x-reference-id': `ref-${externalId}`, authorization: 'Bearer tok-abcdef' },
      body: JSON.stringify({ amount: '10.00', currency: 'GHS', externalId, payer: { partyIdType: 'MSISDN', partyId: msisdn } }),
    },
    startedAt: at,
    endedAt: at + 12,
    ending: 'answered',
    status: 202,
    body: '',
    ...answer,
  };
}

function mtnCallback(externalId: string, at: number, status: 'SUCCESSFUL' | 'FAILED', reason?: string): RecordedCallback {
  return {
    method: 'PUT',
    path: '/internal/callbacks/mtn-momo/tok',
    headers: {},
    body: JSON.stringify({ externalId, referenceId: `ref-${externalId}`, status, ...(reason ? { reason } : {}) }),
    receivedAt: at,
  };
}

function build(provider: 'mtn-momo' | 'bank-rail', exchanges: RecordedExchange[], callbacks: RecordedCallback[] = [], secrets: string[] = []) {
  return buildRecordedScenario({
    provider,
    profile: provider === 'mtn-momo' ? mtn : bank,
    exchanges,
    callbacks,
    redactor: new Redactor(secrets),
    upstream: 'https://user:pass@sandbox.example.com/base?key=1',
    recordedAt: '2026-11-24T08:00:00.000Z',
  });
}

describe('a recording as scenario rules', () => {
  it('keys a rule on the number, in its local form, with the callback delay from when the call reached the upstream', () => {
    const { scenario } = build('mtn-momo', [requestToPay('233551234987', 'chg_1', 1_000)], [mtnCallback('chg_1', 6_040, 'SUCCESSFUL')]);
    expect(scenario.rules).toEqual([
      expect.objectContaining({
        name: 'recorded mtn-momo: 0551234987',
        match: { msisdn: { equals: '0551234987' } },
        collect: { 'mtn-momo': [{ respond: 'accept', latency_ms: 12, callback: { after_seconds: 5, status: 'success', drop: false } }] },
      }),
    ]);
  });

  it('writes a failed callback with its upstream reason', () => {
    const { scenario } = build('mtn-momo', [requestToPay('233551234988', 'chg_2', 0)], [mtnCallback('chg_2', 2_500, 'FAILED', 'NOT_ENOUGH_FUNDS')]);
    expect(scenario.rules[0]!.collect!['mtn-momo']![0]!.callback).toMatchObject({ after_seconds: 2.5, status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
  });

  it('reads an unanswered call as a timeout, and a late callback for it as the upstream taking it after all', () => {
    const { scenario } = build(
      'mtn-momo',
      [requestToPay('233551234990', 'chg_3', 0, { ending: 'abandoned', endedAt: 1_000, status: undefined, body: undefined })],
      [mtnCallback('chg_3', 10_000, 'SUCCESSFUL')],
    );
    expect(scenario.rules[0]!.collect!['mtn-momo']).toEqual([{ respond: 'timeout', callback: { after_seconds: 10, status: 'success', drop: false } }]);
  });

  it('tells refusals, server errors, unreadable answers and cut connections apart', () => {
    const { scenario } = build('mtn-momo', [
      requestToPay('233241000001', 'chg_a', 0, { status: 400, body: JSON.stringify({ code: 'PAYER_NOT_FOUND', message: 'x' }) }),
      requestToPay('233241000002', 'chg_b', 0, { status: 503, body: '' }),
      requestToPay('233241000003', 'chg_c', 0, { status: 202, body: '<html>bad gateway</html>' }),
      requestToPay('233241000004', 'chg_d', 0, { ending: 'reset', status: undefined, body: undefined }),
    ]);
    const first = (i: number) => scenario.rules[i]!.collect!['mtn-momo']![0];
    expect(first(0)).toMatchObject({ respond: 'reject', http_status: 400, reason: 'PAYER_NOT_FOUND' });
    expect(first(1)).toMatchObject({ respond: 'server_error', http_status: 503 });
    expect(first(2)).toMatchObject({ respond: 'malformed' });
    expect(first(3)).toMatchObject({ respond: 'reset' });
  });

  it('keeps different answers to the same number as a sequence, in the order they came', () => {
    const { scenario } = build(
      'mtn-momo',
      [requestToPay('233551234989', 'chg_4', 0, { ending: 'abandoned', status: undefined, body: undefined }), requestToPay('233551234989', 'chg_5', 5_000)],
      [mtnCallback('chg_5', 8_000, 'SUCCESSFUL')],
    );
    expect(scenario.rules).toHaveLength(1);
    expect(scenario.rules[0]!.collect!['mtn-momo']!.map((b) => b.respond)).toEqual(['timeout', 'accept']);
  });

  it('folds identical answers into one behaviour, with the slowest latency seen', () => {
    const { scenario } = build(
      'mtn-momo',
      [requestToPay('233551234987', 'chg_6', 0, { endedAt: 30 }), requestToPay('233551234987', 'chg_7', 100, { endedAt: 110 })],
      [mtnCallback('chg_6', 5_000, 'SUCCESSFUL'), mtnCallback('chg_7', 5_100, 'SUCCESSFUL')],
    );
    expect(scenario.rules[0]!.collect!['mtn-momo']).toEqual([{ respond: 'accept', latency_ms: 30, callback: { after_seconds: 5, status: 'success', drop: false } }]);
  });

  it('reads a repeated callback as a duplicate, and a contradicting one as an extra callback', () => {
    const { scenario } = build(
      'mtn-momo',
      [requestToPay('233551234987', 'chg_8', 0)],
      [mtnCallback('chg_8', 3_000, 'SUCCESSFUL'), mtnCallback('chg_8', 4_000, 'SUCCESSFUL'), mtnCallback('chg_8', 9_000, 'FAILED', 'INTERNAL_PROCESSING_ERROR')],
    );
    const behaviour = scenario.rules[0]!.collect!['mtn-momo']![0]!;
    expect(behaviour.callback).toMatchObject({ after_seconds: 3, status: 'success', duplicate: true, duplicate_after_seconds: 1 });
    expect(behaviour.extra_callbacks).toEqual([{ after_seconds: 9, status: 'failed', reason: 'INTERNAL_PROCESSING_ERROR', drop: false }]);
  });

  it('reads a transaction only a status poll settled as a dropped callback', () => {
    const poll: RecordedExchange = {
      request: { method: 'GET', path: '/collection/v1_0/requesttopay/ref-chg_9', headers: {}, body: '' },
      startedAt: 300_000,
      endedAt: 300_010,
      ending: 'answered',
      status: 200,
      body: JSON.stringify({ externalId: 'chg_9', status: 'SUCCESSFUL' }),
    };
    const { scenario } = build('mtn-momo', [requestToPay('233551234987', 'chg_9', 0), poll]);
    expect(scenario.rules[0]!.collect!['mtn-momo']![0]!.callback).toEqual({ after_seconds: 300, status: 'success', drop: true });
  });

  it('keys a bank rule on bank code and account number, and reads name enquiries', () => {
    const transfer: RecordedExchange = {
      request: {
        method: 'POST',
        path: '/gip/v1/credit-transfers',
        headers: {},
        body: JSON.stringify({ sessionId: 'trf_1', destinationBankCode: '040100', accountNumber: '1000000002', callbackUrl: 'http://x/cb' }),
      },
      startedAt: 0,
      endedAt: 5,
      ending: 'answered',
      status: 202,
      body: JSON.stringify({ responseCode: '09', transactionId: 'gip_1' }),
    };
    const enquiry: RecordedExchange = {
      request: { method: 'POST', path: '/gip/v1/name-enquiry', headers: {}, body: JSON.stringify({ destinationBankCode: '040100', accountNumber: '1000000003', sessionId: 'u1' }) },
      startedAt: 0,
      endedAt: 5,
      ending: 'answered',
      status: 200,
      body: JSON.stringify({ responseCode: '25' }),
    };
    const callback: RecordedCallback = {
      method: 'POST',
      path: '/cb',
      headers: {},
      body: JSON.stringify({ sessionId: 'trf_1', transactionId: 'gip_1', status: 'FAILED', responseCode: '51' }),
      receivedAt: 5_000,
    };
    const { scenario } = build('bank-rail', [transfer, enquiry], [callback]);
    expect(scenario.rules.map((r) => r.match)).toEqual([
      { bank_code: { equals: '040100' }, account_number: { equals: '1000000002' } },
      { bank_code: { equals: '040100' }, account_number: { equals: '1000000003' } },
    ]);
    expect(scenario.rules[0]!.payout!['bank-rail']![0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: '51', after_seconds: 5 } });
    expect(scenario.rules[1]!.resolve!['bank-rail']![0]).toMatchObject({ resolves: false });
  });

  it('writes no reference, id, credential or token it saw, and keeps the log of what crossed', () => {
    const { text } = build('mtn-momo', [requestToPay('233551234987', 'chg_secretref1', 0)], [mtnCallback('chg_secretref1', 5_000, 'SUCCESSFUL')], ['tok-abcdef']);
    expect(text).not.toContain('chg_secretref1');
    expect(text).not.toContain('tok-abcdef');
    expect(text).not.toContain('user:pass');
    expect(text).not.toContain('key=1');
    expect(text).toContain('#   POST /collection/v1_0/requesttopay -> 202 in 12 ms');
    expect(text).toContain('https://sandbox.example.com/base');
  });

  it('makes no rule of calls that name no number or account, such as token requests', () => {
    const token: RecordedExchange = {
      request: { method: 'POST', path: '/collection/token/', headers: {}, body: '' },
      startedAt: 0,
      endedAt: 3,
      ending: 'answered',
      status: 200,
      body: '{"access_token":"abc"}',
    };
    const { scenario, text } = build('mtn-momo', [token]);
    expect(scenario.rules).toEqual([]);
    expect(text).toContain('POST /collection/token/ -> 200');
  });
});
