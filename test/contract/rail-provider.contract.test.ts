import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CollectRequest, PayoutRequest, RailProvider, ResolveRequest } from '../../src/rails/provider-port.ts';
import { RailError } from '../../src/rails/provider-port.ts';
import { parseRule, type Behaviour, type ScenarioRuleInput } from '../../src/scenarios/scenario-schema.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// One contract for every adapter of the provider port, each run against its own HTTP mock.
interface AdapterCase {
  name: 'mtn-momo' | 'hubtel' | 'bank-rail' | 'paystack' | 'bills';
  collects: boolean;
  /** Does it look up account names? The bills aggregator only vends. */
  resolves: boolean;
  match: ScenarioRuleInput['match'];
  payout: (reference: string) => PayoutRequest;
  resolve: ResolveRequest;
}

const momoPayout = (reference: string): PayoutRequest => ({ reference, amount: 1234, currency: 'GHS', channel: 'momo', msisdn: '233241110000', network: 'MTN', description: 'contract' });
const cases: AdapterCase[] = [
  { name: 'mtn-momo', collects: true, resolves: true, match: { msisdn: '0241110000' }, payout: momoPayout, resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' } },
  { name: 'hubtel', collects: true, resolves: true, match: { msisdn: '0241110000' }, payout: momoPayout, resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' } },
  {
    name: 'bank-rail',
    collects: false,
    resolves: true,
    match: { account_number: '2000000001', bank_code: '130100' },
    payout: (reference) => ({ reference, amount: 1234, currency: 'GHS', channel: 'bank', accountNumber: '2000000001', bankCode: '130100', accountName: 'Efua Mensah', description: 'contract' }),
    resolve: { channel: 'bank', accountNumber: '2000000001', bankCode: '130100' },
  },
  { name: 'paystack', collects: true, resolves: true, match: { msisdn: '0241110000' }, payout: momoPayout, resolve: { channel: 'momo', msisdn: '233241110000', network: 'MTN' } },
  {
    name: 'bills',
    collects: false,
    resolves: false,
    // A GWCL water account: its vend settles without a receipt, like any payout.
    match: { account_number: '2000000021' },
    payout: (reference) => ({
      reference, amount: 1234, currency: 'GHS', channel: 'bills', accountNumber: '2000000021', description: 'contract',
      bill: { category: 'water', biller: 'GWCL', customer: '2000000021' },
    }),
    resolve: { channel: 'bills', accountNumber: '2000000021' },
  },
];

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox({}, []);
});
afterAll(() => sb.close());

let counter = 0;
const ref = (prefix: 'chg' | 'trf' | 'col') => `${prefix}_contract${String(++counter).padStart(12, '0')}`;

describe.each(cases)('the $name adapter honours the provider port', (c) => {
  let provider: RailProvider;
  const behave = (op: 'collect' | 'payout' | 'resolve', behaviour: Partial<Behaviour>) =>
    sb.ry.scenarios.replace([parseRule({ name: `contract ${op}`, match: c.match, [op]: { any: { respond: 'accept', ...behaviour } } })]);

  beforeEach(() => {
    provider = sb.ry.router.get(c.name)!;
    sb.ry.scenarios.replace([]);
  });

  it('pays out: accepted with a provider reference, pending until the provider settles, then final', async () => {
    behave('payout', { callback: { after_seconds: 10, status: 'success', drop: true } });
    const reference = ref('trf');
    const accepted = await provider.payout(c.payout(reference));
    expect(accepted.providerReference).toMatch(/\S/);
    expect(await provider.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await sb.advance(10);
    expect(await provider.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  it('reports a failed payout with a reason', async () => {
    behave('payout', { callback: { after_seconds: 1, status: 'failed', reason: 'insufficient_funds', drop: true } });
    const reference = ref('trf');
    const accepted = await provider.payout(c.payout(reference));
    await sb.advance(1);
    const outcome = await provider.status({ operation: 'payout', reference, providerReference: accepted.providerReference });
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && outcome.reason).toMatch(/\S/);
  });

  it(c.resolves ? 'resolves a name, and answers null for an account that does not exist' : 'refuses to resolve names, without failing over', async () => {
    if (!c.resolves) {
      const error = await provider.resolveName(c.resolve).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(false);
      return;
    }
    behave('resolve', { name: 'Contract Holder' });
    expect(await provider.resolveName(c.resolve)).toEqual({ name: 'Contract Holder' });
    behave('resolve', { resolves: false });
    expect(await provider.resolveName(c.resolve)).toBeNull();
  });

  it.each([
    ['a timeout', { respond: 'timeout' }, 'timeout', true],
    ['a 5xx', { respond: 'server_error', http_status: 500 }, 'server', true],
    ['a refusal', { respond: 'reject', reason: 'insufficient_funds', http_status: 400 }, 'rejected', false],
  ] as const)('maps %s to RailError %s (fails over: %s)', async (_name, behaviour, kind, failsOver) => {
    behave('payout', behaviour);
    const error = await provider.payout(c.payout(ref('trf'))).catch((e) => e);
    expect(error).toBeInstanceOf(RailError);
    expect(error.kind).toBe(kind);
    expect(error.failsOver).toBe(failsOver);
  });

  it('maps an outage (503) to a RailError that fails over', async () => {
    sb.ry.health.setDown(c.name, true);
    try {
      const error = await provider.payout(c.payout(ref('trf'))).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(true);
    } finally {
      sb.ry.health.setDown(c.name, false);
    }
  });

  it(c.collects ? 'collects: accepted, then settled' : 'refuses to collect, without failing over', async () => {
    const reference = ref('chg');
    const request = { reference, amount: 1500, currency: 'GHS' as const, msisdn: '233241110000', network: 'MTN' as const, description: 'contract' };
    if (!c.collects) {
      const error = await provider.collect(request).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(false);
      return;
    }
    behave('collect', { callback: { after_seconds: 2, status: 'success', drop: true } });
    const accepted = await provider.collect(request);
    await sb.advance(2);
    expect(await provider.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  it('refuses a forged callback and cannot parse garbage', () => {
    const forged = { method: 'POST', subpath: '/not-the-token', headers: {}, rawBody: '{}', body: {} };
    expect(provider.verifyCallback(forged)).toBe(false);
    const garbage = { method: 'POST', subpath: '/x', headers: {}, rawBody: '"hello"', body: 'hello' };
    expect(() => provider.parseCallback(garbage)).toThrow(RailError);
  });

  it('names its channels and where it sends requests', () => {
    expect(provider.channels.length).toBeGreaterThan(0);
    expect(provider.baseUrl()).toBe(`${sb.baseUrl}/mocks/${c.name}`);
  });
});

// The /v1 collections' rails collect only: the same contract, for collecting.
interface CollectingCase {
  name: 'card-processor' | 'direct-debit';
  match: ScenarioRuleInput['match'];
  collect: (reference: string) => CollectRequest;
}

const collectingCases: CollectingCase[] = [
  {
    name: 'card-processor',
    match: { card: '4242424242424242' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', channel: 'card', card: { number: '4242424242424242' }, description: 'contract' }),
  },
  {
    name: 'direct-debit',
    match: { account_number: '3000000001', bank_code: '130100' },
    collect: (reference) => ({ reference, amount: 1500, currency: 'GHS', channel: 'bank_debit', accountNumber: '3000000001', bankCode: '130100', description: 'contract' }),
  },
];

describe.each(collectingCases)('the $name adapter honours the provider port for collections', (c) => {
  let provider: RailProvider;
  const behave = (behaviour: Partial<Behaviour>) =>
    sb.ry.scenarios.replace([parseRule({ name: 'contract collect', match: c.match, collect: { any: { respond: 'accept', ...behaviour } } })]);

  beforeEach(() => {
    provider = sb.ry.router.get(c.name)!;
    sb.ry.scenarios.replace([]);
  });

  it('collects: accepted with a provider reference, pending until the provider settles, then final', async () => {
    behave({ callback: { after_seconds: 10, status: 'success', drop: true } });
    const reference = ref('col');
    const accepted = await provider.collect(c.collect(reference));
    expect(accepted.providerReference).toMatch(/\S/);
    expect(await provider.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await sb.advance(10);
    expect(await provider.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  it('reports a failed collection with a reason', async () => {
    behave({ callback: { after_seconds: 1, status: 'failed', reason: 'insufficient_funds', drop: true } });
    const reference = ref('col');
    const accepted = await provider.collect(c.collect(reference));
    await sb.advance(1);
    const outcome = await provider.status({ operation: 'collect', reference, providerReference: accepted.providerReference });
    expect(outcome).toEqual({ status: 'failed', reason: expect.stringMatching(/insufficient_funds/i) });
  });

  it('takes a retried reference as the acceptance it already gave', async () => {
    behave({ callback: { after_seconds: 10, status: 'success', drop: true } });
    const reference = ref('col');
    const first = await provider.collect(c.collect(reference));
    expect(await provider.collect(c.collect(reference))).toEqual({ providerReference: first.providerReference });
  });

  it.each([
    ['a timeout', { respond: 'timeout' }, 'timeout', true],
    ['a 5xx', { respond: 'server_error', http_status: 500 }, 'server', true],
    ['a refusal', { respond: 'reject', reason: 'insufficient_funds', http_status: 402 }, 'rejected', false],
  ] as const)('maps %s to RailError %s (fails over: %s)', async (_name, behaviour, kind, failsOver) => {
    behave(behaviour);
    const error = await provider.collect(c.collect(ref('col'))).catch((e) => e);
    expect(error).toBeInstanceOf(RailError);
    expect(error.kind).toBe(kind);
    expect(error.failsOver).toBe(failsOver);
  });

  it('maps an outage (503) to a RailError that fails over', async () => {
    sb.ry.health.setDown(c.name, true);
    try {
      const error = await provider.collect(c.collect(ref('col'))).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(true);
    } finally {
      sb.ry.health.setDown(c.name, false);
    }
  });

  it('refuses payouts, name enquiries and other channels, without failing over', async () => {
    for (const attempt of [
      provider.payout(momoPayout(ref('trf'))),
      provider.resolveName({ channel: 'momo', msisdn: '233241110000', network: 'MTN' }),
      provider.collect({ reference: ref('col'), amount: 1500, currency: 'GHS', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
    ]) {
      const error = (await (attempt as Promise<unknown>).catch((e: unknown) => e)) as RailError;
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(false);
    }
  });

  it('refuses a forged callback and cannot parse garbage', () => {
    const forged = { method: 'POST', subpath: '/', headers: {}, rawBody: '{}', body: {} };
    expect(provider.verifyCallback(forged)).toBe(false);
    const garbage = { method: 'POST', subpath: '/', headers: {}, rawBody: '"hello"', body: 'hello' };
    expect(() => provider.parseCallback(garbage)).toThrow(RailError);
  });

  it('names its channels and where it sends requests', () => {
    expect(provider.channels).toEqual([c.name === 'card-processor' ? 'card' : 'bank_debit']);
    expect(provider.baseUrl()).toBe(`${sb.baseUrl}/mocks/${c.name}`);
  });
});
