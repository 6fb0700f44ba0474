import { describe, expect, it } from 'vitest';
import { buildRecordedScenario } from '../../src/recorder/recorded-scenario.ts';
import type { RecordedCallback, RecordedExchange } from '../../src/recorder/recording-proxy.ts';
import { Redactor } from '../../src/kernel/redactor.ts';
import { paystackWire } from '../../src/providers/paystack/recorder.ts';
import { wireProfileFor } from '../../src/recorder/wire-profiles.ts';
import { buildConfig } from '../../src/railyard-config.ts';

// Paystack's wire read back into scenario terms: charges keyed on the phone, transfers on the
// recipient's account (the transfer itself names only a recipient code), webhooks by event, and
// the outcomes Paystack sends no webhook for found by the status poll.

function exchange(method: string, path: string, sent: unknown, status: number, answer: unknown, startedAt = 0): RecordedExchange {
  return {
    request: { method, path, headers: { authorization: 'Bearer sk_test_wire_secret_1' }, body: sent === undefined ? '' : JSON.stringify(sent) },
    startedAt,
    endedAt: startedAt + 20,
    ending: 'answered',
    status,
    body: typeof answer === 'string' ? answer : JSON.stringify(answer),
  };
}

const charge = (phone: string, reference: string, startedAt = 0, status = 200, answer: unknown = { status: true, message: 'Charge attempted', data: { reference, status: 'pay_offline' } }) =>
  exchange('POST', '/charge', { email: 'x@example.com', amount: 2_500, currency: 'GHS', reference, mobile_money: { phone, provider: 'mtn' } }, status, answer, startedAt);

const recipient = (type: string, accountNumber: string, bankCode: string, code: string) =>
  exchange('POST', '/transferrecipient', { type, name: 'Payee', account_number: accountNumber, bank_code: bankCode, currency: 'GHS' }, 201, {
    status: true,
    message: 'ok',
    data: { recipient_code: code },
  });

const transfer = (code: string, reference: string, startedAt = 0) =>
  exchange(
    'POST',
    '/transfer',
    { source: 'balance', amount: 10_000, recipient: code, reference, currency: 'GHS' },
    200,
    { status: true, message: 'Transfer has been queued', data: { reference, transfer_code: `TRF_${reference}`, status: 'pending' } },
    startedAt,
  );

const webhook = (event: string, data: Record<string, unknown>, receivedAt: number): RecordedCallback => ({
  method: 'POST',
  path: '/internal/callbacks/paystack',
  headers: { 'x-paystack-signature': 'ab'.repeat(64) },
  body: JSON.stringify({ event, data }),
  receivedAt,
});

function build(exchanges: RecordedExchange[], callbacks: RecordedCallback[] = []) {
  return buildRecordedScenario({
    provider: 'paystack',
    profile: paystackWire,
    exchanges,
    callbacks,
    redactor: new Redactor(['sk_test_wire_secret_1']),
    upstream: 'https://api.paystack.co',
    recordedAt: '2026-11-24T08:00:00.000Z',
  });
}

describe('the Paystack wire profile', () => {
  it('is registered for railyard record --provider paystack', () => {
    expect(wireProfileFor('paystack')).toBe(paystackWire);
  });

  it('points the adapter at the proxy, and the mock webhook URL at the proxy receiver on railyard path', () => {
    const pointed = paystackWire.pointAt(buildConfig({}), 'http://127.0.0.1:4030/base', 'https://tunnel.example.com');
    expect(pointed).toMatchObject({ base_url: 'http://127.0.0.1:4030/base', webhook_url: 'https://tunnel.example.com/internal/callbacks/paystack' });
    expect(paystackWire.webhookPath).toBe('/internal/callbacks/paystack');
  });

  it('keys a transfer on the account of the recipient whose code it names', () => {
    const earlier = [recipient('mobile_money', '0551234987', 'MTN', 'RCP_wallet'), recipient('ghipss', '1000000001', '040100', 'RCP_bank')];
    expect(paystackWire.classify(transfer('RCP_bank', 'trf_1').request, earlier)).toEqual({
      kind: 'initiation',
      operation: 'payout',
      key: { account_number: '1000000001', bank_code: '040100' },
      references: ['trf_1'],
    });
    expect(paystackWire.classify(transfer('RCP_wallet', 'trf_2').request, earlier)).toMatchObject({ operation: 'payout', key: { msisdn: '0551234987' } });
    expect(paystackWire.classify(transfer('RCP_unknown', 'trf_3').request, earlier)).toMatchObject({ operation: 'payout', key: {} });
  });

  it('reads a resolve of a wallet as a number, of a GhIPSS account as an account, and verifies as status polls', () => {
    const resolve = (query: string) => paystackWire.classify({ method: 'GET', path: `/bank/resolve?${query}`, headers: {}, body: '' }, []);
    expect(resolve('account_number=0551234988&bank_code=MTN')).toMatchObject({ operation: 'resolve', key: { msisdn: '0551234988' } });
    expect(resolve('account_number=1000000003&bank_code=040100')).toMatchObject({ operation: 'resolve', key: { account_number: '1000000003', bank_code: '040100' } });
    expect(paystackWire.classify({ method: 'GET', path: '/transaction/verify/chg_1', headers: {}, body: '' }, [])).toEqual({ kind: 'status', references: ['chg_1'] });
    expect(paystackWire.classify({ method: 'GET', path: '/transfer/verify/trf_1', headers: {}, body: '' }, [])).toEqual({ kind: 'status', references: ['trf_1'] });
    expect(paystackWire.classify({ method: 'POST', path: '/transferrecipient', headers: {}, body: '{}' }, [])).toEqual({ kind: 'other' });
  });

  it('reads answers: a duplicate reference as taken, 422 on resolve as no account, a failed charge as a refusal', () => {
    expect(paystackWire.answerOf('collect', 400, JSON.stringify({ status: false, message: 'Duplicate Transaction Reference' }))).toEqual({ respond: 'accept' });
    expect(paystackWire.answerOf('collect', 400, JSON.stringify({ status: false, message: 'Insufficient Funds' }))).toEqual({ respond: 'reject', http_status: 400, reason: 'Insufficient Funds' });
    expect(paystackWire.answerOf('collect', 200, JSON.stringify({ status: true, data: { status: 'failed', gateway_response: 'Declined' } }))).toEqual({ respond: 'reject', reason: 'Declined' });
    expect(paystackWire.answerOf('collect', 200, '<html>gateway</html>')).toEqual({ respond: 'malformed' });
    expect(paystackWire.answerOf('payout', 503, JSON.stringify({ status: false, message: 'Service Unavailable' }))).toEqual({ respond: 'server_error', http_status: 503 });
    expect(paystackWire.answerOf('resolve', 422, JSON.stringify({ status: false, message: 'Could not resolve account name.' }))).toEqual({ respond: 'accept', resolves: false });
    expect(paystackWire.answerOf('resolve', 200, JSON.stringify({ status: true, data: { account_name: 'Ama Owusu' } }))).toEqual({ respond: 'accept', name: 'Ama Owusu' });
  });

  it('reads webhooks by their event, a reversed transfer as a failure with reason "reversed"', () => {
    expect(paystackWire.callbackOutcome(JSON.stringify({ event: 'charge.success', data: { reference: 'chg_1', status: 'success' } }))).toEqual({ references: ['chg_1'], status: 'success' });
    expect(paystackWire.callbackOutcome(JSON.stringify({ event: 'transfer.failed', data: { reference: 'trf_1', transfer_code: 'TRF_1', gateway_response: 'Insufficient Funds' } }))).toEqual({
      references: ['trf_1', 'TRF_1'],
      status: 'failed',
      reason: 'Insufficient Funds',
    });
    expect(paystackWire.callbackOutcome(JSON.stringify({ event: 'transfer.reversed', data: { reference: 'trf_2' } }))).toMatchObject({ status: 'failed', reason: 'reversed' });
    expect(paystackWire.callbackOutcome(JSON.stringify({ event: 'subscription.create', data: { reference: 'x' } }))).toBeUndefined();
  });

  it('writes a charge settled by charge.success, and a failed one only the poll found as a dropped callback', () => {
    const poll = exchange(
      'GET',
      '/transaction/verify/chg_ps_0002',
      undefined,
      200,
      { status: true, data: { reference: 'chg_ps_0002', status: 'failed', gateway_response: 'Insufficient Funds' } },
      8_000,
    );
    const { scenario, text } = build(
      [charge('0551234987', 'chg_ps_0001'), charge('0551234988', 'chg_ps_0002'), poll],
      [webhook('charge.success', { reference: 'chg_ps_0001', status: 'success' }, 5_000)],
    );
    expect(scenario.rules.map((r) => r.collect!.paystack![0]!.callback)).toEqual([
      { after_seconds: 5, status: 'success', drop: false },
      { after_seconds: 8, status: 'failed', reason: 'Insufficient Funds', drop: true },
    ]);
    expect(text).toContain('#   GET /transaction/verify/{reference} -> 200');
    for (const frozen of ['chg_ps_0001', 'chg_ps_0002', 'sk_test_wire_secret_1']) expect(text).not.toContain(frozen);
  });

  it('writes a transfer rule on its recipient account, settled by transfer.failed', () => {
    const { scenario } = build(
      [recipient('ghipss', '1000000002', '040100', 'RCP_b2'), transfer('RCP_b2', 'trf_9', 100)],
      [webhook('transfer.failed', { reference: 'trf_9', transfer_code: 'TRF_trf_9', status: 'failed', gateway_response: 'Insufficient Funds' }, 5_100)],
    );
    expect(scenario.rules).toEqual([
      expect.objectContaining({
        match: { bank_code: { equals: '040100' }, account_number: { equals: '1000000002' } },
        payout: { paystack: [{ respond: 'accept', latency_ms: 20, callback: { after_seconds: 5, status: 'failed', reason: 'Insufficient Funds', drop: false } }] },
      }),
    ]);
  });
});
