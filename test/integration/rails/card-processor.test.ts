import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CARD_PROCESSOR_TEST_OTP, cardProcessorSignature, createCardProcessorMock } from '../../../src/providers/card-processor/mock.ts';
import { CardProcessorAdapter } from '../../../src/providers/card-processor/adapter.ts';
import type { RailError, CardCollectRequest, InboundCallback } from '../../../src/rails/provider-port.ts';
import type { Behaviour } from '../../../src/scenarios/scenario-schema.ts';
import type { ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { callbackReceiver, engineWorld, serve } from '../../unit/mock-engine/engine-fixture.ts';

// The card-processor wire module (on the mock engine) against its adapter, over real HTTP.

const API_KEY = 'ck_test_wire_5a1e';
const WEBHOOK_SECRET = 'whsec_wire_77d0';

interface Harness {
  adapter: CardProcessorAdapter;
  adapterWith(apiKey: string): CardProcessorAdapter;
  webhooks: InboundCallback[];
  queries: RailQuery[];
  now(): number;
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
  const mock = await serve(express().use('/mocks/card-processor', createCardProcessorMock(world.ctx, { apiKey: API_KEY, webhookSecret: WEBHOOK_SECRET })));
  closers.push(hooks.close, mock.close);
  const adapterWith = (apiKey: string) =>
    new CardProcessorAdapter(
      { baseUrl: `${mock.base}/mocks/card-processor`, apiKey, webhookSecret: WEBHOOK_SECRET },
      { selfBaseUrl: () => hooks.base, uuid: () => '00000000-0000-4000-8000-000000000000', timeoutMs: 150, clock: world.clock },
    );
  const webhooks: InboundCallback[] = [];
  const drain = () => {
    for (const r of receiver.received.splice(0)) {
      webhooks.push({ method: r.method, subpath: '/', headers: r.headers, rawBody: r.body, body: JSON.parse(r.body) });
    }
  };
  h = {
    adapter: adapterWith(API_KEY),
    adapterWith,
    webhooks,
    queries,
    now: () => world.clock.now(),
    async advance(seconds) {
      await world.scheduler.advanceBy(seconds * 1000);
      drain();
    },
    behave: (next) => {
      rule = next;
    },
    async call(method, path, body, apiKey = API_KEY) {
      const res = await fetch(`${mock.base}/mocks/card-processor${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
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
const ref = () => `col_cardwire${String(++counter).padStart(10, '0')}`;
const charge = (reference: string, card: CardCollectRequest['card']): CardCollectRequest => ({ reference, amount: 2_500, currency: 'GHS', channel: 'card', card, description: 'wire test' });
const railError = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected a RailError'),
    (e: unknown) => e as RailError,
  );

describe('card-processor: authentication', () => {
  it('refuses a wrong API key with 401 invalid_api_key, which the adapter reads as a refusal', async () => {
    const res = await h.call('GET', '/v1/charges/by-reference/x', undefined, 'ck_wrong');
    expect(res).toEqual({ status: 401, body: { error: { type: 'authentication_error', code: 'invalid_api_key', message: expect.any(String) } } });
    const error = await railError(h.adapterWith('ck_wrong').collect(charge(ref(), { number: '4084084084084081' })));
    expect(error).toMatchObject({ kind: 'rejected', detail: { httpStatus: 401, providerCode: 'invalid_api_key' } });
  });
});

describe('card-processor: the test cards', () => {
  it.each(['4084084084084081', '5555444444444440', '5060990580000000002'])('%s: processing, then a signed charge.succeeded webhook after the default delay', async (number) => {
    const reference = ref();
    const accepted = await h.adapter.collect(charge(reference, { number }));
    expect(accepted).toEqual({ providerReference: expect.stringMatching(/^ch_[0-9a-f]{24}$/) });
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'pending' });
    await h.advance(3);
    expect(h.webhooks).toHaveLength(1);
    const [webhook] = h.webhooks;
    expect(h.adapter.verifyCallback(webhook!)).toBe(true);
    expect(webhook!.body).toMatchObject({ type: 'charge.succeeded', data: { charge: { merchant_reference: reference, status: 'succeeded', card: { last4: number.slice(-4) } } } });
    expect(h.adapter.parseCallback(webhook!)).toEqual({ reference, operation: 'collect', providerReference: accepted.providerReference, outcome: { status: 'success' } });
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'success' });
  });

  it.each([
    ['4000000000009953', 'insufficient_funds'],
    ['4000000000000010', 'do_not_honour'],
    ['4000000000000069', 'expired_card'],
  ])('%s is declined at once with 402 card_declined, decline_code %s', async (number, code) => {
    const res = await h.call('POST', '/v1/charges', { merchant_reference: ref(), amount: 2_500, currency: 'GHS', card: { number } });
    expect(res).toEqual({ status: 402, body: { error: { type: 'card_error', code: 'card_declined', decline_code: code, message: expect.any(String) } } });
    const error = await railError(h.adapter.collect(charge(ref(), { number })));
    expect(error).toMatchObject({ kind: 'rejected', detail: { httpStatus: 402, providerCode: code } });
    expect(error.failsOver).toBe(false);
  });

  it('4000000000003410 requires an OTP: the right one succeeds and is reported by webhook too', async () => {
    const reference = ref();
    const accepted = await h.adapter.collect(charge(reference, { number: '4000000000003410' }));
    expect(accepted.nextAction).toEqual({ type: 'otp', message: expect.stringMatching(/one-time password/) });
    await h.advance(60);
    expect(h.webhooks).toHaveLength(0); // it waits for the OTP
    const submission = { reference, providerReference: accepted.providerReference, otp: CARD_PROCESSOR_TEST_OTP };
    expect(await h.adapter.submitOtp(submission)).toEqual({ status: 'success' });
    await h.advance(0);
    expect(h.webhooks.map((w) => (w.body as { type: string }).type)).toEqual(['charge.succeeded']);
    // Once decided, the charge takes no more OTPs.
    const again = await railError(h.adapter.submitOtp(submission));
    expect(again).toMatchObject({ kind: 'rejected', detail: { httpStatus: 409, providerCode: 'charge_not_awaiting_otp' } });
  });

  it('a wrong OTP fails the charge: invalid_otp', async () => {
    const reference = ref();
    const accepted = await h.adapter.collect(charge(reference, { number: '4000000000003410' }));
    expect(await h.adapter.submitOtp({ reference, providerReference: accepted.providerReference, otp: '000000' })).toEqual({ status: 'failed', reason: 'invalid_otp' });
    await h.advance(0);
    expect(h.adapter.parseCallback(h.webhooks[0]!)).toMatchObject({ reference, outcome: { status: 'failed', reason: 'invalid_otp' } });
  });

  it('4000000000000077 holds the request past the timeout, then reports its late success', async () => {
    const reference = ref();
    const error = await railError(h.adapter.collect(charge(reference, { number: '4000000000000077' })));
    expect(error.kind).toBe('timeout');
    expect(error.failsOver).toBe(true);
    await h.advance(9);
    expect(h.webhooks).toHaveLength(0);
    await h.advance(1);
    expect(h.adapter.parseCallback(h.webhooks[0]!)).toMatchObject({ reference, outcome: { status: 'success' } });
    // A retry of the same reference finds the charge it took.
    expect((await h.adapter.collect(charge(reference, { number: '4000000000000077' }))).providerReference).toMatch(/^ch_/);
  });

  it.each([
    ['tok_success', 'processing'],
    ['tok_otp', 'requires_otp'],
  ])('token %s charges like its card', async (token, status) => {
    const res = await h.call('POST', '/v1/charges', { merchant_reference: ref(), amount: 2_500, currency: 'GHS', card: { token } });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe(status);
  });

  it('an unknown token and an invalid number are refused with 400', async () => {
    expect((await railError(h.adapter.collect(charge(ref(), { token: 'tok_nobody' })))).detail).toMatchObject({ httpStatus: 400, providerCode: 'invalid_token' });
    expect((await railError(h.adapter.collect(charge(ref(), { number: '4084084084084082' })))).detail).toMatchObject({ httpStatus: 400, providerCode: 'invalid_card' });
  });

  it('without a card (a resumed collection), the charge it took under the reference is the answer; none is a refusal', async () => {
    const reference = ref();
    const first = await h.adapter.collect(charge(reference, { number: '4084084084084081' }));
    const { card: _card, ...withoutCard } = charge(reference, { number: '4084084084084081' });
    expect(await h.adapter.collect(withoutCard)).toEqual({ providerReference: first.providerReference });
    const unknown = await railError(h.adapter.collect({ ...withoutCard, reference: ref() }));
    expect(unknown).toMatchObject({ kind: 'rejected', detail: { providerCode: 'card_details_unavailable' } });
  });

  it('any other valid card number succeeds after the default delay', async () => {
    const reference = ref();
    await h.adapter.collect(charge(reference, { number: '4242424242424242' }));
    await h.advance(3);
    expect(h.adapter.parseCallback(h.webhooks[0]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });
});

describe('card-processor: scenarios drive it', () => {
  it('a rule matching the card number overrides the test card', async () => {
    h.behave((q) => (q.card === '4084084084084081' ? { respond: 'reject', reason: 'do_not_honour', http_status: 402 } : undefined));
    const error = await railError(h.adapter.collect(charge(ref(), { number: '4084084084084081' })));
    expect(error.detail.providerCode).toBe('do_not_honour');
    expect(h.queries.at(-1)).toMatchObject({ provider: 'card-processor', operation: 'collect', channel: 'card', card: '4084084084084081', amount: 2_500 });
  });

  it('a rule sees a token as the card', async () => {
    h.behave((q) => (q.card === 'tok_success' ? { callback: { after_seconds: 7, status: 'failed', reason: 'insufficient_funds', drop: false } } : undefined));
    const reference = ref();
    await h.adapter.collect(charge(reference, { token: 'tok_success' }));
    await h.advance(7);
    expect(h.adapter.parseCallback(h.webhooks[0]!)).toMatchObject({ reference, outcome: { status: 'failed', reason: 'insufficient_funds' } });
  });
});

describe('card-processor: webhook signatures', () => {
  const webhookOf = (rawBody: string, signature: string): InboundCallback => ({ method: 'POST', subpath: '/', headers: { 'card-processor-signature': signature }, rawBody, body: JSON.parse(rawBody) });

  it('accepts its own signature and refuses a tampered body, another secret or a stale timestamp', () => {
    const body = JSON.stringify({ type: 'charge.succeeded', data: { charge: { id: 'ch_1', merchant_reference: 'col_1', status: 'succeeded' } } });
    const t = Math.floor(h.now() / 1000);
    expect(h.adapter.verifyCallback(webhookOf(body, cardProcessorSignature(WEBHOOK_SECRET, t, body)))).toBe(true);
    expect(h.adapter.verifyCallback(webhookOf(body.replace('succeeded', 'failed'), cardProcessorSignature(WEBHOOK_SECRET, t, body)))).toBe(false);
    expect(h.adapter.verifyCallback(webhookOf(body, cardProcessorSignature('whsec_other', t, body)))).toBe(false);
    expect(h.adapter.verifyCallback(webhookOf(body, cardProcessorSignature(WEBHOOK_SECRET, t - 301, body)))).toBe(false);
  });
});

describe('card-processor: the callback behaviours of scenarios (through the engine, like every mock)', () => {
  const card = { number: '4084084084084081' };

  it('duplicate: the same webhook goes out again, byte for byte, after the delay asked', async () => {
    h.behave(() => ({ callback: { after_seconds: 2, status: 'success', drop: false, duplicate: true, duplicate_after_seconds: 3 } }));
    const reference = ref();
    await h.adapter.collect(charge(reference, card));
    await h.advance(2);
    expect(h.webhooks).toHaveLength(1);
    await h.advance(3);
    expect(h.webhooks).toHaveLength(2);
    expect(h.webhooks[1]!.rawBody).toBe(h.webhooks[0]!.rawBody);
    expect(h.adapter.parseCallback(h.webhooks[1]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });

  it('dropped: the charge settles, no webhook is sent, and a status read finds the outcome', async () => {
    h.behave(() => ({ callback: { after_seconds: 2, status: 'failed', reason: 'insufficient_funds', drop: true } }));
    const reference = ref();
    const accepted = await h.adapter.collect(charge(reference, card));
    await h.advance(60);
    expect(h.webhooks).toHaveLength(0);
    expect(await h.adapter.status({ operation: 'collect', reference, providerReference: accepted.providerReference })).toEqual({ status: 'failed', reason: 'insufficient_funds' });
  });

  it('late: the request times out, the processor took the charge after all and reports it', async () => {
    h.behave(() => ({ respond: 'timeout', callback: { after_seconds: 4, status: 'success', drop: false } }));
    const reference = ref();
    expect((await railError(h.adapter.collect(charge(reference, card)))).kind).toBe('timeout');
    await h.advance(4);
    expect(h.webhooks).toHaveLength(1);
    expect(h.adapter.parseCallback(h.webhooks[0]!)).toMatchObject({ reference, outcome: { status: 'success' } });
  });

  it("an OTP's answer settles the charge once: the settlement the scenario planned then finds it settled and sends nothing", async () => {
    h.behave(() => ({ callback: { after_seconds: 30, status: 'failed', reason: 'do_not_honour', drop: false } }));
    const reference = ref();
    const accepted = await h.adapter.collect(charge(reference, { number: '4000000000003410' }));
    expect(await h.adapter.submitOtp({ reference, providerReference: accepted.providerReference, otp: CARD_PROCESSOR_TEST_OTP })).toEqual({ status: 'success' });
    await h.advance(60);
    expect(h.webhooks.map((w) => (w.body as { type: string }).type)).toEqual(['charge.succeeded']);
  });
});
