// GET /api/v1/objects/:id/timeline: an object's whole life read back from what railyard keeps,
// for the sandbox numbers of scenarios/sandbox.yaml, end to end over real HTTP on the virtual clock.
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIO_SCHEMA } from '../../src/railyard-scenarios.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

interface Entry {
  at: string;
  kind: string;
  title: string;
  details: Record<string, any>;
}

let sb: TestSandbox;
let receiver: Server;
/** Event types whose first delivery the receiver answers 500 (it answers 200 otherwise). */
const failFirst = new Set<string>();

beforeAll(async () => {
  const app = express();
  app.post('/hooks', express.json({ type: () => true }), (req, res) => {
    const type = (req.body as { type: string }).type;
    const status = failFirst.delete(type) ? 500 : 200;
    res
      .status(status)
      .type('text/plain')
      .send(status === 200 ? 'thanks' : 'receiver is down');
  });
  receiver = createServer(app);
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  sb = await startTestSandbox();
  await sb.fund(1_000_000);
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  expect((await sb.post('/api/v1/webhook_endpoints', { url })).status).toBe(201);
});

afterAll(async () => {
  await sb.close();
  receiver.closeAllConnections();
  await new Promise((done) => receiver.close(done));
});

async function timeline(id: string): Promise<{ object_id: string; object: string; status: string; entries: Entry[] }> {
  const res = await sb.get(`/api/v1/objects/${id}/timeline`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Where the first entry of a kind (and, optionally, with a title containing some words) stands. */
function place(entries: Entry[], kind: string, words = ''): number {
  const i = entries.findIndex((e) => e.kind === kind && e.title.includes(words));
  expect(i, `${kind} ${words}`).toBeGreaterThanOrEqual(0);
  return i;
}

describe('the timeline of a charge on the failover number 0551234989', () => {
  let chargeId: string;
  let entries: Entry[];

  beforeAll(async () => {
    failFirst.add('charge.success'); // its first delivery fails, the retry succeeds
    const res = await sb.charge({ amount: 20_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' }, { idempotencyKey: 'timeline-charge-1' });
    expect(res.status).toBe(201);
    chargeId = res.body.data.id;
    await sb.advance(5); // hubtel calls back; charge.success is delivered once (500)
    await sb.advance(10); // the retry, 5 s later, is answered 200
    const t = await timeline(chargeId);
    expect(t).toMatchObject({ object_id: chargeId, object: 'charge', status: 'success' });
    entries = t.entries;
  });

  it('starts with the request and its Idempotency-Key', () => {
    expect(entries[0]).toMatchObject({ kind: 'request', title: 'POST /api/v1/charges', details: { idempotency_key: 'timeline-charge-1', method: 'POST', path: '/api/v1/charges' } });
  });

  it('shows the MTN timeout, the failover to Hubtel and Hubtel accepting', () => {
    const timeout = entries[place(entries, 'timeout')]!;
    expect(timeout.details).toMatchObject({ provider: 'mtn-momo', operation: 'collect', outcome: 'timeout' });
    expect(timeout.details.latency_ms).toEqual(expect.any(Number));
    const failover = entries[place(entries, 'failover')]!;
    expect(failover.details).toEqual({ from: 'mtn-momo', to: 'hubtel', reason: 'timeout' });
    const accepted = place(entries, 'provider_call', 'hubtel accepted');
    expect(place(entries, 'timeout')).toBeLessThan(place(entries, 'failover'));
    expect(place(entries, 'failover')).toBeLessThan(accepted);
  });

  it('shows the mock calls with the scenario rule that decided each', () => {
    const calls = entries.filter((e) => e.kind === 'mock_call' && e.details.match);
    expect(calls.map((c) => c.details.provider)).toEqual(['mtn-momo', 'hubtel']);
    for (const call of calls) {
      expect(call.details.match).toEqual({
        matched: true,
        file: expect.stringContaining('sandbox.yaml'),
        rule_index: 2,
        rule_name: 'momo number 0551234989 times out at the primary and succeeds after failover',
      });
    }
  });

  it('shows the callback, then the journal with its postings, then charge.success', () => {
    const callback = place(entries, 'callback');
    expect(entries[callback]!.details).toMatchObject({ provider: 'hubtel', status: 'success', result: 'settled' });
    const journal = place(entries, 'journal');
    const postings = entries[journal]!.details.postings as { account: string; currency: string; amount: number }[];
    expect(postings.length).toBeGreaterThanOrEqual(2);
    expect(postings.reduce((sum, p) => sum + p.amount, 0)).toBe(0);
    expect(postings.every((p) => p.currency === 'GHS' && Number.isInteger(p.amount))).toBe(true);
    const success = place(entries, 'event', 'charge.success');
    expect(callback).toBeLessThan(journal);
    expect(journal).toBeLessThan(success);
  });

  it('shows each delivery attempt of charge.success: the 500, then the 200', () => {
    const attempts = entries.filter((e) => e.kind === 'delivery_attempt' && e.title.startsWith('charge.success'));
    expect(attempts.map((a) => [a.details.attempt, a.details.http_status, a.details.response_excerpt])).toEqual([
      [1, 500, 'receiver is down'],
      [2, 200, 'thanks'],
    ]);
    expect(attempts.every((a) => typeof a.details.latency_ms === 'number')).toBe(true);
    expect(place(entries, 'event', 'charge.success')).toBeLessThan(entries.indexOf(attempts[0]!));
  });

  it('leaves out reads of the object: they change nothing', async () => {
    for (let i = 0; i < 3; i++) expect((await sb.get(`/api/v1/charges/${chargeId}`)).status).toBe(200);
    const again = (await timeline(chargeId)).entries;
    expect(again.filter((e) => e.kind === 'request').map((e) => e.title)).toEqual(['POST /api/v1/charges']);
  });

  it('is ordered by time', () => {
    const times = entries.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});

describe('the timeline of other objects', () => {
  it('a transfer: the reserve journal, the provider call, the callback and transfer.success', async () => {
    const res = await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(res.status).toBe(201);
    await sb.advance(5);
    const t = await timeline(res.body.data.id);
    expect(t).toMatchObject({ object: 'transfer', status: 'success' });
    const kinds = t.entries.map((e) => e.kind);
    expect(kinds[0]).toBe('request');
    expect(t.entries.find((e) => e.kind === 'provider_call')!.details).toMatchObject({ provider: 'mtn-momo', operation: 'payout', outcome: 'accepted' });
    expect(t.entries.find((e) => e.kind === 'callback')!.details).toMatchObject({ provider: 'mtn-momo', status: 'success', result: 'settled' });
    expect(t.entries.filter((e) => e.kind === 'journal').length).toBeGreaterThanOrEqual(1);
    expect(t.entries.filter((e) => e.kind === 'event').map((e) => e.title)).toEqual(['transfer.pending', 'transfer.success']);
  });

  it('a late success of the abandoned provider (0551234990) is shown reversed', async () => {
    const res = await sb.charge({ amount: 3_000, currency: 'GHS', channel: 'momo', msisdn: '0551234990' });
    await sb.advance(15);
    const t = await timeline(res.body.data.id);
    const late = t.entries.find((e) => e.kind === 'late_success_reversed')!;
    expect(late.details).toMatchObject({ provider: 'mtn-momo', amount: 3_000 });
    expect(t.entries.find((e) => e.kind === 'callback' && e.details.provider === 'mtn-momo')!.details.result).toBe('reversed');
    expect(t.entries.some((e) => e.kind === 'event' && e.title === 'charge.late_success_reversed')).toBe(true);
  });

  it('a /v1 card collection: the request, the OTP submitted, the settlement', async () => {
    const res = await sb.post('/v1/collections', { amount: '200.00', currency: 'GHS', channel: 'card', customer: '4000 0000 0000 3410' }, { idempotencyKey: 'timeline-col-1' });
    expect(res.status).toBe(201);
    const id = res.body.data.id as string;
    expect((await sb.post(`/v1/collections/${id}/otp`, { otp: '123456' })).status).toBe(200);
    const t = await timeline(id);
    expect(t).toMatchObject({ object: 'collection', status: 'settled' });
    expect(t.entries.filter((e) => e.kind === 'request').map((e) => e.title)).toEqual(['POST /v1/collections', `POST /v1/collections/${id}/otp`]);
    expect(t.entries.find((e) => e.kind === 'provider_call')!.details).toMatchObject({ provider: 'card-processor', outcome: 'accepted' });
    expect(t.entries.filter((e) => e.kind === 'event').map((e) => e.title)).toEqual(['collection.pending', 'collection.settled']);
    expect(JSON.stringify(t)).not.toContain('4000000000003410');
  });

  it('a trade: its quote, the request, its status changes, journals and events', async () => {
    const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 50_000 });
    expect(quote.status).toBe(201);
    const quoteTimeline = await timeline(quote.body.data.reference);
    expect(quoteTimeline.object).toBe('quote');
    expect(quoteTimeline.entries[0]).toMatchObject({ kind: 'request', title: 'POST /api/v1/trades/quote' });
    expect(quoteTimeline.entries.some((e) => e.kind === 'event' && e.title === 'quote.created')).toBe(true);

    const trade = await sb.execute({ quote_reference: quote.body.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' }, { idempotencyKey: 'timeline-trade-1' });
    expect(trade.status).toBe(201);
    await sb.advance(600);
    const t = await timeline(trade.body.data.reference);
    expect(t.object).toBe('trade');
    expect(t.entries[0]).toMatchObject({ kind: 'request', details: { idempotency_key: 'timeline-trade-1' } });
    expect(t.entries.filter((e) => e.kind === 'status').length).toBeGreaterThanOrEqual(1);
    expect(t.entries.some((e) => e.kind === 'journal')).toBe(true);
    expect(t.entries.some((e) => e.kind === 'event' && e.title.startsWith('trade.'))).toBe(true);
  });
});

describe('a charge whose callback never comes', () => {
  it('shows the status poll that settled it', async () => {
    const dropped = SCENARIO_SCHEMA.rule.parse({
      name: 'callback dropped',
      match: { msisdn: '0551234991' },
      collect: { any: { respond: 'accept', callback: { after_seconds: 5, status: 'success', drop: true } } },
    });
    const other = await startTestSandbox({}, [dropped]);
    try {
      const charge = (await other.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234991' })).body.data;
      await other.advance(61); // the first status poll runs after poll_after_seconds (60)
      const res = await other.get(`/api/v1/objects/${charge.id}/timeline`);
      expect(res.body.data.status).toBe('success');
      const entries = res.body.data.entries as Entry[];
      expect(entries.some((e) => e.kind === 'callback')).toBe(false);
      const poll = entries.find((e) => e.kind === 'poll')!;
      expect(poll).toMatchObject({ title: 'status poll of mtn-momo: success -> settled', details: { provider: 'mtn-momo', status: 'success', result: 'settled' } });
      expect(place(entries, 'poll')).toBeLessThan(place(entries, 'event', 'charge.success'));
    } finally {
      await other.close();
    }
  });
});

describe('an id of nothing', () => {
  it.each(['chg_00000000000000000000', 'trf_nothing', 'evt_1', 'whatever', 'po_'])('%s answers 404 not_found', async (id) => {
    const res = await sb.get(`/api/v1/objects/${encodeURIComponent(id)}/timeline`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: false, error: { code: 'not_found' } });
  });

  it("another environment's object answers 404", async () => {
    const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] });
    const charge = (await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).body.data;
    const res = await sb.get(`/api/v1/objects/${charge.id}/timeline`, live.body.data.key);
    expect(res.status).toBe(404);
  });
});
