import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RailProvider } from '../../src/rails/provider-port.ts';
import { RailError } from '../../src/rails/provider-port.ts';
import type { Behaviour } from '../../src/scenarios/scenario-schema.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { railContractCases } from '../support/provider-contract-cases.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

// One contract for every adapter of the provider port, each run against its own HTTP mock: one
// case per provider of src/providers/index.ts, from the example calls its folder declares.
const cases = railContractCases();

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
    sb.ry.scenarios.replace([parseRule({ name: `contract ${op}`, match: c.examples.match, [op]: { any: { respond: 'accept', ...behaviour } } })]);
  /** The operation it is mainly for: a payout where it pays out, else a collection. */
  const main = c.examples.payout
    ? { op: 'payout' as const, prefix: 'trf' as const, refusalStatus: 400, call: (reference: string) => provider.payout(c.examples.payout!(reference)) }
    : { op: 'collect' as const, prefix: 'col' as const, refusalStatus: 402, call: (reference: string) => provider.collect(c.examples.collect!(reference)) };

  beforeEach(() => {
    provider = sb.ry.router.get(c.name)!;
    sb.ry.scenarios.replace([]);
  });

  it('has an example of what it is for (a payout or a collection)', () => {
    expect(c.examples.payout ?? c.examples.collect).toBeDefined();
  });

  it(`${c.examples.payout ? 'pays out' : 'collects'}: accepted with a provider reference, pending until the provider settles, then final`, async () => {
    behave(main.op, { callback: { after_seconds: 10, status: 'success', drop: true } });
    const reference = ref(main.prefix);
    const accepted = await main.call(reference);
    expect(accepted.providerReference).toMatch(/\S/);
    expect(await provider.status({ operation: main.op, reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await sb.advance(10);
    expect(await provider.status({ operation: main.op, reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  it(`reports a failed ${c.examples.payout ? 'payout' : 'collection'} with a reason`, async () => {
    behave(main.op, { callback: { after_seconds: 1, status: 'failed', reason: 'insufficient_funds', drop: true } });
    const reference = ref(main.prefix);
    const accepted = await main.call(reference);
    await sb.advance(1);
    const outcome = await provider.status({ operation: main.op, reference, providerReference: accepted.providerReference });
    expect(outcome.status).toBe('failed');
    // The payout rails word the reason their own way (Hubtel's 'failed', the bank rail's '51').
    expect(outcome.status === 'failed' && outcome.reason).toMatch(c.examples.payout ? /\S/ : /insufficient_funds/i);
  });

  it(c.examples.resolve ? 'resolves a name, and answers null for an account that does not exist' : 'refuses to resolve names, without failing over', async () => {
    if (!c.examples.resolve) {
      const error = await provider.resolveName({ channel: 'momo', msisdn: '233241110000', network: 'MTN' }).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(false);
      return;
    }
    behave('resolve', { name: 'Contract Holder' });
    expect(await provider.resolveName(c.examples.resolve)).toEqual({ name: 'Contract Holder' });
    behave('resolve', { resolves: false });
    expect(await provider.resolveName(c.examples.resolve)).toBeNull();
  });

  it.each([
    ['a timeout', { respond: 'timeout' }, 'timeout', true],
    ['a 5xx', { respond: 'server_error', http_status: 500 }, 'server', true],
    ['a refusal', { respond: 'reject', reason: 'insufficient_funds' }, 'rejected', false],
  ] as const)('maps %s to RailError %s (fails over: %s)', async (_name, behaviour, kind, failsOver) => {
    behave(main.op, behaviour.respond === 'reject' ? { ...behaviour, http_status: main.refusalStatus } : behaviour);
    const error = await main.call(ref(main.prefix)).catch((e) => e);
    expect(error).toBeInstanceOf(RailError);
    expect(error.kind).toBe(kind);
    expect(error.failsOver).toBe(failsOver);
  });

  it('maps an outage (503) to a RailError that fails over', async () => {
    await sb.ry.health.setDown(c.name, true);
    try {
      const error = await main.call(ref(main.prefix)).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(true);
    } finally {
      await sb.ry.health.setDown(c.name, false);
    }
  });

  it(c.examples.collect ? 'collects: accepted, then settled' : 'refuses to collect, without failing over', async () => {
    const reference = ref('chg');
    if (!c.examples.collect) {
      const request = { reference, amount: 1500, currency: 'GHS' as const, msisdn: '233241110000', network: 'MTN' as const, description: 'contract' };
      const error = await provider.collect(request).catch((e) => e);
      expect(error).toBeInstanceOf(RailError);
      expect(error.failsOver).toBe(false);
      return;
    }
    behave('collect', { callback: { after_seconds: 2, status: 'success', drop: true } });
    const accepted = await provider.collect(c.examples.collect(reference));
    await sb.advance(2);
    expect(await provider.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  // The collecting rails (no payouts) also promise to take a retry of a collection as the same one.
  if (!c.examples.payout) {
    it('takes a retried reference as the acceptance it already gave', async () => {
      behave('collect', { callback: { after_seconds: 10, status: 'success', drop: true } });
      const reference = ref('col');
      const first = await provider.collect(c.examples.collect!(reference));
      expect(await provider.collect(c.examples.collect!(reference))).toEqual({ providerReference: first.providerReference });
    });

    it('refuses payouts and other channels, without failing over', async () => {
      for (const attempt of [
        provider.payout({ reference: ref('trf'), amount: 1234, currency: 'GHS', channel: 'momo', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
        provider.collect({ reference: ref('col'), amount: 1500, currency: 'GHS', msisdn: '233241110000', network: 'MTN', description: 'contract' }),
      ]) {
        const error = (await (attempt as Promise<unknown>).catch((e: unknown) => e)) as RailError;
        expect(error).toBeInstanceOf(RailError);
        expect(error.failsOver).toBe(false);
      }
    });
  }

  it('refuses a forged callback and cannot parse garbage', () => {
    for (const subpath of ['/not-the-token', '/']) {
      expect(provider.verifyCallback({ method: 'POST', subpath, headers: {}, rawBody: '{}', body: {} })).toBe(false);
      expect(() => provider.parseCallback({ method: 'POST', subpath, headers: {}, rawBody: '"hello"', body: 'hello' })).toThrow(RailError);
    }
  });

  it('names its channels and where it sends requests', () => {
    expect(provider.channels.length).toBeGreaterThan(0);
    expect(provider.baseUrl()).toBe(`${sb.baseUrl}/mocks/${c.name}`);
  });
});
