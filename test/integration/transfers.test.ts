import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios, parseRule } from '../../src/railyard-scenarios.ts';

const dropped = parseRule({
  name: 'callback dropped',
  match: { msisdn: '0541112222' },
  payout: { any: { respond: 'accept', callback: { after_seconds: 20, status: 'success', drop: true } } },
  collect: { any: { respond: 'accept', callback: { after_seconds: 20, status: 'success', drop: true } } },
});
const refused = parseRule({
  name: 'refused outright',
  match: { msisdn: '0543334444' },
  payout: { any: { respond: 'reject', reason: 'PAYEE_NOT_FOUND', http_status: 404 } },
});

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox({}, [dropped, refused, ...loadScenarios([SANDBOX_SCENARIOS]).rules]);
  await sb.fund(100_000);
});
afterEach(() => sb.close());

const momo = (msisdn: string, amount = 10_000) => ({ amount, currency: 'GHS', channel: 'momo', msisdn });
const bank = (account_number: string, amount = 10_000) => ({ amount, currency: 'GHS', channel: 'bank', account_number, bank_code: '040100', bank_account_name: 'Ama Owusu' });

describe('POST /api/v1/transfers', () => {
  it('reserves amount plus fees at initiation and releases the reservation on success', async () => {
    const res = await sb.transfer(momo('0551234987'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      object: 'transfer',
      status: 'pending',
      amount: 10_000,
      fees: 100,
      total_debited: 10_100,
      channel: 'momo',
      msisdn: '233551234987',
      network: 'MTN',
      provider: 'mtn-momo',
    });
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 10_100 });
    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['transfer.pending', 'transfer.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('refunds the reservation when the rail reports failure', async () => {
    const res = await sb.transfer(momo('0551234988'));
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 10_100 });
    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['transfer.pending', 'transfer.failed']);
    const journals = await sb.ry.store.all<{ kind: string }>("SELECT kind FROM ledger_journals WHERE ref_type = 'transfer' ORDER BY seq");
    expect(journals.map((j) => j.kind)).toEqual(['transfer.reserved', 'transfer.refunded']);
    expectBalanced(await sb.trialBalance());
  });

  it('pays GCB account 1000000001 and documents the bank in the record', async () => {
    const res = await sb.transfer(bank('1000000001'));
    expect(res.body.data).toMatchObject({
      channel: 'bank',
      account_number: '1000000001',
      bank_code: '040100',
      bank_name: 'GCB',
      bank_account_name: 'Ama Owusu',
      fees: 200,
      provider: 'bank-rail',
      msisdn: null,
    });
    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 89_800, reserved: 0 });
  });

  it.each([
    ['1000000002', 'insufficient_funds'],
    ['1000000003', 'account_not_found'],
  ])('fails GCB account %s with %s and refunds', async (account, reason) => {
    const res = await sb.transfer(bank(account));
    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: reason });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('answers 422 insufficient_funds when the wallet cannot cover amount plus fees, and changes nothing', async () => {
    const res = await sb.transfer(momo('0551234987', 99_950));
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'insufficient_funds', details: { available: 100_000, required: 100_050, currency: 'GHS' } });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });

  it('settles by status polling when the callback never comes', async () => {
    const res = await sb.transfer(momo('0541112222'));
    await sb.advance(30);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data.status).toBe('pending'); // settled upstream, nobody told us
    await sb.advance(30); // poll_after_seconds = 60 in tests
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 0 });
    const polls = await sb.ry.store.all<{ state: string }>("SELECT state FROM jobs WHERE kind = 'rail.poll'");
    expect(polls.every((p) => p.state === 'done')).toBe(true);
  });

  it('fails at once and refunds when the provider refuses the payout outright', async () => {
    const res = await sb.transfer(momo('0543334444'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'account_not_found', provider_reason: 'PAYEE_NOT_FOUND' });
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
  });

  it('answers 502 and refunds when no provider can take the payout', async () => {
    await sb.post('/api/v1/sandbox/providers/bank-rail/outage', { down: true });
    const res = await sb.transfer(bank('1000000001'));
    expect(res.status).toBe(502);
    expect(res.body.error.details.transfer_id).toMatch(/^trf_/);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect(await sb.events(res.body.error.details.transfer_id)).toEqual(['transfer.failed']);
    expectBalanced(await sb.trialBalance());
  });

  it('rejects an unknown GhIPSS bank code', async () => {
    const res = await sb.transfer({ ...bank('1000000001'), bank_code: '999100' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'bank_code', message: 'bank_code must be a GhIPSS institution code such as 040100 (GCB)' }]);
  });

  it('answers 404 for an unknown transfer', async () => {
    expect((await sb.get('/api/v1/transfers/trf_0000000000aaaaaaaaaa')).status).toBe(404);
  });
});

describe('charges settle by status polling too', () => {
  it('polls the provider that accepted the charge', async () => {
    const res = await sb.charge({ amount: 5000, currency: 'GHS', channel: 'momo', msisdn: '0541112222' });
    await sb.advance(59);
    expect((await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('pending_provider');
    await sb.advance(1);
    expect((await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('success');
  });
});
