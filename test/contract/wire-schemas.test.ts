import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateContracts } from '../../src/contracts/contract-generator.ts';
import { WIRE_RESPONSE_LOG_ENV, type WireResponseRecord } from '../../src/mocks/engine/wire-response-log.ts';
import { replayFile } from '../../src/replay/replay-runner.ts';
import { WIRE_SCHEMAS } from '../fixtures/wire-schemas/index.ts';
import { railContractCases } from '../support/provider-contract-cases.ts';
import { startTestSandbox } from '../support/test-sandbox.ts';
import { checkWireResponse, checkWireResponses, describeWireCheck, readWireResponseLog } from '../support/wire-schema-check.ts';

// The mocks' answers against the providers' own published descriptions (test/fixtures/wire-schemas):
// a checker that catches a broken answer, and every answer given while this file runs the flows
// of the three suites that drive the mocks: the rail suite (each adapter against its mock), the
// contract suite (generating every contract replays each scripted scenario), and the replay suite
// (its fixtures). Every test run also checks every answer of the whole run (test/support/wire-check-setup.ts).

const verified = {
  status: true,
  message: 'Verification successful',
  data: {
    id: 1,
    domain: 'test',
    status: 'success',
    reference: 'chg_1',
    receipt_number: null,
    amount: 1000,
    message: null,
    gateway_response: 'Approved',
    paid_at: '2026-01-01T00:00:05.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    channel: 'mobile_money',
    currency: 'GHS',
    ip_address: '127.0.0.1',
    metadata: '',
    log: null,
    fees: 20,
    fees_split: null,
    authorization: {
      authorization_code: 'AUTH_1',
      bin: '055XXX',
      last4: 'X987',
      exp_month: '12',
      exp_year: '9999',
      channel: 'mobile_money',
      card_type: '',
      bank: 'MTN Mobile Money',
      country_code: 'GH',
      brand: 'MTN Mobile Money',
      reusable: false,
      signature: 'SIG_1',
    },
    customer: { id: 7, first_name: null, last_name: null, email: 'a@example.com', customer_code: 'CUS_1', phone: null, metadata: null, risk_action: 'default', international_format_phone: null },
    plan: null,
    split: {},
    order_id: null,
    paidAt: '2026-01-01T00:00:05.000Z',
    createdAt: '2026-01-01T00:00:00.000Z',
    requested_amount: 1000,
    pos_transaction_data: null,
    source: null,
    fees_breakdown: null,
    connect: null,
    transaction_date: '2026-01-01T00:00:00.000Z',
    plan_object: {},
    subaccount: {},
  },
};

const answer = (provider: string, method: string, route: string | null, status: number, body: unknown): WireResponseRecord => ({
  provider,
  method,
  route,
  path: route ?? '/',
  status,
  contentType: 'application/json',
  body: body === '' ? '' : JSON.stringify(body),
});
const verify = (status: number, body: unknown) => answer('paystack', 'GET', '/transaction/verify/:reference', status, body);

describe('the wire checker', () => {
  it("passes an answer that has every field Paystack's description requires, with its type", () => {
    expect(checkWireResponse(verify(200, verified))).toBeNull();
  });

  it.each([
    ['a required field missing (customer.customer_code)', { ...verified, data: { ...verified.data, customer: { ...verified.data.customer, customer_code: undefined } } }, /customer\.customer_code/],
    ['a field of the wrong type (amount as a string)', { ...verified, data: { ...verified.data, amount: '1000' } }, /data\.amount/],
    [
      'the old mobile_money_number authorization without authorization_code and reusable',
      { ...verified, data: { ...verified.data, authorization: { channel: 'mobile_money', bank: 'MTN Mobile Money', mobile_money_number: '0551234987' } } },
      /authorization/,
    ],
    ['no data at all', { status: true, message: 'ok' }, /data/],
  ])('catches %s', (_what, body, where) => {
    const verdict = checkWireResponse(verify(200, body));
    expect(verdict).toMatchObject({ problem: expect.stringMatching(where), source: { document: expect.stringContaining('PaystackOSS/openapi') } });
  });

  it('catches an Initiate Transfer answer that expands the recipient instead of giving its id', () => {
    const base = {
      amount: 1,
      createdAt: 'x',
      currency: 'GHS',
      domain: 'test',
      failures: null,
      id: 1,
      integration: 1,
      reason: '',
      reference: 'r',
      source: 'balance',
      source_details: null,
      status: 'pending',
    };
    const transfer = { ...base, titan_code: null, transfer_code: 'TRF_1', transferred_at: null, updatedAt: 'x', transfersessionid: [], transfertrials: [], request: 1 };
    expect(checkWireResponse(answer('paystack', 'POST', '/transfer', 200, { status: true, message: 'q', data: { ...transfer, recipient: 9 } }))).toBeNull();
    expect(checkWireResponse(answer('paystack', 'POST', '/transfer', 200, { status: true, message: 'q', data: { ...transfer, recipient: { id: 9 } } }))).toMatchObject({ problem: /data\.recipient/ });
  });

  it('catches a refusal without type, code and meta.nextStep, an undocumented status, an endpoint nobody describes, and a body where MTN sends none', () => {
    expect(checkWireResponse(verify(404, { status: false, message: 'Transaction reference not found' }))).toMatchObject({ problem: /refusal: meta/ });
    expect(checkWireResponse(verify(404, { status: false, message: 'x', meta: { nextStep: 'y' }, type: 'validation_error', code: 'transaction_not_found' }))).toBeNull();
    expect(checkWireResponse(verify(201, verified))).toMatchObject({ problem: /status 201 is not the documented 200/ });
    expect(checkWireResponse(answer('paystack', 'GET', '/invented', 200, { status: true }))).toMatchObject({ problem: /no published description/ });
    expect(checkWireResponse(answer('mtn-momo', 'POST', '/collection/v1_0/requesttopay', 202, { ok: true }))).toMatchObject({ problem: /no body/ });
    expect(checkWireResponse(answer('mtn-momo', 'POST', '/collection/v1_0/requesttopay', 202, ''))).toBeNull();
    expect(checkWireResponse(answer('mtn-momo', 'POST', '/collection/token', 401, { error: 'login_failed' }))).toBeNull();
    expect(checkWireResponse(answer('mtn-momo', 'POST', '/collection/v1_0/requesttopay', 401, { error: 'login_failed' }))).toMatchObject({ problem: /refusal: code/ });
  });

  it("catches a webhook whose data is not the documented object, and one that is none of the provider's callbacks", () => {
    const webhook = (provider: string, body: unknown): WireResponseRecord => ({ ...answer(provider, 'POST', 'callback', 0, body), kind: 'callback' });
    expect(checkWireResponse(webhook('paystack', { event: 'charge.success', data: verified.data }))).toBeNull();
    expect(checkWireResponse(webhook('paystack', { event: 'charge.success', data: { reference: 'chg_1', status: 'success' } }))).toMatchObject({ problem: /charge\.success: data\./ });
    expect(checkWireResponse(webhook('mtn-momo', { status: 'SUCCESSFUL' }))).toMatchObject({ problem: /none of mtn-momo's documented callbacks/ });
  });

  it('skips answers a scenario made malformed on purpose, and counts, without checking, mocks with no published description', () => {
    const report = checkWireResponses([
      { ...verify(200, verified), body: '<html>', fault: 'malformed' },
      answer('bank-rail', 'GET', '/gip/v1/credit-transfers/:sessionId', 200, {}),
      verify(200, verified),
    ]);
    expect(report).toMatchObject({ checked: 1, faults: 1, violations: [] });
    expect([...report.undescribed.keys()]).toEqual(['bank-rail GET /gip/v1/credit-transfers/:sessionId']);
  });
});

describe("every answer the mocks give in the rail, contract and replay flows matches its provider's description", () => {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-wire-'));
  const before = process.env[WIRE_RESPONSE_LOG_ENV];
  beforeAll(() => {
    process.env[WIRE_RESPONSE_LOG_ENV] = join(dir, 'log');
  });
  afterAll(() => {
    if (before === undefined) delete process.env[WIRE_RESPONSE_LOG_ENV];
    else process.env[WIRE_RESPONSE_LOG_ENV] = before;
    rmSync(dir, { recursive: true, force: true });
  });

  it('the rail flows: each adapter against its mock (accepted, polled before and after settlement, resolved, unknown references), and the documented reads around them', async () => {
    const sb = await startTestSandbox({ providers: { paystack: { enabled: true } } }, []);
    try {
      let n = 0;
      const payouts = new Map<string, { reference: string; providerReference: string }>();
      for (const c of railContractCases()) {
        const adapter = sb.ry.router.get(c.name);
        if (!adapter) continue;
        const e = c.examples;
        const taken: { operation: 'collect' | 'payout'; reference: string; providerReference: string }[] = [];
        if (e.collect) {
          const reference = `chg_wirecheck${String(++n).padStart(12, '0')}`;
          taken.push({ operation: 'collect', reference, providerReference: (await adapter.collect(e.collect(reference))).providerReference });
        }
        if (e.payout) {
          const reference = `trf_wirecheck${String(++n).padStart(12, '0')}`;
          taken.push({ operation: 'payout', reference, providerReference: (await adapter.payout(e.payout(reference))).providerReference });
        }
        if (e.resolve) await adapter.resolveName(e.resolve);
        for (const t of taken) await adapter.status(t);
        for (const t of taken) if (t.operation === 'payout') payouts.set(c.name, t);
        await sb.advance(60);
        for (const t of taken) await adapter.status(t);
        await adapter.status({ operation: 'collect', reference: 'chg_wirechecknever', providerReference: 'chg_wirechecknever' }).catch(() => undefined);
        await sb.http.get(`/mocks/${c.name}/no-such-path`);
      }
      const paystack = (method: 'get' | 'post', path: string, body?: object) => sb.http[method](`/mocks/paystack${path}`).set('Authorization', 'Bearer sk_test_railyard_paystack').send(body);
      const vod = await paystack('post', '/charge', { email: 'a@example.com', amount: 1000, reference: 'wire_vod_1', mobile_money: { phone: '0201110050', provider: 'vod' } });
      expect(vod.body.data.status).toBe('send_otp');
      await paystack('get', '/charge/wire_vod_1');
      await paystack('post', '/charge/submit_otp', { otp: '123456', reference: 'wire_vod_1' });
      await paystack('post', '/charge/submit_otp', { otp: '123456', reference: 'wire_vod_1' });
      const listed = await paystack('get', '/transaction?perPage=2');
      await paystack('get', `/transaction/${listed.body.data[0].id}`);
      const transfer = payouts.get('paystack')!;
      const fetched = await paystack('get', `/transfer/${transfer.providerReference}`);
      expect(fetched.body.data).toMatchObject({ reference: transfer.reference, status: 'success' });
      await paystack('get', `/transfer/${fetched.body.data.id}`);
      await paystack('post', '/transfer', { source: 'balance', amount: 100, recipient: 'RCP_nobody', reference: 'wire_transfer_nobody_1', currency: 'GHS' });
      await paystack('get', '/bank?currency=GHS');
      await sb.http.get('/mocks/paystack/bank').set('Authorization', 'Bearer sk_test_wrong');

      const mtn = (method: 'get' | 'post', path: string, key = 'railyard-mtn-collection-key') => sb.http[method](`/mocks/mtn-momo${path}`).set('Ocp-Apim-Subscription-Key', key);
      const user = '7d4c1c8e-1b7a-4c55-9f5e-2f0a6a3b9c11';
      await mtn('post', '/v1_0/apiuser').set('X-Reference-Id', user).send({ providerCallbackHost: 'localhost' });
      await mtn('get', `/v1_0/apiuser/${user}`);
      const key = (await mtn('post', `/v1_0/apiuser/${user}/apikey`)).body.apiKey as string;
      for (const product of ['collection', 'disbursement'] as const) {
        const subscription = `railyard-mtn-${product}-key`;
        const token = (await mtn('post', `/${product}/token/`, subscription).auth(user, key)).body.access_token as string;
        await mtn('post', `/${product}/token/`, 'wrong-key');
        for (const path of ['/v1_0/accountholder/msisdn/233241110000/active', '/v1_0/accountholder/msisdn/233241110000/basicuserinfo', '/v1_0/account/balance']) {
          await mtn('get', `/${product}${path}`, subscription).set('Authorization', `Bearer ${token}`).set('X-Target-Environment', 'sandbox');
        }
      }
    } finally {
      await sb.close();
    }
  }, 60_000);

  it('the contract flows: generating every contract replays each scripted scenario and provider example', async () => {
    const generated = await generateContracts({ dir: join(dir, 'contracts') });
    expect(generated.length).toBeGreaterThan(0);
  }, 240_000);

  it('the replay flows: the replay suite fixtures that pass', async () => {
    const fixtures = join('test', 'fixtures', 'replay', 'pass');
    for (const file of readdirSync(fixtures).filter((f) => f.endsWith('.yaml'))) await replayFile(join(fixtures, file));
  }, 120_000);

  it('has 0 violations, and checked an answer of every endpoint it holds a description for', () => {
    const records = readWireResponseLog(join(dir, 'log'));
    const report = checkWireResponses(records);
    expect(report.violations, describeWireCheck(report)).toEqual([]);
    expect(report.checked).toBeGreaterThan(50);
    const seen = new Set(records.filter((r) => r.status < 400).map((r) => `${r.provider} ${r.method} ${r.route}`));
    const unseen = WIRE_SCHEMAS.map((s) => `${s.provider} ${s.method} ${s.route}`).filter((e) => !seen.has(e));
    expect(unseen).toEqual([]);
    const calledBack = new Set(records.filter((r) => r.kind === 'callback').map((r) => r.provider));
    expect([...calledBack].filter((p) => ['paystack', 'mtn-momo', 'hubtel'].includes(p)).sort()).toEqual(['hubtel', 'mtn-momo', 'paystack']);
  });
});
