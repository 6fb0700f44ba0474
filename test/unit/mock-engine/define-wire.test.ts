import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TransactionWire } from '../../../src/mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../../src/mocks/engine/callback-sender.ts';
import { custom, defineWire, read, take } from '../../../src/mocks/engine/define-wire.ts';
import { callbackReceiver, engineWorld, serve } from './engine-fixture.ts';

// A made-up upstream, "acme", declared: its error body, its key, one book and three operations.
// Everything else (router, parsing, outage, auth, books, callbacks) is the engine's.

interface Order {
  id: string;
  ref: string;
  amount: number;
  state: 'open' | 'done' | 'failed';
  callbackUrl?: string;
}

const ORDERS: TransactionWire<Order> = {
  pending: (o) => o.state === 'open',
  settle: (o, outcome) => ({ ...o, state: outcome.status === 'success' ? 'done' : 'failed' }),
  callback: (o) => (o.callbackUrl ? jsonCallback(o.callbackUrl, 'POST', { id: o.id, state: o.state }) : undefined),
};

const acmeWire = defineWire<{ key: string }>({
  provider: 'acme',
  errors: {
    send: (res, e) => void res.status(e.status).json({ err: e.code, why: e.message, ...e.extra }),
    outage: { status: 503, code: 'DOWN', message: 'down' },
    invalid: (p) => ({ status: 400, code: 'BAD', message: p.kind === 'schema' ? `${p.path.join('.')}: ${p.message}` : p.kind === 'not_an_object' ? 'send a JSON object' : 'unreadable' }),
    notFound: { status: 404, code: 'NO_ROUTE', message: 'no such route' },
    internal: { status: 500, code: 'OOPS', message: 'oops' },
  },
  refusals: {
    reject: (res, b) => void res.status(b.http_status ?? 422).json({ err: 'REFUSED', why: b.reason }),
    serverError: (res, b) => void res.status(b.http_status ?? 500).json({ err: 'OOPS' }),
  },
  auth: (req, settings) => (req.get('x-key') === settings.key ? null : { status: 401, code: 'KEY', message: 'bad key' }),
  books: { orders: { wire: ORDERS, lookupKeys: (o: Order) => [o.id] } },
  operations: [
    take({
      method: 'post',
      path: '/orders',
      body: z.object({ ref: z.string({ error: 'ref is required' }), amount: z.number({ error: 'amount must be a number' }), callbackUrl: z.string().optional() }),
      successStatus: 201,
      take: ({ body }) => ({
        book: 'orders',
        reference: body.ref,
        query: { operation: 'collect', channel: 'momo', msisdn: '233240000000', amount: body.amount },
        sandbox: () => null,
        create: (): Order => ({ id: `ord_${body.ref}`, ref: body.ref, amount: body.amount, state: 'open', ...(body.callbackUrl ? { callbackUrl: body.callbackUrl } : {}) }),
        duplicate: (existing: Order | undefined) => ({ status: 409, code: 'DUPLICATE', message: 'seen', extra: { id: existing?.id } }),
      }),
      answer: (o: Order) => ({ id: o.id, state: o.state }),
    }),
    read({ method: 'get', path: '/orders/:id', book: 'orders', param: 'id', by: 'lookup', missing: (id) => ({ status: 404, code: 'NONE', message: `no ${id}` }), answer: (o: Order) => o }),
    custom({
      method: 'post',
      path: '/orders/:id/confirm',
      handle: async ({ params, books, answer, fail, res }) => {
        const order: Order | undefined = await books.orders!.find(params.id!);
        if (!order) return fail({ status: 404, code: 'NONE', message: 'none' });
        res.json(await answer('orders', order.ref, { status: 'success' }));
      },
    }),
  ],
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function acme() {
  const world = await engineWorld();
  const receiver = callbackReceiver();
  const hooks = await serve(receiver.app);
  const server = await serve(express().use(acmeWire(world.ctx, { key: 'k1' })));
  closers.push(hooks.close, server.close);
  const call = async (method: string, path: string, body?: unknown, key = 'k1') => {
    const res = await fetch(`${server.base}${path}`, { method, headers: { 'x-key': key }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
    return { status: res.status, body: await res.json() };
  };
  return { ...world, call, hooks, received: receiver.received };
}

describe('a declared wire (defineWire)', () => {
  it('answers an outage before it asks for credentials, and refuses a wrong key, in its own words', async () => {
    const a = await acme();
    expect(await a.call('GET', '/orders/x', undefined, 'nope')).toEqual({ status: 401, body: { err: 'KEY', why: 'bad key' } });
    await a.ctx.health.setDown('acme', true);
    expect(await a.call('GET', '/orders/x', undefined, 'nope')).toEqual({ status: 503, body: { err: 'DOWN', why: 'down' } });
  });

  it("parses the body with the operation's schema: the first problem, in the wire's error body", async () => {
    const a = await acme();
    expect(await a.call('POST', '/orders', '[1]')).toEqual({ status: 400, body: { err: 'BAD', why: 'send a JSON object' } });
    expect(await a.call('POST', '/orders', { amount: 'x' })).toEqual({ status: 400, body: { err: 'BAD', why: 'ref: ref is required' } });
    expect(await a.call('POST', '/orders', { ref: 'r1' })).toEqual({ status: 400, body: { err: 'BAD', why: 'amount: amount must be a number' } });
  });

  it('takes an operation through the engine, answers a duplicate in its words, and reads by a lookup key', async () => {
    const a = await acme();
    expect(await a.call('POST', '/orders', { ref: 'r1', amount: 5 })).toEqual({ status: 201, body: { id: 'ord_r1', state: 'open' } });
    expect(await a.call('POST', '/orders', { ref: 'r1', amount: 5 })).toEqual({ status: 409, body: { err: 'DUPLICATE', why: 'seen', id: 'ord_r1' } });
    expect(await a.call('GET', '/orders/ord_r1')).toMatchObject({ status: 200, body: { ref: 'r1', amount: 5 } });
    expect(await a.call('GET', '/orders/ord_none')).toEqual({ status: 404, body: { err: 'NONE', why: 'no ord_none' } });
  });

  it('settles an answered step through the engine: once, with one callback', async () => {
    const a = await acme();
    await a.call('POST', '/orders', { ref: 'r2', amount: 5, callbackUrl: `${a.hooks.base}/cb` });
    expect(await a.call('POST', '/orders/ord_r2/confirm')).toMatchObject({ status: 200, body: { state: 'done' } });
    expect(await a.call('POST', '/orders/ord_r2/confirm')).toMatchObject({ status: 200, body: { state: 'done' } });
    expect(a.received.map((r) => JSON.parse(r.body))).toEqual([{ id: 'ord_r2', state: 'done' }]);
  });

  it('answers a path it does not serve in its own words', async () => {
    const a = await acme();
    expect(await a.call('GET', '/elsewhere')).toEqual({ status: 404, body: { err: 'NO_ROUTE', why: 'no such route' } });
  });
});

// A second made-up upstream, "bolt", that reads its body as JSON, keys each operation on its own,
// takes its reference from a header, answers "accepted" with no body, and serves only its own
// paths (any other leaves the mock, outage or not).

const boltWire = defineWire<{ key: string }>({
  provider: 'bolt',
  bodyParser: 'json',
  errors: {
    send: (res, e) => void res.status(e.status).json({ code: e.code, message: e.message }),
    outage: { status: 503, code: 'DOWN', message: 'down' },
    invalid: (p) => ({ status: 400, code: 'BAD', message: p.kind === 'schema' ? p.message : p.kind === 'unreadable' ? `unreadable: ${p.type}` : 'no object' }),
    internal: { status: 500, code: 'OOPS', message: 'oops' },
  },
  refusals: {
    reject: (res) => void res.status(400).json({ code: 'REFUSED' }),
    serverError: (res) => void res.status(500).json({ code: 'OOPS' }),
  },
  books: { orders: { wire: ORDERS } },
  operations: [
    take({
      method: 'post',
      path: '/orders',
      // An upstream's key lookup may wait on its store.
      auth: async (req, settings) => (req.get('x-key') === settings.key ? null : { status: 401, code: 'KEY', message: 'bad key', headers: { 'www-authenticate': 'Key realm="bolt"' } }),
      reference: { header: 'x-ref', valid: (ref) => /^r\d+$/.test(ref), invalid: { status: 400, code: 'REF', message: 'x-ref must be r and digits' } },
      // What the parser made of the body, as it is: an array, a string, or undefined under another content type.
      body: z.unknown().transform((raw, check) => {
        const amount = (raw as { amount?: unknown } | undefined)?.amount;
        if (typeof amount === 'number') return { amount };
        check.addIssue({ code: 'custom', message: `amount missing from ${Array.isArray(raw) ? 'an array' : typeof raw}` });
        return z.NEVER;
      }),
      successStatus: 202,
      take: ({ body, reference }) => ({
        book: 'orders',
        reference,
        query: { operation: 'collect', channel: 'momo', msisdn: '233240000000', amount: body.amount },
        create: (): Order => ({ id: reference, ref: reference, amount: body.amount, state: 'open' }),
        duplicate: () => ({ status: 409, code: 'DUPLICATE', message: 'seen' }),
      }),
      answer: () => undefined,
    }),
    read({
      method: 'get',
      path: '/orders/:id',
      auth: (req) => (req.get('x-reader') ? null : { status: 403, code: 'READER', message: 'readers only' }),
      book: 'orders',
      param: 'id',
      by: 'reference',
      missing: () => ({ status: 404, code: 'NONE', message: 'none' }),
      answer: (o: Order) => o,
    }),
  ],
});

async function bolt() {
  const world = await engineWorld();
  const app = express().use(boltWire(world.ctx, { key: 'k1' }));
  app.use((_req, res) => void res.status(418).json({ answeredBy: 'the app' }));
  const server = await serve(app);
  closers.push(server.close);
  const call = async (method: string, path: string, options: { headers?: Record<string, string>; body?: string } = {}) => {
    const res = await fetch(`${server.base}${path}`, { method, headers: { 'content-type': 'application/json', ...options.headers }, ...(options.body === undefined ? {} : { body: options.body }) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? '' : JSON.parse(text), challenge: res.headers.get('www-authenticate') };
  };
  return { ...world, call };
}

describe('a declared wire with per-operation keys and a JSON body (defineWire)', () => {
  it("checks each operation's own credentials, answering with the headers its error carries", async () => {
    const b = await bolt();
    expect(await b.call('POST', '/orders', { headers: { 'x-key': 'nope', 'x-ref': 'r1' }, body: '{"amount":5}' })).toEqual({
      status: 401,
      body: { code: 'KEY', message: 'bad key' },
      challenge: 'Key realm="bolt"',
    });
    expect(await b.call('GET', '/orders/r1', { headers: { 'x-key': 'k1' } })).toMatchObject({ status: 403, body: { code: 'READER' } });
  });

  it('takes the reference from its header, checked before the body, and answers "accepted" with no body', async () => {
    const b = await bolt();
    const key = { 'x-key': 'k1' };
    expect(await b.call('POST', '/orders', { headers: { ...key, 'x-ref': 'bad' }, body: '[]' })).toMatchObject({ status: 400, body: { code: 'REF' } });
    expect(await b.call('POST', '/orders', { headers: { ...key, 'x-ref': 'r1' }, body: '{"amount":5}' })).toEqual({ status: 202, body: '', challenge: null });
    expect(await b.call('POST', '/orders', { headers: { ...key, 'x-ref': 'r1' }, body: '{"amount":5}' })).toMatchObject({ status: 409, body: { code: 'DUPLICATE' } });
    expect(await b.call('GET', '/orders/r1', { headers: { 'x-reader': 'yes' } })).toMatchObject({ status: 200, body: { ref: 'r1', amount: 5 } });
  });

  it("gives the schema what the JSON parser made of the body, and names the parser's error", async () => {
    const b = await bolt();
    const headers = { 'x-key': 'k1', 'x-ref': 'r2' };
    expect(await b.call('POST', '/orders', { headers, body: '[1]' })).toMatchObject({ status: 400, body: { message: 'amount missing from an array' } });
    expect(await b.call('POST', '/orders', { headers: { ...headers, 'content-type': 'text/plain' }, body: '{"amount":5}' })).toMatchObject({
      status: 400,
      body: { message: 'amount missing from undefined' },
    });
    expect(await b.call('POST', '/orders', { headers, body: '{nope' })).toMatchObject({ status: 400, body: { message: 'unreadable: entity.parse.failed' } });
  });

  it('without a route-not-found answer, serves its own paths only: any other leaves the mock, outage or not', async () => {
    const b = await bolt();
    expect(await b.call('GET', '/elsewhere')).toMatchObject({ status: 418, body: { answeredBy: 'the app' } });
    await b.ctx.health.setDown('bolt', true);
    expect(await b.call('GET', '/orders/r1')).toMatchObject({ status: 503, body: { code: 'DOWN' } });
    expect(await b.call('GET', '/elsewhere')).toMatchObject({ status: 418, body: { answeredBy: 'the app' } });
  });
});

describe("a declared wire's book built per instance (defineWire)", () => {
  it('calls back in words that read the settings and the clock of the mock instance that took the order', async () => {
    const perInstance = defineWire<{ key: string }>({
      provider: 'acme',
      errors: {
        send: (res, e) => void res.status(e.status).json(e),
        outage: { status: 503, code: 'DOWN', message: 'down' },
        invalid: () => ({ status: 400, code: 'BAD', message: 'bad' }),
        internal: { status: 500, code: 'OOPS', message: 'oops' },
      },
      refusals: { reject: (res) => void res.status(400).end(), serverError: (res) => void res.status(500).end() },
      books: {
        orders: {
          wire: (ctx, settings): TransactionWire<Order> => ({
            ...ORDERS,
            callback: (o) => jsonCallback(o.callbackUrl!, 'POST', { id: o.id, state: o.state, merchant: settings.key, at: ctx.clock.now() }),
          }),
        },
      },
      operations: [
        take({
          method: 'post',
          path: '/orders',
          body: z.object({ ref: z.string(), callbackUrl: z.string() }),
          successStatus: 201,
          take: ({ body }) => ({
            book: 'orders',
            reference: body.ref,
            query: { operation: 'collect', channel: 'momo', msisdn: '233240000000' },
            create: (): Order => ({ id: body.ref, ref: body.ref, amount: 1, state: 'open', callbackUrl: body.callbackUrl }),
            duplicate: () => ({ status: 409, code: 'DUPLICATE', message: 'seen' }),
          }),
          answer: (o: Order) => ({ id: o.id }),
        }),
      ],
    });
    const world = await engineWorld();
    const receiver = callbackReceiver();
    const hooks = await serve(receiver.app);
    const server = await serve(express().use(perInstance(world.ctx, { key: 'merchant-7' })));
    closers.push(hooks.close, server.close);
    const res = await fetch(`${server.base}/orders`, { method: 'POST', body: JSON.stringify({ ref: 'r1', callbackUrl: `${hooks.base}/cb` }) });
    expect(res.status).toBe(201);
    await world.scheduler.advanceBy(3_000);
    expect(receiver.received.map((r) => JSON.parse(r.body))).toEqual([{ id: 'r1', state: 'done', merchant: 'merchant-7', at: world.clock.now() }]);
  });
});
