// Every event type railyard emits (EVENT_TYPES), driven through the API one at a time and
// delivered to an endpoint subscribed to that type alone: the payload is
// {id: evt_…, type, created_at, livemode: false, data: {object}}, it verifies with the independent
// standardwebhooks package, and its object snapshot is what the API showed for that object at
// the moment of the event.
import express from 'express';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '../../src/webhooks/webhook.schemas.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const TRC20 = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const TRC20_REVIEW = 'TReviewMeP1easeReviewMeP1easeRevie';
const SELL_AMOUNT = 10_000_000; // 10 USDT
const TRC20_CONFIRM_SECONDS = 19 * 3;

interface Received {
  headers: Record<string, string>;
  rawBody: string;
}

/** Records every POST (headers and raw body) and answers 200. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const app = express();
  app.post('/hooks', express.raw({ type: () => true, limit: '1mb' }), (req, res) => {
    received.push({ headers: flatten(req.headers), rawBody: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '' });
    res.status(200).send('ok');
  });
  const server: Server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

type Obj = Record<string, unknown>;

/**
 * What a scenario leaves behind: when the event happened, and what the API showed for its object
 * then. `exact`: the snapshot is that record, field for field. Otherwise the state was passed
 * through inside one transaction and never observable on its own (a buy's created and completed,
 * a sell's deposit.confirmed): the key fields must match the record read afterwards.
 */
interface Outcome {
  at: number;
  status: string;
  expected: Obj;
  exact: boolean;
  /** Every field of the API record, for a snapshot that must have the same shape. */
  shape: Obj;
}

const now = (sb: TestSandbox) => sb.ry.clock.now();

async function quote(sb: TestSandbox, body: Obj): Promise<Obj> {
  const res = await sb.post('/api/v1/trades/quote', body);
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const buyQuote = (sb: TestSandbox) => quote(sb, { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
const sellQuote = (sb: TestSandbox) => quote(sb, { side: 'sell', asset: 'USDT', network: 'TRC20', asset_amount: SELL_AMOUNT });

async function get(sb: TestSandbox, path: string): Promise<Obj> {
  const res = await sb.get(path);
  if (res.status !== 200) throw new Error(`GET ${path} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const trade = (sb: TestSandbox, reference: unknown) => get(sb, `/api/v1/trades/${String(reference)}`);

async function buy(sb: TestSandbox, address = TRC20) {
  await sb.fund(200_000);
  const q = await buyQuote(sb);
  return sb.execute({ quote_reference: q.reference, delivery_address: address });
}

async function settledBuy(sb: TestSandbox): Promise<Obj> {
  const res = await buy(sb);
  if (res.status !== 201) throw new Error(`buy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function sell(sb: TestSandbox): Promise<Obj> {
  const res = await sb.execute({ quote_reference: (await sellQuote(sb)).reference });
  if (res.status !== 201) throw new Error(`sell failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function deposit(sb: TestSandbox, reference: unknown): Promise<void> {
  const res = await sb.post('/api/v1/sandbox/deposits', { trade_reference: reference, asset_amount: SELL_AMOUNT });
  if (res.status !== 200 && res.status !== 201) throw new Error(`deposit failed: ${res.status} ${JSON.stringify(res.body)}`);
}

async function charge(sb: TestSandbox, msisdn: string): Promise<string> {
  const res = await sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn });
  if (res.status !== 201) throw new Error(`charge failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

async function transfer(sb: TestSandbox, body: Obj): Promise<string> {
  await sb.fund(50_000);
  const res = await sb.transfer({ amount: 5_000, currency: 'GHS', ...body });
  if (res.status !== 201) throw new Error(`transfer failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

async function collection(sb: TestSandbox, customer: string): Promise<string> {
  const res = await sb.post('/v1/collections', { amount: '100.00', currency: 'GHS', channel: 'momo', customer }, { idempotencyKey: `col-${customer}` });
  if (res.status !== 201) throw new Error(`collection failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

async function payout(sb: TestSandbox, body: Obj): Promise<string> {
  await sb.fund(50_000);
  const res = await sb.post('/v1/payouts', { amount: '50.00', currency: 'GHS', ...body }, { sign: true, idempotencyKey: `matrix-po-${++payouts}` });
  if (res.status !== 201) throw new Error(`payout failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}
let payouts = 0;

async function ecgVend(sb: TestSandbox, meter: string): Promise<string> {
  await sb.fund(50_000);
  const res = await sb.post('/v1/bills', { category: 'electricity', customer: meter, amount: '50.00', currency: 'GHS' }, { sign: true, idempotencyKey: `matrix-bil-${++payouts}` });
  if (res.status !== 201) throw new Error(`bill failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

const MOMO_OK = { channel: 'momo', msisdn: '0551234987' };
const BANK_FAILS = { channel: 'bank', account_number: '1000000002', bank_code: '040100', bank_account_name: 'Yaw Asante' };

/** The state a status snapshot passed through, from the record read afterwards. */
function passedThrough(record: Obj, status: string, historyLength: number, fields: Obj = {}): Obj {
  const keep = [
    'reference',
    'object',
    'side',
    'asset',
    'network',
    'asset_amount',
    'net_fiat_amount',
    'applied_rate',
    'quote_reference',
    'delivery_address',
    'deposit_address',
    'required_confirmations',
    'livemode',
    'created_at',
  ];
  return {
    ...Object.fromEntries(keep.map((k) => [k, record[k]])),
    status,
    status_history: (record.status_history as unknown[]).slice(0, historyLength),
    ...fields,
  };
}

/** An exact outcome: the record as the API shows it now. */
const exactly = (sb: TestSandbox, status: string, record: Obj): Outcome => ({ at: now(sb), status, expected: record, exact: true, shape: record });

const SCENARIOS: Record<EventType, (sb: TestSandbox) => Promise<Outcome>> = {
  // Quotes have no GET: the record is what POST /trades/quote answered.
  'quote.created': async (sb) => exactly(sb, 'created', await buyQuote(sb)),
  'quote.expired': async (sb) => {
    const q = await buyQuote(sb);
    await sb.advance(45);
    return exactly(sb, 'expired', { ...q, status: 'expired' });
  },

  'trade.created': async (sb) => {
    const t = await trade(sb, (await settledBuy(sb)).reference);
    return { at: now(sb), status: 'created', exact: false, shape: t, expected: passedThrough(t, 'created', 1, { transaction_id: null, settled_fiat_amount: null, failure_reason: null }) };
  },
  'trade.completed': async (sb) => {
    const t = await trade(sb, (await settledBuy(sb)).reference);
    return {
      at: now(sb),
      status: 'completed',
      exact: false,
      shape: t,
      expected: passedThrough(t, 'completed', 2, { transaction_id: t.transaction_id, settled_fiat_amount: t.settled_fiat_amount, failure_reason: null }),
    };
  },
  'trade.settled': async (sb) => exactly(sb, 'settled', await trade(sb, (await settledBuy(sb)).reference)),
  'trade.reversed': async (sb) => {
    const t = await settledBuy(sb);
    const res = await sb.post(`/api/v1/sandbox/trades/${String(t.reference)}/reverse`, {});
    if (res.status !== 200) throw new Error(`reverse failed: ${res.status} ${JSON.stringify(res.body)}`);
    return exactly(sb, 'reversed', await trade(sb, t.reference));
  },
  'compliance.review_required': async (sb) => {
    const res = await buy(sb, TRC20_REVIEW);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('compliance_block');
    return exactly(sb, 'under_review', await trade(sb, res.body.error.details.order_reference));
  },
  'trade.pending_payment': async (sb) => exactly(sb, 'pending_payment', await trade(sb, (await sell(sb)).reference)),
  'trade.pending_confirmation': async (sb) => {
    const t = await sell(sb);
    await deposit(sb, t.reference);
    return exactly(sb, 'pending_confirmation', await trade(sb, t.reference));
  },
  'deposit.confirmed': async (sb) => {
    const t = await sell(sb);
    await deposit(sb, t.reference);
    await sb.advance(TRC20_CONFIRM_SECONDS);
    const after = await trade(sb, t.reference);
    expect(after.status).toBe('settled');
    return {
      at: now(sb),
      status: 'pending_confirmation',
      exact: false,
      shape: after,
      expected: passedThrough(after, 'pending_confirmation', 3, {
        transaction_id: after.transaction_id,
        deposited_amount: SELL_AMOUNT,
        confirmations: 19,
        required_confirmations: 19,
        settled_fiat_amount: null,
        failure_reason: null,
      }),
    };
  },
  'trade.failed': async (sb) => {
    const t = await sell(sb);
    await sb.advance(3_600);
    const failed = await trade(sb, t.reference);
    expect(failed.failure_reason).toBe('deposit_not_received');
    return exactly(sb, 'failed', failed);
  },

  'charge.pending': async (sb) => exactly(sb, 'pending_provider', await get(sb, `/api/v1/charges/${await charge(sb, '0551234987')}`)),
  'charge.success': async (sb) => {
    const id = await charge(sb, '0551234987');
    await sb.advance(5);
    return exactly(sb, 'success', await get(sb, `/api/v1/charges/${id}`));
  },
  'charge.failed': async (sb) => {
    const id = await charge(sb, '0551234988');
    await sb.advance(5);
    const failed = await get(sb, `/api/v1/charges/${id}`);
    expect(failed.failure_reason).toBe('insufficient_funds');
    return exactly(sb, 'failed', failed);
  },

  // 0551234990: mtn-momo times out but collects anyway and says so at 10 s; hubtel served the
  // charge (success at 5 s). The snapshot is the charge, unchanged, plus the reversed late success.
  'charge.late_success_reversed': async (sb) => {
    const id = await charge(sb, '0551234990');
    await sb.advance(10);
    const record = await get(sb, `/api/v1/charges/${id}`);
    expect(record).toMatchObject({ status: 'success', provider: 'hubtel' });
    const snapshot = { ...record, late_success: { provider: 'mtn-momo', amount: record.amount, reversed: true } };
    return exactly(sb, 'success', snapshot);
  },

  'collection.pending': async (sb) => exactly(sb, 'pending_approval', await get(sb, `/v1/collections/${await collection(sb, '0551234987')}`)),
  'collection.settled': async (sb) => {
    const id = await collection(sb, '0551234987');
    await sb.advance(5);
    return exactly(sb, 'settled', await get(sb, `/v1/collections/${id}`));
  },
  'collection.failed': async (sb) => {
    const id = await collection(sb, '0551234988');
    await sb.advance(5);
    const failed = await get(sb, `/v1/collections/${id}`);
    expect(failed.failure_reason).toBe('insufficient_funds');
    return exactly(sb, 'failed', failed);
  },
  'collection.late_success_reversed': async (sb) => {
    const id = await collection(sb, '0551234990');
    await sb.advance(10);
    const record = await get(sb, `/v1/collections/${id}`);
    expect(record).toMatchObject({ status: 'settled', provider: 'hubtel' });
    return exactly(sb, 'settled', { ...record, late_success: { provider: 'mtn-momo', amount: record.amount, reversed: true } });
  },

  // A link for one payment, paid on its hosted page: the settling payment completes it.
  'payment_link.completed': async (sb) => {
    const link = await sb.post('/v1/payment_links', { amount: '100.00', currency: 'GHS', description: 'One ticket', usage_limit: '1' }, { idempotencyKey: 'plink-once' });
    if (link.status !== 201) throw new Error(`payment link failed: ${link.status} ${JSON.stringify(link.body)}`);
    const paid = await sb.http.post(`/pay/${link.body.data.slug}/collections`).send({ channel: 'momo', customer: '0551234987', submission: 'sub_events_matrix' });
    if (paid.status !== 201) throw new Error(`paying the link failed: ${paid.status} ${JSON.stringify(paid.body)}`);
    await sb.advance(5);
    return exactly(sb, 'completed', await get(sb, `/v1/payment_links/${link.body.data.id}`));
  },

  'transfer.pending': async (sb) => exactly(sb, 'pending', await get(sb, `/api/v1/transfers/${await transfer(sb, MOMO_OK)}`)),
  'transfer.success': async (sb) => {
    const id = await transfer(sb, MOMO_OK);
    await sb.advance(5);
    return exactly(sb, 'success', await get(sb, `/api/v1/transfers/${id}`));
  },
  'transfer.failed': async (sb) => {
    const id = await transfer(sb, BANK_FAILS);
    await sb.advance(5);
    const failed = await get(sb, `/api/v1/transfers/${id}`);
    expect(failed.failure_reason).toBe('insufficient_funds');
    return exactly(sb, 'failed', failed);
  },
  'transfer.late_success_reversed': async (sb) => {
    const id = await transfer(sb, { channel: 'momo', msisdn: '0551234990' });
    await sb.advance(10);
    const record = await get(sb, `/api/v1/transfers/${id}`);
    expect(record).toMatchObject({ status: 'success', provider: 'hubtel' });
    return exactly(sb, 'success', { ...record, late_success: { provider: 'mtn-momo', amount: record.amount, reversed: true } });
  },

  'payout.pending': async (sb) => exactly(sb, 'pending', await get(sb, `/v1/payouts/${await payout(sb, MOMO_OK)}`)),
  'payout.settled': async (sb) => {
    const id = await payout(sb, MOMO_OK);
    await sb.advance(5);
    return exactly(sb, 'settled', await get(sb, `/v1/payouts/${id}`));
  },
  'payout.failed': async (sb) => {
    const { bank_account_name: account_name, ...bank } = BANK_FAILS;
    const id = await payout(sb, { ...bank, account_name });
    await sb.advance(5);
    const failed = await get(sb, `/v1/payouts/${id}`);
    expect(failed.failure_reason).toBe('insufficient_funds');
    return exactly(sb, 'failed', failed);
  },
  'payout.late_success_reversed': async (sb) => {
    const id = await payout(sb, { channel: 'momo', msisdn: '0551234990' });
    await sb.advance(10);
    const record = await get(sb, `/v1/payouts/${id}`);
    expect(record).toMatchObject({ status: 'settled', provider: 'hubtel' });
    return exactly(sb, 'settled', { ...record, late_success: { provider: 'mtn-momo', amount: record.amount, reversed: true } });
  },

  'bill.pending': async (sb) => exactly(sb, 'pending', await get(sb, `/v1/bills/${await ecgVend(sb, '01000000001')}`)),
  'bill.settled': async (sb) => {
    const id = await ecgVend(sb, '01000000001');
    await sb.advance(3); // the bills mock's sandbox vends after the default callback delay
    return exactly(sb, 'settled', await get(sb, `/v1/bills/${id}`));
  },
  'bill.failed': async (sb) => {
    const id = await ecgVend(sb, '01000000003');
    await sb.advance(3);
    const failed = await get(sb, `/v1/bills/${id}`);
    expect(failed.failure_reason).toBe('vend_failed');
    return exactly(sb, 'failed', failed);
  },
  // 01000000005: the aggregator holds the vend past the timeout (the bill fails, refunded), then
  // vends it at 10 s. The snapshot is the failed bill, unchanged, plus the reversed late success.
  'bill.late_success_reversed': async (sb) => {
    await sb.fund(50_000);
    const res = await sb.post('/v1/bills', { category: 'electricity', customer: '01000000005', amount: '50.00', currency: 'GHS' }, { sign: true, idempotencyKey: `matrix-bil-${++payouts}` });
    expect(res.status).toBe(502);
    await sb.advance(10);
    const record = await get(sb, `/v1/bills/${res.body.error.details.bill_id}`);
    expect(record).toMatchObject({ status: 'failed', failure_reason: 'provider_unavailable' });
    return exactly(sb, 'failed', { ...record, late_success: { provider: 'bills', amount: record.amount, reversed: true } });
  },
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('Every event type, delivered and verified', () => {
  it('has a scenario for each type in EVENT_TYPES and no other', () => {
    expect(Object.keys(SCENARIOS).sort()).toEqual([...EVENT_TYPES].sort());
    expect(EVENT_TYPES).toHaveLength(32);
  });

  it.each(EVENT_TYPES.map((type) => [type]))('%s: a signed delivery whose snapshot matches the API record at that moment', async (type) => {
    const sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 }, screening: { review: [TRC20_REVIEW] } } });
    closers.push(() => sb.close());
    const rx = await startReceiver();
    closers.push(() => rx.close());
    const created = await sb.post('/api/v1/webhook_endpoints', { url: rx.url, event_types: [type] });
    expect(created.status).toBe(201);
    const { id: endpointId, secret } = created.body.data as { id: string; secret: string };

    const outcome = await SCENARIOS[type](sb);
    await sb.advance(0);

    // Exactly one delivery, of this type, signed so that standardwebhooks accepts it.
    expect(rx.received).toHaveLength(1);
    const [delivery] = rx.received;
    const payload = new Webhook(secret).verify(delivery!.rawBody, delivery!.headers) as { id: string; type: string; created_at: string; livemode: boolean; data: { object: Obj } };
    expect(Object.keys(payload)).toEqual(['id', 'type', 'created_at', 'livemode', 'data']);
    expect(payload).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{20}$/),
      type,
      created_at: new Date(outcome.at).toISOString(),
      livemode: false,
      data: { object: expect.any(Object) },
    });
    expect(Object.keys(payload.data)).toEqual(['object']);
    expect(delivery!.headers['webhook-id']).toBe(payload.id);

    // The snapshot: the object as the API showed it when the event happened.
    const object = payload.data.object;
    expect(object.status).toBe(outcome.status);
    expect(object.livemode).toBe(false);
    expect(Object.keys(object).sort()).toEqual(Object.keys(outcome.shape).sort());
    if (outcome.exact) expect(object).toEqual(outcome.expected);
    else expect(object).toMatchObject(outcome.expected);

    // The same event through the API, and its delivery in the log.
    const event = await sb.get(`/api/v1/events/${payload.id}`);
    expect(event.status).toBe(200);
    expect(delivery!.rawBody).toBe(JSON.stringify(event.body.data));
    const log = await sb.get(`/api/v1/webhook_deliveries?event_id=${payload.id}`);
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({ event_type: type, endpoint_id: endpointId, status: 'delivered', attempts: 1 });
    expect(log.body.data[0].attempt_log[0]).toMatchObject({ trigger: 'automatic', http_status: 200, error: null });
  });
});
