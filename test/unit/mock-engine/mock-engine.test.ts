import { get } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Outcome, TransactionWire } from '../../../src/mocks/engine/callback-plan.ts';
import { jsonCallback } from '../../../src/mocks/engine/callback-sender.ts';
import { MockEngine } from '../../../src/mocks/engine/mock-engine.ts';
import type { CallbackPlan, Decision, ProviderBehaviour, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { callbackReceiver, engineWorld, serve } from './engine-fixture.ts';

// A made-up upstream, "acme", written the way a wire module is: it parses its body, asks the
// engine, and answers accepted in its own words. Everything else is the engine's.

interface Order {
  ref: string;
  msisdn: string;
  amount: number;
  state: 'open' | 'done' | 'failed';
  why?: string;
  callbackUrl: string;
}

const ORDERS: TransactionWire<Order> = {
  pending: (o) => o.state === 'open',
  settle: (o: Order, outcome: Outcome) => (outcome.status === 'success' ? { ...o, state: 'done' } : { ...o, state: 'failed', why: outcome.reason ?? 'E_FAILED' }),
  callback: (o) => jsonCallback(o.callbackUrl, 'POST', { ref: o.ref, state: o.state, why: o.why }),
};

/** Acme's own sandbox: 0200000001 never settles, 0200000002 fails after 9 s; any other succeeds. */
function acmeSandbox(msisdn: string): CallbackPlan | null {
  if (msisdn === '233200000001') return null;
  if (msisdn === '233200000002') return { after_seconds: 9, status: 'failed', reason: 'E_SANDBOX' };
  return { after_seconds: 3, status: 'success' };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function acme(rule: (query: RailQuery) => ProviderBehaviour | undefined = () => undefined) {
  const world = await engineWorld({ rule: (query) => (rule(query) ? ({ rule: 'test', behaviour: rule(query)! } satisfies Decision) : undefined) });
  const engine = new MockEngine(world.ctx, {
    provider: 'acme',
    refusals: {
      reject: (res, behaviour, query) => void res.status(behaviour.http_status ?? 422).json({ error: behaviour.reason ?? 'E_REFUSED', op: query.operation }),
      serverError: (res, behaviour) => void res.status(behaviour.http_status ?? 500).json({ error: 'E_INTERNAL' }),
    },
  });
  const orders = engine.book('orders', ORDERS);
  const receiver = callbackReceiver();
  const app = express();
  app.use('/cb', receiver.app);
  app.use(express.json());
  app.post('/orders', async (req, res) => {
    const { ref, msisdn, amount } = req.body as { ref: string; msisdn: string; amount: number };
    const taken = await engine.take(
      { req, res, successStatus: 201 },
      {
        book: 'orders',
        reference: ref,
        query: { operation: 'collect', channel: 'momo', msisdn, amount },
        sandbox: () => acmeSandbox(msisdn),
        create: () => ({ ref, msisdn, amount, state: 'open', callbackUrl: `${server.base}/cb/${ref}` }),
        duplicate: () => void res.status(409).json({ error: 'E_DUPLICATE' }),
      },
    );
    if (taken) res.status(201).json({ accepted: taken.ref });
  });
  app.get('/holders/:msisdn', async (req, res) => {
    const looked = await engine.lookup({ req, res, successStatus: 200 }, { operation: 'resolve', channel: 'momo', msisdn: req.params.msisdn });
    if (!looked) return;
    res.json({ name: looked.behaviour?.name ?? 'Sandbox Holder', exists: looked.behaviour?.resolves !== false });
  });
  const server = await serve(app);
  closers.push(server.close);
  const order = (ref: string, msisdn = '233240000000', timeoutMs = 2_000) =>
    fetch(`${server.base}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ref, msisdn, amount: 500 }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  const callbacks = () => receiver.received.map((r) => ({ path: r.path, body: JSON.parse(r.body) }));
  return { ...world, engine, orders, order, base: server.base, callbacks };
}

describe('the mock engine taking a collect or payout', () => {
  it('keeps the transaction, lets the wire answer accepted, and asks the rules with the provider added', async () => {
    const a = await acme();
    const res = await a.order('o1');
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ accepted: 'o1' });
    expect(await a.orders.get('o1')).toMatchObject({ state: 'open', amount: 500 });
    expect(a.queries).toEqual([{ provider: 'acme', operation: 'collect', channel: 'momo', msisdn: '233240000000', amount: 500 }]);
    await a.scheduler.advanceBy(3_000);
    expect(a.callbacks()).toEqual([{ path: '/cb/o1', body: { ref: 'o1', state: 'done' } }]);
  });

  it('answers a reference it has taken with the wire’s duplicate answer, without asking the rules again', async () => {
    const a = await acme();
    await a.order('o1');
    const again = await a.order('o1');
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: 'E_DUPLICATE' });
    expect(a.queries).toHaveLength(1);
  });

  it('takes only one of two twins that arrive together, even when latency separates the checks', async () => {
    const a = await acme(() => ({ respond: 'accept', latency_ms: 100 }));
    const [first, second] = await Promise.all([a.order('twin'), a.order('twin')]);
    expect([first.status, second.status].sort()).toEqual([201, 409]);
    expect(await a.scheduler.pending()).toMatchObject({ count: 1 });
  });

  it("falls back on the upstream's own sandbox when no rule decides", async () => {
    const a = await acme();
    await a.order('never', '233200000001');
    await a.order('fails', '233200000002');
    await a.scheduler.advanceBy(60_000);
    expect(await a.orders.get('never')).toMatchObject({ state: 'open' });
    expect(a.callbacks()).toEqual([{ path: '/cb/fails', body: { ref: 'fails', state: 'failed', why: 'E_SANDBOX' } }]);
  });

  it('lets a rule win over the sandbox; a rule without a callback plan succeeds after the default delay', async () => {
    const a = await acme(() => ({ respond: 'accept' }));
    await a.order('o1', '233200000001');
    await a.scheduler.advanceBy(3_000);
    expect(await a.orders.get('o1')).toMatchObject({ state: 'done' });
  });

  it('refuses in the wire’s words on reject and server_error, and keeps nothing', async () => {
    const a = await acme((q) => (q.msisdn === '233240000001' ? { respond: 'reject', reason: 'E_LIMIT' } : { respond: 'server_error', http_status: 503 }));
    const rejected = await a.order('r1', '233240000001');
    expect(rejected.status).toBe(422);
    expect(await rejected.json()).toEqual({ error: 'E_LIMIT', op: 'collect' });
    const broken = await a.order('r2', '233240000002');
    expect(broken.status).toBe(503);
    expect(await broken.json()).toEqual({ error: 'E_INTERNAL' });
    expect([await a.orders.has('r1'), await a.orders.has('r2')]).toEqual([false, false]);
    expect(await a.scheduler.pending()).toMatchObject({ count: 0 });
  });

  it('holds a timeout open until the client gives up; without a callback plan nothing is taken', async () => {
    const a = await acme(() => ({ respond: 'timeout' }));
    await expect(a.order('t1', undefined, 150)).rejects.toThrow();
    expect(await a.orders.has('t1')).toBe(false);
  });

  it('takes a timed-out request that has a callback planned: the caller hears nothing, the callback comes late', async () => {
    const a = await acme(() => ({ respond: 'timeout', callback: { after_seconds: 30, status: 'success' } }));
    await expect(a.order('late', undefined, 150)).rejects.toThrow();
    expect(await a.orders.get('late')).toMatchObject({ state: 'open' });
    await a.scheduler.advanceBy(30_000);
    expect(a.callbacks()).toEqual([{ path: '/cb/late', body: { ref: 'late', state: 'done' } }]);
  });

  it('answers malformed with the operation’s success status and a body no client can read', async () => {
    const a = await acme(() => ({ respond: 'malformed', extra_callbacks: [{ after_seconds: 1, status: 'success' }] }));
    const res = await a.order('m1');
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('502 Bad Gateway');
    expect(await a.orders.has('m1')).toBe(true); // extra callbacks planned: the upstream took it
  });

  it('resets the connection without an answer', async () => {
    const a = await acme(() => ({ respond: 'reset' }));
    await expect(a.order('x1')).rejects.toThrow();
    expect(await a.orders.has('x1')).toBe(false);
  });

  it('refuses a book it was never given', async () => {
    const a = await acme();
    const res = { status: () => res } as unknown as express.Response;
    await expect(
      a.engine.take(
        { req: {} as express.Request, res, successStatus: 200 },
        { book: 'refunds', reference: 'r', query: { operation: 'payout', channel: 'bank' }, create: () => ({}), duplicate: () => {} },
      ),
    ).rejects.toThrow(/no book refunds/);
  });
});

/** A GET over node:http, whose answer waits on no global timer, so faking timers holds up only the latency. */
function getJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    }).on('error', reject);
  });
}

describe('the mock engine answering a look-up', () => {
  it('hands the rule’s behaviour to the wire, or nothing when no rule decides', async () => {
    const a = await acme((q) => (q.msisdn === '233240000009' ? { respond: 'accept', resolves: false } : undefined));
    expect(await (await fetch(`${a.base}/holders/233240000009`)).json()).toEqual({ name: 'Sandbox Holder', exists: false });
    expect(await (await fetch(`${a.base}/holders/233240000008`)).json()).toEqual({ name: 'Sandbox Holder', exists: true });
    expect(a.queries.map((q) => q.operation)).toEqual(['resolve', 'resolve']);
  });

  it('answers every behaviour but accept itself', async () => {
    const a = await acme(() => ({ respond: 'server_error' }));
    const res = await fetch(`${a.base}/holders/233240000009`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'E_INTERNAL' });
  });

  it('waits out the latency first', async () => {
    const a = await acme(() => ({ respond: 'accept', latency_ms: 120, name: 'Ama Mensah' }));
    // The latency's timer is driven by the test: no real time passes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const timersSet = vi.spyOn(globalThis, 'setTimeout');
    try {
      let answered = false;
      const answer = getJson(`${a.base}/holders/233240000009`).then((body) => {
        answered = true;
        return body;
      });
      // Let the request get as far as the latency's timer.
      while (!timersSet.mock.calls.some(([, ms]) => ms === 120)) await new Promise((turn) => setImmediate(turn));
      await vi.advanceTimersByTimeAsync(119);
      expect(answered, 'no answer 119 ms in').toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await answer).toEqual({ name: 'Ama Mensah', exists: true });
    } finally {
      timersSet.mockRestore();
      vi.useRealTimers();
    }
  });
});
