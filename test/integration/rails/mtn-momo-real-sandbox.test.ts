import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startMock, type RunningMock } from '../../../src/cli/mock-command.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../../src/kernel/clock.ts';
import { buildConfig } from '../../../src/railyard-config.ts';
import type { ScenarioRule } from '../../../src/scenarios/scenario-schema.ts';
import { parseScenario } from '../../../src/railyard-scenarios.ts';

// `railyard mock mtn-momo --as-real-sandbox`: what MTN's real sandbox refuses, it refuses with
// MTN's error bodies (reference §1: EUR only, X-Target-Environment sandbox, callback hosts by
// name), and its test numbers give MTN's documented outcomes whatever the scenario rules say.

const config = buildConfig({ db: ':memory:', log_requests: false, rails: { default_callback_seconds: 3 } });
const KEYS = { collection: 'railyard-mtn-collection-key', disbursement: 'railyard-mtn-disbursement-key' } as const;
const BASIC = Buffer.from('railyard-mtn-api-user:railyard-mtn-api-key').toString('base64');

// A rule the strict mock must not play: the real sandbox knows nothing of railyard's scenarios.
const RULES: ScenarioRule[] = parseScenario(
  'version: 1\nname: ignored\nrules:\n  - name: a rule the strict mock ignores\n    match: { msisdn: "46733123400" }\n    collect:\n      any: { respond: accept, callback: { after_seconds: 1, status: failed, reason: NOT_ENOUGH_FUNDS } }\n',
  'ignored.yaml',
).rules;

type Product = keyof typeof KEYS;

async function token(mock: RunningMock, product: Product): Promise<string> {
  const res = await fetch(`${mock.url}/${product}/token/`, { method: 'POST', headers: { 'Ocp-Apim-Subscription-Key': KEYS[product], Authorization: `Basic ${BASIC}` } });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function call(mock: RunningMock, product: Product, method: 'GET' | 'POST', path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${mock.url}/${product}${path}`, {
    method,
    headers: {
      'Ocp-Apim-Subscription-Key': KEYS[product],
      Authorization: `Bearer ${await token(mock, product)}`,
      'X-Target-Environment': 'sandbox',
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const requestToPay = (partyId: string, overrides: Record<string, unknown> = {}) => ({
  amount: '2.00',
  currency: 'EUR',
  externalId: 'chg_test',
  payer: { partyIdType: 'MSISDN', partyId },
  payerMessage: 'test',
  payeeNote: 'test',
  ...overrides,
});

async function pay(mock: RunningMock, partyId: string, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const referenceId = randomUUID();
  const res = await call(mock, 'collection', 'POST', '/v1_0/requesttopay', {
    body: requestToPay(partyId, overrides),
    headers: { 'X-Reference-Id': referenceId, 'X-Callback-Url': 'https://merchant.example/cb', ...headers },
  });
  return { referenceId, ...res };
}

describe('the MTN mock as the real sandbox', () => {
  let mock: RunningMock;
  const clock = new VirtualClock(VIRTUAL_EPOCH);

  beforeAll(async () => {
    mock = await startMock('mtn-momo', { config, rules: RULES, clock, asRealSandbox: true });
  });
  afterAll(async () => {
    await mock?.close();
  });

  it('says so in its banner, with what it refuses', () => {
    expect(mock.banner()).toContain('as the real sandbox');
    expect(mock.banner()).toContain('a currency other than EUR: 500 INVALID_CURRENCY');
  });

  it('refuses a currency other than EUR with 500 INVALID_CURRENCY', async () => {
    expect(await pay(mock, '46733123400', { currency: 'GHS' })).toMatchObject({ status: 500, body: { code: 'INVALID_CURRENCY', message: 'Currency not supported.' } });
  });

  it('refuses a target environment other than sandbox with 500 NOT_ALLOWED_TARGET_ENVIRONMENT', async () => {
    expect(await pay(mock, '46733123400', {}, { 'X-Target-Environment': 'mtnghana' })).toMatchObject({ status: 500, body: { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' } });
  });

  it('refuses a callback host that is an IP address with 500 INVALID_CALLBACK_URL_HOST', async () => {
    expect(await pay(mock, '46733123400', {}, { 'X-Callback-Url': 'http://127.0.0.1:4010/cb' })).toMatchObject({ status: 500, body: { code: 'INVALID_CALLBACK_URL_HOST' } });
  });

  it('refuses a number outside its test block: a Ghana number that was not mapped', async () => {
    expect(await pay(mock, '233551234987')).toMatchObject({ status: 404, body: { code: 'PAYER_NOT_FOUND' } });
    const transfer = await call(mock, 'disbursement', 'POST', '/v1_0/transfer', {
      body: { amount: '2.00', currency: 'EUR', externalId: 'trf_test', payee: { partyIdType: 'MSISDN', partyId: '233551234987' }, payerMessage: 'x', payeeNote: 'x' },
      headers: { 'X-Reference-Id': randomUUID() },
    });
    expect(transfer).toMatchObject({ status: 404, body: { code: 'PAYEE_NOT_FOUND' } });
    expect(await call(mock, 'collection', 'GET', '/v1_0/accountholder/msisdn/233551234987/basicuserinfo')).toMatchObject({ status: 404, body: { code: 'RESOURCE_NOT_FOUND' } });
  });

  it("gives MTN's documented outcome for each test number, and success for the rest of the block, whatever the rules say", async () => {
    const expired = await pay(mock, '46733123452');
    const ongoing = await pay(mock, '46733123453');
    const other = await pay(mock, '46733123400');
    for (const accepted of [expired, ongoing, other]) expect(accepted.status).toBe(202);
    await mock.advance(5);
    const status = async (referenceId: string) => (await call(mock, 'collection', 'GET', `/v1_0/requesttopay/${referenceId}`)).body;
    expect(await status(expired.referenceId)).toMatchObject({ status: 'FAILED', reason: 'EXPIRED', currency: 'EUR', payer: { partyId: '46733123452' } });
    expect(await status(ongoing.referenceId)).toMatchObject({ status: 'PENDING' });
    expect(await status(other.referenceId)).toMatchObject({ status: 'SUCCESSFUL', amount: '2.00', currency: 'EUR' });
  });

  it('reports its balance in EUR', async () => {
    expect(await call(mock, 'collection', 'GET', '/v1_0/account/balance')).toMatchObject({ status: 200, body: { currency: 'EUR' } });
  });
});

describe('the MTN mock without --as-real-sandbox', () => {
  it('still takes Ghana numbers in GHS, and plays the scenario rules', async () => {
    const mock = await startMock('mtn-momo', { config, rules: RULES, clock: new VirtualClock(VIRTUAL_EPOCH) });
    try {
      expect((await pay(mock, '233551234987', { currency: 'GHS' })).status).toBe(202);
      const ruled = await pay(mock, '46733123400');
      await mock.advance(2);
      expect((await call(mock, 'collection', 'GET', `/v1_0/requesttopay/${ruled.referenceId}`)).body).toMatchObject({ status: 'FAILED', reason: 'NOT_ENOUGH_FUNDS' });
    } finally {
      await mock.close();
    }
  });
});
