import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDirectDebitMock, directDebitSignature } from '../../../src/providers/direct-debit/mock.ts';
import { DirectDebitAdapter } from '../../../src/providers/direct-debit/adapter.ts';
import type { RailError, BankDebitCollectRequest, InboundCallback } from '../../../src/rails/provider-port.ts';
import type { Behaviour } from '../../../src/scenarios/scenario-schema.ts';
import type { ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { callbackReceiver, engineWorld, serve } from '../../unit/mock-engine/engine-fixture.ts';

// The direct-debit wire module (on the mock engine) against its adapter, over real HTTP.

const API_KEY = 'dd_test_wire_91b2';
const SIGNING_SECRET = 'dds_wire_3c4d';

interface Harness {
  adapter: DirectDebitAdapter;
  adapterWith(apiKey: string): DirectDebitAdapter;
  callbacks: InboundCallback[];
  queries: RailQuery[];
  advance(seconds: number): Promise<void>;
  behave(rule: (query: RailQuery) => Partial<Behaviour> | undefined): void;
  call(method: string, path: string, body?: unknown, apiKey?: string): Promise<{ status: number; body: any }>;
}

let h: Harness;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  let rule: (query: RailQuery) => Partial<Behaviour> | undefined = () => undefined;
  const queries: RailQuery[] = [];
  const world = await engineWorld({
    rule: (query) => {
      queries.push(query);
      const behaviour = rule(query);
      return behaviour ? { rule: 'test', behaviour: { respond: 'accept', ...behaviour } as ProviderBehaviour } : undefined;
    },
  });
  const receiver = callbackReceiver();
  const hooks = await serve(receiver.app);
  const mock = await serve(express().use('/mocks/direct-debit', createDirectDebitMock(world.ctx, { apiKey: API_KEY, signingSecret: SIGNING_SECRET })));
  closers.push(hooks.close, mock.close);
  const adapterWith = (apiKey: string) =>
    new DirectDebitAdapter(
      { baseUrl: `${mock.base}/mocks/direct-debit`, apiKey, signingSecret: SIGNING_SECRET },
      { selfBaseUrl: () => hooks.base, uuid: () => '00000000-0000-4000-8000-000000000000', timeoutMs: 150, clock: world.clock },
    );
  const callbacks: InboundCallback[] = [];
  const drain = () => {
    for (const r of receiver.received.splice(0)) callbacks.push({ method: r.method, subpath: '/', headers: r.headers, rawBody: r.body, body: JSON.parse(r.body) });
  };
  h = {
    adapter: adapterWith(API_KEY),
    adapterWith,
    callbacks,
    queries,
    async advance(seconds) {
      await world.scheduler.advanceBy(seconds * 1000);
      drain();
    },
    behave: (next) => {
      rule = next;
    },
    async call(method, path, body, apiKey = API_KEY) {
      const res = await fetch(`${mock.base}/mocks/direct-debit${path}`, {
        method,
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      drain();
      return { status: res.status, body: await res.json() };
    },
  };
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

let counter = 0;
const ref = () => `col_ddwire${String(++counter).padStart(12, '0')}`;
const debit = (reference: string, accountNumber = '2000000001'): BankDebitCollectRequest => ({
  reference,
  amount: 5_000,
  currency: 'GHS',
  channel: 'bank_debit',
  accountNumber,
  bankCode: '040100',
  description: 'wire test',
});
const railError = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected a RailError'),
    (e: unknown) => e as RailError,
  );

describe('direct-debit: the wire', () => {
  it('refuses a wrong API key with 401 UNAUTHORISED', async () => {
    expect(await h.call('GET', '/dd/v1/debits/x', undefined, 'nope')).toEqual({ status: 401, body: { code: 'UNAUTHORISED', message: expect.any(String) } });
    expect((await railError(h.adapterWith('nope').collect(debit(ref())))).detail).toMatchObject({ httpStatus: 401, providerCode: 'UNAUTHORISED' });
  });

  it('accepts a debit as PENDING_MANDATE with a mandate prompt', async () => {
    const reference = ref();
    const res = await h.call('POST', '/dd/v1/debits', { reference, amount: 5_000, currency: 'GHS', debtorAccount: { accountNumber: '2000000001', bankCode: '040100' } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ debitId: expect.stringMatching(/^DD[0-9A-F]{16}$/), reference, status: 'PENDING_MANDATE', mandatePrompt: expect.any(String), reasonCode: null });
  });

  it('refuses a bad request with 400 INVALID_REQUEST', async () => {
    const res = await h.call('POST', '/dd/v1/debits', { reference: ref(), amount: 5_000, currency: 'GHS', debtorAccount: { accountNumber: '2000000001', bankCode: '999999' } });
    expect(res).toEqual({ status: 400, body: { code: 'INVALID_REQUEST', message: expect.any(String) } });
  });

  it('takes a retried reference as the acceptance it already gave', async () => {
    const reference = ref();
    const first = await h.adapter.collect(debit(reference));
    expect(await h.adapter.collect(debit(reference))).toEqual(first);
  });
});

describe('direct-debit: the test accounts, with no one answering the mandate', () => {
  it.each([
    ['2000000001', { status: 'success' }],
    ['5550001111', { status: 'success' }],
    ['2000000002', { status: 'failed', reason: 'MANDATE_DECLINED' }],
    ['2000000003', { status: 'failed', reason: 'INSUFFICIENT_FUNDS' }],
  ])('%s settles after the default delay: %o, by a signed callback', async (account, outcome) => {
    const reference = ref();
    const accepted = await h.adapter.collect(debit(reference, account));
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await h.advance(3);
    expect(h.callbacks).toHaveLength(1);
    expect(h.adapter.verifyCallback(h.callbacks[0]!)).toBe(true);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toEqual({ reference, operation: 'collect', providerReference: accepted.providerReference, outcome });
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual(outcome);
  });

  it('2000000004 does not exist: 404 ACCOUNT_NOT_FOUND at once, a refusal', async () => {
    const error = await railError(h.adapter.collect(debit(ref(), '2000000004')));
    expect(error).toMatchObject({ kind: 'rejected', detail: { httpStatus: 404, providerCode: 'ACCOUNT_NOT_FOUND' } });
  });
});

describe("direct-debit: the holder's answer (sandbox endpoint)", () => {
  it.each([
    ['approve', '2000000001', { status: 'success' }],
    ['decline', '2000000001', { status: 'failed', reason: 'MANDATE_DECLINED' }],
    ['approve', '2000000003', { status: 'failed', reason: 'INSUFFICIENT_FUNDS' }],
  ] as const)('%s on %s settles at once and calls back: %o', async (decision, account, outcome) => {
    const reference = ref();
    const accepted = await h.adapter.collect(debit(reference, account));
    expect(await h.adapter.decideMandate({ reference, providerReference: accepted.providerReference, decision })).toEqual(outcome);
    await h.advance(0);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ reference, outcome });
    // The planned default settlement changes nothing and sends nothing more.
    await h.advance(3);
    expect(h.callbacks).toHaveLength(1);
    const again = await railError(h.adapter.decideMandate({ reference, providerReference: accepted.providerReference, decision }));
    expect(again.detail).toMatchObject({ httpStatus: 409, providerCode: 'ALREADY_DECIDED' });
  });
});

describe('direct-debit: scenarios drive it', () => {
  it('a rule matching the account and bank code decides the debit', async () => {
    h.behave((q) => (q.account_number === '2000000001' ? { callback: { after_seconds: 20, status: 'failed', reason: 'insufficient_funds', drop: false } } : undefined));
    const reference = ref();
    await h.adapter.collect(debit(reference));
    expect(h.queries.at(-1)).toMatchObject({ provider: 'direct-debit', operation: 'collect', channel: 'bank_debit', account_number: '2000000001', bank_code: '040100' });
    await h.advance(20);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ outcome: { status: 'failed', reason: 'INSUFFICIENT_FUNDS' } });
  });

  it('timeouts and 5xx fail over; refusals do not', async () => {
    h.behave(() => ({ respond: 'timeout' }));
    expect((await railError(h.adapter.collect(debit(ref())))).kind).toBe('timeout');
    h.behave(() => ({ respond: 'server_error', http_status: 503 }));
    expect((await railError(h.adapter.collect(debit(ref())))).failsOver).toBe(true);
    h.behave(() => ({ respond: 'reject', reason: 'account_not_found' }));
    expect(await railError(h.adapter.collect(debit(ref())))).toMatchObject({ kind: 'rejected', detail: { httpStatus: 404, providerCode: 'ACCOUNT_NOT_FOUND' } });
  });
});

describe('direct-debit: callback signatures', () => {
  it('accepts its own signature and refuses a tampered body or another secret', () => {
    const body = JSON.stringify({ debitId: 'DD1', reference: 'col_1', status: 'COMPLETED', reasonCode: null, amount: 1 });
    const of = (raw: string, signature: string): InboundCallback => ({ method: 'POST', subpath: '/', headers: { 'x-dd-signature': signature }, rawBody: raw, body: JSON.parse(raw) });
    expect(h.adapter.verifyCallback(of(body, directDebitSignature(SIGNING_SECRET, body)))).toBe(true);
    expect(h.adapter.verifyCallback(of(body.replace('COMPLETED', 'DECLINED'), directDebitSignature(SIGNING_SECRET, body)))).toBe(false);
    expect(h.adapter.verifyCallback(of(body, directDebitSignature('other', body)))).toBe(false);
  });
});

describe('direct-debit: the callback behaviours of scenarios (through the engine, like every mock)', () => {
  it('duplicate: the same callback goes out again, byte for byte, after the delay asked', async () => {
    h.behave(() => ({ callback: { after_seconds: 2, status: 'success', drop: false, duplicate: true, duplicate_after_seconds: 3 } }));
    const reference = ref();
    await h.adapter.collect(debit(reference));
    await h.advance(2);
    expect(h.callbacks).toHaveLength(1);
    await h.advance(3);
    expect(h.callbacks).toHaveLength(2);
    expect(h.callbacks[1]!.rawBody).toBe(h.callbacks[0]!.rawBody);
    expect(h.adapter.parseCallback(h.callbacks[1]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });

  it('dropped: the debit settles, no callback is sent, and a status read finds the outcome', async () => {
    h.behave(() => ({ callback: { after_seconds: 2, status: 'failed', reason: 'INSUFFICIENT_FUNDS', drop: true } }));
    const reference = ref();
    const accepted = await h.adapter.collect(debit(reference));
    await h.advance(60);
    expect(h.callbacks).toHaveLength(0);
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'failed', reason: 'INSUFFICIENT_FUNDS' });
  });

  it('late: the request times out, the rail took the debit after all and reports it', async () => {
    h.behave(() => ({ respond: 'timeout', callback: { after_seconds: 4, status: 'success', drop: false } }));
    const reference = ref();
    expect((await railError(h.adapter.collect(debit(reference)))).kind).toBe('timeout');
    await h.advance(4);
    expect(h.callbacks).toHaveLength(1);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });

  it("the holder's answer settles the debit once: the settlement the scenario planned then finds it settled and sends nothing", async () => {
    h.behave(() => ({ callback: { after_seconds: 30, status: 'failed', reason: 'INSUFFICIENT_FUNDS', drop: false } }));
    const reference = ref();
    const accepted = await h.adapter.collect(debit(reference));
    expect(await h.adapter.decideMandate!({ reference, providerReference: accepted.providerReference, decision: 'approve' })).toEqual({ status: 'success' });
    await h.advance(60);
    expect(h.callbacks).toHaveLength(1);
    expect(h.adapter.parseCallback(h.callbacks[0]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });
});
