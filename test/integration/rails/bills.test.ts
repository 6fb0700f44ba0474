import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hmacSha256Hex } from '../../../src/kernel/secrets.ts';
import { createBillsMock, SLOW_VEND_SECONDS } from '../../../src/providers/bills/mock.ts';
import { BillsAdapter, billerCode } from '../../../src/providers/bills/adapter.ts';
import { RailError, type InboundCallback, type PayoutRequest } from '../../../src/rails/provider-port.ts';
import type { Behaviour } from '../../../src/scenarios/scenario-schema.ts';
import type { ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { callbackReceiver, engineWorld, serve } from '../../unit/mock-engine/engine-fixture.ts';

// The biller-aggregator wire module (on the mock engine) against the bills adapter, over real HTTP.

const API_KEY = 'bk_test_bills_wire_5e1a';
const SIGNING = 'bills-wire-signing-secret-77';

interface Harness {
  adapter: BillsAdapter;
  callbacks: InboundCallback[];
  queries: RailQuery[];
  advance(seconds: number): Promise<void>;
  behave(rule: (query: RailQuery) => Partial<Behaviour> | undefined): void;
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
}

let h: Harness;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  let rule: (query: RailQuery) => Partial<Behaviour> | undefined = () => undefined;
  const world = await engineWorld({
    rule: (query) => {
      const behaviour = rule(query);
      return behaviour ? { rule: 'test', behaviour: { respond: 'accept', ...behaviour } as ProviderBehaviour } : undefined;
    },
  });
  const receiver = callbackReceiver();
  const hooks = await serve(receiver.app);
  const mock = await serve(express().use('/mocks/bills', createBillsMock(world.ctx, { apiKey: API_KEY, signingSecret: SIGNING })));
  closers.push(hooks.close, mock.close);
  const callbacks: InboundCallback[] = [];
  h = {
    // Its calls go to the mock; its callback_url names the receiver, as the service's own would.
    adapter: new BillsAdapter(
      { baseUrl: `${mock.base}/mocks/bills`, apiKey: API_KEY, signingSecret: SIGNING },
      { selfBaseUrl: () => hooks.base, uuid: () => '00000000-0000-4000-8000-000000000000', timeoutMs: 300, clock: world.clock },
    ),
    callbacks,
    queries: world.queries,
    async advance(seconds) {
      await world.scheduler.advanceBy(seconds * 1000);
      for (const r of receiver.received.splice(0)) {
        callbacks.push({ method: r.method, subpath: r.path.replace('/internal/callbacks/bills', '') || '/', headers: r.headers, rawBody: r.body, body: JSON.parse(r.body) });
      }
    },
    behave: (next) => {
      rule = next;
    },
    async call(method, path, body, key = API_KEY) {
      const res = await fetch(`${mock.base}/mocks/bills${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    },
  };
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

let counter = 0;
const ref = () => `bil_billswire${String(++counter).padStart(8, '0')}`;
const ecg = (reference: string, meter = '01000000001', amount = 3_000): PayoutRequest => ({
  reference,
  amount,
  currency: 'GHS',
  channel: 'bills',
  accountNumber: meter,
  description: 'wire test',
  bill: { category: 'electricity', biller: 'ECG', customer: meter },
});
const airtime = (reference: string, msisdn = '233201234567'): PayoutRequest => ({
  reference,
  amount: 500,
  currency: 'GHS',
  channel: 'bills',
  msisdn,
  network: 'TELECEL',
  description: 'wire test',
  bill: { category: 'airtime', biller: 'TELECEL', customer: msisdn },
});

describe('the bills mock', () => {
  it('refuses a call without its API key, and the adapter hears a refusal', async () => {
    expect(await h.call('GET', '/billers', undefined, 'wrong')).toEqual({ status: 401, body: { status: 'error', code: 'UNAUTHORIZED', message: 'Invalid API key' } });
  });

  it('lists its billers with their categories, customer formats and products', async () => {
    const res = await h.call('GET', '/billers');
    expect(res.body.data.map((b: { code: string }) => b.code)).toEqual(['MTN-AIRTIME', 'TELECEL-AIRTIME', 'AT-AIRTIME', 'MTN-DATA', 'TELECEL-DATA', 'AT-DATA', 'ECG-PREPAID', 'GWCL', 'DSTV', 'GOTV']);
    expect(res.body.data.find((b: { code: string }) => b.code === 'GOTV')).toEqual({
      code: 'GOTV',
      name: 'GOtv',
      category: 'tv',
      customer: 'IUC number',
      network: null,
      products: ['GOTV-SMALLIE', 'GOTV-MAX'],
    });
  });

  it.each([
    [{ biller: 'NOPE' }, 400, 'UNKNOWN_BILLER'],
    [{ biller: 'DSTV', customer: '7000000001' }, 400, 'UNKNOWN_PRODUCT'],
    [{ biller: 'ECG-PREPAID', product: 'X' }, 400, 'UNKNOWN_PRODUCT'],
    [{ amount: 12.5 }, 400, 'INVALID_REQUEST'],
    [{ customer: '123' }, 404, 'INVALID_CUSTOMER'],
  ])('refuses a malformed vend %j with %i %s', async (change, status, code) => {
    const res = await h.call('POST', '/vends', { reference: ref(), biller: 'ECG-PREPAID', customer: '01000000001', amount: 1_000, currency: 'GHS', ...change });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status: 'error', code });
  });
});

describe('the bills adapter against its mock', () => {
  it('names the biller the aggregator knows for each category', () => {
    expect(billerCode({ category: 'airtime', biller: 'AT', customer: '' })).toBe('AT-AIRTIME');
    expect(billerCode({ category: 'data', biller: 'MTN', product: 'MTN-DATA-1GB', customer: '' })).toBe('MTN-DATA');
    expect(billerCode({ category: 'electricity', biller: 'ECG', customer: '' })).toBe('ECG-PREPAID');
    expect(billerCode({ category: 'tv', biller: 'GOTV', customer: '' })).toBe('GOTV');
  });

  it('vends ECG prepaid: accepted with a vend id, then a signed callback and the status both carry the token and units', async () => {
    const reference = ref();
    const accepted = await h.adapter.payout(ecg(reference));
    expect(accepted.providerReference).toMatch(/^VND[0-9A-F]{16}$/);
    expect(await h.adapter.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await h.advance(3);
    expect(h.callbacks).toHaveLength(1);
    const callback = h.callbacks[0]!;
    expect(callback.headers['x-bills-signature']).toBe(hmacSha256Hex(SIGNING, callback.rawBody));
    expect(h.adapter.verifyCallback(callback)).toBe(true);
    const parsed = h.adapter.parseCallback(callback);
    expect(parsed).toMatchObject({ reference, operation: 'payout', providerReference: accepted.providerReference, outcome: { status: 'success', receipt: { units: '20.0 kWh' } } });
    const outcome = await h.adapter.status({ operation: 'payout', reference, providerReference: accepted.providerReference });
    expect(outcome).toEqual(parsed.outcome);
    expect(parsed.outcome.status === 'success' && parsed.outcome.receipt?.token).toMatch(/^\d{4}(-\d{4}){4}$/);
  });

  it('tells the scenarios a vend is a payout on channel bills, by number or by meter', async () => {
    await h.adapter.payout(airtime(ref()));
    await h.adapter.payout(ecg(ref()));
    expect(h.queries).toEqual([
      { provider: 'bills', operation: 'payout', channel: 'bills', msisdn: '233201234567', network: 'TELECEL', amount: 500 },
      { provider: 'bills', operation: 'payout', channel: 'bills', account_number: '01000000001', amount: 3_000 },
    ]);
  });

  it('refuses an unknown meter (ending in 2) at once: a rejection with INVALID_CUSTOMER, no failover', async () => {
    const err = await h.adapter.payout(ecg(ref(), '01000000002')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RailError);
    expect(err).toMatchObject({ kind: 'rejected', detail: { httpStatus: 404, providerCode: 'INVALID_CUSTOMER' } });
  });

  it('reports a vend that fails after acceptance (ending in 3) as VEND_FAILED', async () => {
    const reference = ref();
    await h.adapter.payout(ecg(reference, '01000000003'));
    await h.advance(3);
    expect(h.adapter.parseCallback(h.callbacks[0]!).outcome).toEqual({ status: 'failed', reason: 'VEND_FAILED' });
  });

  it(`finishes a slow vend (ending in 4) after ${SLOW_VEND_SECONDS} s`, async () => {
    const reference = ref();
    const accepted = await h.adapter.payout(ecg(reference, '01000000004'));
    await h.advance(SLOW_VEND_SECONDS - 1);
    expect(await h.adapter.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await h.advance(1);
    expect((await h.adapter.status({ operation: 'payout', reference, providerReference: accepted.providerReference })).status).toBe('success');
  });

  it('reads a duplicate reference as the earlier acceptance: the same vend, not a second one', async () => {
    const reference = ref();
    const first = await h.adapter.payout(ecg(reference));
    const again = await h.adapter.payout(ecg(reference));
    expect(again).toEqual(first);
  });

  it('follows a scenario rule: a refusal in its own words, and a server error it fails over on', async () => {
    h.behave(() => ({ respond: 'reject', reason: 'INVALID_CUSTOMER' }));
    await expect(h.adapter.payout(ecg(ref()))).rejects.toMatchObject({ kind: 'rejected', detail: { providerCode: 'INVALID_CUSTOMER' } });
    h.behave(() => ({ respond: 'server_error' }));
    await expect(h.adapter.payout(ecg(ref()))).rejects.toMatchObject({ kind: 'server', detail: { httpStatus: 500, providerCode: 'SYSTEM_ERROR' } });
  });

  it('refuses a callback whose signature does not match, and one it cannot read', () => {
    const rawBody = JSON.stringify({ event: 'vend.successful', data: { reference: 'bil_x' } });
    const forged: InboundCallback = { method: 'POST', subpath: '/', headers: { 'x-bills-signature': 'ab'.repeat(32) }, rawBody, body: JSON.parse(rawBody) };
    expect(h.adapter.verifyCallback(forged)).toBe(false);
    expect(() => h.adapter.parseCallback({ ...forged, body: { event: 'vend.lost', data: {} } })).toThrow(RailError);
  });
});
