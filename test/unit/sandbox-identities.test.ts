import { describe, expect, it } from 'vitest';
import { MTN_DEFAULT_IDENTITIES, SandboxIdentities, sandboxIdentitiesFor, sandboxIdentitiesSchema } from '../../src/providers/mtn-momo/sandbox-identities.ts';
import { buildConfig } from '../../src/railyard-config.ts';

// providers.mtn-momo.sandbox_identities: the service's Ghana test numbers and GHS amounts as MTN's
// sandbox takes them (its test numbers, EUR), at a stated rate and rounding, in integers.

const identities = (block: Record<string, unknown> = {}) => new SandboxIdentities(sandboxIdentitiesSchema.parse(block));

describe('sandbox identities for MTN', () => {
  it("maps the sandbox's success and insufficient-funds numbers, and one Ghana number per documented MTN test number", () => {
    expect(MTN_DEFAULT_IDENTITIES['0551234987']).toBe('46733123400');
    expect(MTN_DEFAULT_IDENTITIES['0551234988']).toBe('46733123450');
    expect(MTN_DEFAULT_IDENTITIES['0241234551']).toBe('46733123451');
    expect(MTN_DEFAULT_IDENTITIES['0241234563']).toBe('46733123463');
    expect(Object.keys(MTN_DEFAULT_IDENTITIES)).toHaveLength(15);
  });

  it('translates a Ghana number in any form out, and the test number back to 233…', () => {
    const ids = identities();
    for (const form of ['0551234987', '233551234987', '+233551234987']) expect(ids.upstreamMsisdn(form)).toBe('46733123400');
    expect(ids.merchantMsisdn('46733123400')).toBe('233551234987');
    expect(ids.describe('46733123450')).toBe('0551234988 as 46733123450');
  });

  it('sends a number the map lacks as it is', () => {
    expect(identities().upstreamMsisdn('233241110000')).toBe('233241110000');
    expect(identities().merchantMsisdn('46733123499')).toBeUndefined();
  });

  it('converts pesewas to EUR cents at 0.08 by default, as a two-decimal string', () => {
    expect(identities().upstreamAmount(2_500)).toEqual({ amount: '2.00', currency: 'EUR' });
    expect(identities().upstreamAmount(123_456_789)).toEqual({ amount: '98765.43', currency: 'EUR' });
  });

  it('rounds as configured, and never below one cent', () => {
    // 1234 pesewas at 0.0777 = 95.8818 cents
    expect(identities({ rate: '0.0777', rounding: 'down' }).upstreamAmount(1_234).amount).toBe('0.95');
    expect(identities({ rate: '0.0777', rounding: 'up' }).upstreamAmount(1_234).amount).toBe('0.96');
    expect(identities({ rate: '0.0777' }).upstreamAmount(1_234).amount).toBe('0.96');
    expect(identities({ rate: '0.0775' }).upstreamAmount(2).amount).toBe('0.01');
    expect(identities({ rate: '0.08', currency: 'USD' }).upstreamAmount(1)).toEqual({ amount: '0.01', currency: 'USD' });
  });

  it('refuses a key that is no Ghana number, a test number named twice, and a zero rate', () => {
    expect(sandboxIdentitiesSchema.safeParse({ msisdns: { '46733123450': '46733123450' } }).success).toBe(false);
    expect(sandboxIdentitiesSchema.safeParse({ msisdns: { '0551234987': '46733123450', '0551234988': '46733123450' } }).success).toBe(false);
    expect(sandboxIdentitiesSchema.safeParse({ rate: '0.00' }).success).toBe(false);
    expect(sandboxIdentitiesSchema.safeParse({ rate: '1/12' }).success).toBe(false);
  });

  it('applies only to an adapter pointed at a base URL: the in-process mock speaks Ghana numbers and GHS', () => {
    const block = sandboxIdentitiesSchema.parse({});
    expect(sandboxIdentitiesFor({ sandbox_identities: block })).toBeUndefined();
    expect(sandboxIdentitiesFor({ base_url: 'https://sandbox.momodeveloper.mtn.com' })).toBeUndefined();
    expect(sandboxIdentitiesFor({ base_url: 'https://sandbox.momodeveloper.mtn.com', sandbox_identities: block })).toBeInstanceOf(SandboxIdentities);
  });

  it('is read from providers.mtn-momo.sandbox_identities, {} giving the documented defaults', () => {
    const config = buildConfig({ providers: { 'mtn-momo': { sandbox_identities: {} } } });
    expect(config.providers['mtn-momo']).toMatchObject({ sandbox_identities: { currency: 'EUR', rate: '0.08', rounding: 'half_up', msisdns: MTN_DEFAULT_IDENTITIES } });
    expect(() => buildConfig({ providers: { 'mtn-momo': { sandbox_identities: { msisdns: { '12345': '46733123400' } } } } })).toThrow(/not a Ghana mobile number/);
  });
});
