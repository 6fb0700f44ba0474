import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBalanced, SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios, parseRule } from '../../src/railyard-scenarios.ts';

// 0551234990 (scenarios/sandbox.yaml): mtn-momo times out but takes the request anyway and
// reports success 10 s later; hubtel serves it, success at 5 s.
const duplicateLate = parseRule({
  name: 'late success, sent twice',
  match: { msisdn: '0241119999' },
  collect: {
    'mtn-momo': { respond: 'timeout', callback: { after_seconds: 10, status: 'success', duplicate: true, duplicate_after_seconds: 3 } },
    any: { respond: 'accept', callback: { after_seconds: 5, status: 'success' } },
  },
});
const everyoneTimesOut = parseRule({
  name: 'every provider times out; mtn-momo succeeds late',
  match: { msisdn: '0241118888' },
  collect: {
    'mtn-momo': { respond: 'timeout', callback: { after_seconds: 20, status: 'success' } },
    any: { respond: 'timeout' },
  },
});
const duplicateCallback = parseRule({
  name: 'a duplicate callback',
  match: { msisdn: '0241117777' },
  collect: { any: { respond: 'accept', callback: { after_seconds: 5, status: 'success', duplicate: true } } },
});

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox({}, [duplicateLate, everyoneTimesOut, duplicateCallback, ...loadScenarios([SANDBOX_SCENARIOS]).rules]);
});
afterEach(() => sb.close());

const charge = (msisdn: string) => sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn });
const journalsOf = (id: string) => sb.ry.store.all<{ kind: string }>('SELECT kind FROM ledger_journals WHERE ref_id = ? ORDER BY seq', [id]);
const balanceOf = (account: string) => sb.ry.ledger.balance(sb.ry.store, 'test', account, 'GHS');

describe('a late success from an abandoned provider', () => {
  it('is recorded and reversed, and the merchant sees one charge credited once', async () => {
    const res = await charge('0551234990');
    const id = res.body.data.id;
    expect(res.body.data.provider).toBe('hubtel');
    await sb.advance(5);
    expect((await sb.get(`/api/v1/charges/${id}`)).body.data).toMatchObject({ status: 'success', provider: 'hubtel' });
    await sb.advance(5); // mtn-momo's late callback
    expect((await sb.get(`/api/v1/charges/${id}`)).body.data).toMatchObject({ status: 'success', provider: 'hubtel' });
    expect(await journalsOf(id)).toEqual([{ kind: 'charge.settled' }, { kind: 'charge.late_success' }, { kind: 'charge.late_success_reversed' }]);
    expect(await sb.events(id)).toEqual(['charge.pending', 'charge.success', 'charge.late_success_reversed']);
    expect((await sb.wallet()).available).toBe(9_900);
    expect((await sb.get('/api/v1/transactions')).body.data).toHaveLength(1);
    expect(await balanceOf('suspense:late_settlements')).toBe(0);
    expect(await balanceOf('external:provider:mtn-momo')).toBe(0);
    const late = await sb.ry.store.all('SELECT provider, amount, source FROM late_settlements WHERE object_id = ?', [id]);
    expect(late).toEqual([{ provider: 'mtn-momo', amount: 10_000, source: 'callback' }]);
    expectBalanced(await sb.trialBalance());
  });

  it('is reversed once, however often it is reported', async () => {
    const id = (await charge('0241119999')).body.data.id;
    await sb.advance(20);
    expect(await journalsOf(id)).toEqual([{ kind: 'charge.settled' }, { kind: 'charge.late_success' }, { kind: 'charge.late_success_reversed' }]);
    expect((await sb.events(id)).filter((e) => e === 'charge.late_success_reversed')).toHaveLength(1);
    expectBalanced(await sb.trialBalance());
  });

  it('is reversed when no provider served the charge (it failed with a 502)', async () => {
    const res = await charge('0241118888');
    expect(res.status).toBe(502);
    const id = res.body.error.details.charge_id;
    await sb.advance(20);
    expect((await sb.get(`/api/v1/charges/${id}`)).body.data.status).toBe('failed');
    expect(await journalsOf(id)).toEqual([{ kind: 'charge.late_success' }, { kind: 'charge.late_success_reversed' }]);
    expect((await sb.wallet()).available).toBe(0);
    expectBalanced(await sb.trialBalance());
  });

  it('is reversed for a transfer too: the recipient is not paid twice', async () => {
    await sb.fund(50_000);
    const id = (await sb.transfer({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234990' })).body.data.id;
    await sb.advance(10);
    expect((await sb.get(`/api/v1/transfers/${id}`)).body.data).toMatchObject({ status: 'success', provider: 'hubtel' });
    expect(await journalsOf(id)).toEqual([{ kind: 'transfer.reserved' }, { kind: 'transfer.settled' }, { kind: 'transfer.late_success' }, { kind: 'transfer.late_success_reversed' }]);
    expect(await sb.wallet()).toMatchObject({ available: 50_000 - 10_100, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });
});

describe('duplicate callbacks', () => {
  it('settle once: the second changes nothing', async () => {
    const id = (await charge('0241117777')).body.data.id;
    await sb.advance(10);
    expect(await journalsOf(id)).toEqual([{ kind: 'charge.settled' }]);
    expect(await sb.events(id)).toEqual(['charge.pending', 'charge.success']);
    expect((await sb.wallet()).available).toBe(9_900);
  });
});
