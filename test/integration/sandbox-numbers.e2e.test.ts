import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// The shipped scenarios/sandbox.yaml, end to end: real HTTP from the adapters to the mocks and
// real callbacks from the mocks to the internal receiver, on the virtual clock.
let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
  await sb.fund(1_000_000);
});
afterAll(() => sb.close());

async function attempts(refId: string) {
  return sb.ry.store.all<{ provider: string; outcome: string }>('SELECT provider, outcome FROM rail_attempts WHERE ref_id = ? ORDER BY seq', [refId]);
}

describe('the sandbox numbers', () => {
  it('0551234987: charge and transfer succeed on the primary provider', async () => {
    const charge = (await sb.charge({ amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).body.data;
    const transfer = (await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).body.data;
    expect(charge.provider).toBe('mtn-momo');
    expect(await attempts(charge.id)).toEqual([{ provider: 'mtn-momo', outcome: 'accepted' }]);
    await sb.advance(5);
    expect((await sb.get(`/api/v1/charges/${charge.id}`)).body.data.status).toBe('success');
    expect((await sb.get(`/api/v1/transfers/${transfer.id}`)).body.data.status).toBe('success');
    expectBalanced(await sb.trialBalance());
  });

  it('0551234988: charge and transfer fail with insufficient funds; the transfer is refunded', async () => {
    const before = await sb.wallet();
    const charge = (await sb.charge({ amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0551234988' })).body.data;
    const transfer = (await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234988' })).body.data;
    await sb.advance(5);
    expect((await sb.get(`/api/v1/charges/${charge.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect((await sb.get(`/api/v1/transfers/${transfer.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
    expect(await sb.wallet()).toEqual(before);
    expectBalanced(await sb.trialBalance());
  });

  it('0551234989: times out at mtn-momo, fails over, and succeeds on hubtel', async () => {
    const res = await sb.charge({ amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' });
    const charge = res.body.data;
    expect(Object.keys(charge).sort()).toEqual(Object.keys((await sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).body.data).sort());
    expect(charge.provider).toBe('hubtel');
    expect(await attempts(charge.id)).toEqual([
      { provider: 'mtn-momo', outcome: 'timeout' },
      { provider: 'hubtel', outcome: 'accepted' },
    ]);
    const transfer = (await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' })).body.data;
    expect(transfer.provider).toBe('hubtel');
    await sb.advance(5);
    expect((await sb.get(`/api/v1/charges/${charge.id}`)).body.data.status).toBe('success');
    expect((await sb.get(`/api/v1/transfers/${transfer.id}`)).body.data.status).toBe('success');
    expectBalanced(await sb.trialBalance());
  });

  it('GCB accounts: 1000000001 succeeds, 1000000002 fails and is refunded, 1000000003 does not resolve', async () => {
    const before = await sb.wallet();
    const good = (await sb.transfer({ amount: 7_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' })).body.data;
    const bad = (await sb.transfer({ amount: 7_000, currency: 'GHS', channel: 'bank', account_number: '1000000002', bank_code: '040100', bank_account_name: 'Yaw Asante' })).body.data;
    expect((await sb.post('/api/v1/resolve/bank-name', { account_number: '1000000003', bank_code: '040100' })).status).toBe(404);
    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${good.id}`)).body.data.status).toBe('success');
    expect((await sb.get(`/api/v1/transfers/${bad.id}`)).body.data.status).toBe('failed');
    expect(await sb.wallet()).toEqual({ currency: 'GHS', available: before.available - 7_000 - 200, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('every money movement appears in /api/v1/transactions, newest first', async () => {
    const list = (await sb.get('/api/v1/transactions?page_size=100')).body.data as { id: string; created_at: string }[];
    expect(list.length).toBe(9);
    const fromDb = await sb.ry.store.all<{ object_id: string }>('SELECT object_id FROM transactions ORDER BY seq DESC');
    expect(list.map((t) => t.id)).toEqual(fromDb.map((r) => r.object_id));
  });
});
