// Webhook delivery end to end, over real HTTP to small receivers on 127.0.0.1: Standard Webhooks
// signatures checked by the independent `standardwebhooks` package, retries at the scheduled
// offsets on the virtual clock (500, timeout, refused connection), the delivery log, failure and
// the endpoint's failing flag, a restart in the middle of retries, redelivery, endpoint
// management and scopes, environments, secret rotation, the events API, the delivery list
// filters, RAILYARD_WEBHOOK_URL and the SSE stream.
import express from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadConfig } from '../../src/railyard-config.ts';

// ---------------------------------------------------------------------------------------------
// A receiver: records every request (headers and raw body) and answers from a programmable plan.

type Reply = number | 'hang';

interface Received {
  headers: Record<string, string>;
  rawBody: string;
}

class Receiver {
  readonly received: Received[] = [];
  /** Answer when the plan is used up. */
  fallback: Reply = 200;
  /** The response body, when not the default short text. */
  body: string | undefined;
  private readonly plan: Reply[] = [];
  private server: Server | undefined;
  private readonly hung: ServerResponse[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The next requests get these answers, in order; then `fallback`. */
  answer(...replies: Reply[]): this {
    this.plan.push(...replies);
    return this;
  }

  /** Listens on 127.0.0.1, on the port it had before if it had one. */
  async open(): Promise<this> {
    const app = express();
    app.post('/hooks', express.raw({ type: () => true, limit: '1mb' }), (req, res) => {
      this.received.push({ headers: flatten(req.headers), rawBody: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '' });
      const reply = this.plan.shift() ?? this.fallback;
      if (reply === 'hang') {
        this.hung.push(res);
        return;
      }
      if (reply >= 300 && reply < 400) res.set('location', this.url); // followed, it would be a second request
      res
        .status(reply)
        .type('text/plain')
        .send(this.body ?? (reply >= 200 && reply < 300 ? 'thanks' : `no thanks (${reply})`));
    });
    const server = createServer(app);
    await new Promise<void>((done) => server.listen(this.port, '127.0.0.1', done));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening (a later attempt finds the connection refused); `open()` again reuses the port. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hung.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }

  /** The deliveries of one event. */
  of(eventId: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === eventId);
  }

  bodies(): { id: string; type: string; livemode: boolean; data: { object: Record<string, unknown> } }[] {
    return this.received.map((r) => JSON.parse(r.rawBody));
  }

  /**
   * The event types received, each object's in the order they arrived: one object's events reach
   * an endpoint in order, different objects' go out side by side and may arrive in either order.
   */
  typesByObject(): Record<string, string[]> {
    const byObject: Record<string, string[]> = {};
    for (const body of this.bodies()) {
      const object = String(body.data.object.id ?? body.data.object.reference);
      byObject[object] ??= [];
      byObject[object].push(body.type);
    }
    return byObject;
  }
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.rawBody, r.headers);

// ---------------------------------------------------------------------------------------------
// Fixtures, all closed after each test.

const sandboxes: TestSandbox[] = [];
const receivers: Receiver[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const r of receivers.splice(0)) await r.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function sandbox(overrides: Record<string, unknown> = {}): Promise<TestSandbox> {
  const sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 } }, ...overrides });
  sandboxes.push(sb);
  return sb;
}

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().open();
  receivers.push(r);
  return r;
}

interface EndpointWithSecret {
  id: string;
  url: string;
  secret: string;
  event_types: string[] | null;
  enabled: boolean;
  failing: boolean;
  livemode: boolean;
  secret_rotating_until: string | null;
}

async function endpoint(sb: TestSandbox, body: Record<string, unknown>, key = sb.key): Promise<EndpointWithSecret> {
  const res = await sb.post('/api/v1/webhook_endpoints', body, { key });
  if (res.status !== 201) throw new Error(`create endpoint failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function issueKey(sb: TestSandbox, environment: 'test' | 'live', scopes: string[]): Promise<string> {
  const res = await sb.post('/api/v1/sandbox/keys', { environment, scopes });
  if (res.status !== 201) throw new Error(`issue key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.key;
}

/** A quote: one quote.created event at once, no rails involved. Returns the event id. */
async function quoteEvent(sb: TestSandbox, key = sb.key): Promise<string> {
  const res = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 }, { key });
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  const events = await sb.ry.outbox.forObject(sb.ry.store, res.body.data.reference);
  return events[0]!.id;
}

async function chargeId(sb: TestSandbox, msisdn = '0551234987', key = sb.key): Promise<string> {
  const res = await sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn }, { key });
  if (res.status !== 201) throw new Error(`charge failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

interface AttemptLog {
  attempt: number;
  trigger: 'automatic' | 'redelivery';
  at: string;
  url: string;
  http_status: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  attempt_log: AttemptLog[];
}

async function deliveryOf(sb: TestSandbox, eventId: string, endpointId: string): Promise<Delivery> {
  const res = await sb.get(`/api/v1/webhook_deliveries?event_id=${eventId}&endpoint_id=${endpointId}`);
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  const one = await sb.get(`/api/v1/webhook_deliveries/${res.body.data[0].id}`);
  expect(one.status).toBe(200);
  return one.body.data;
}

async function endpointState(sb: TestSandbox, id: string, key = sb.key) {
  const res = await sb.get(`/api/v1/webhook_endpoints/${id}`, key);
  expect(res.status).toBe(200);
  return res.body.data as Omit<EndpointWithSecret, 'secret'>;
}

const isoAt = (ms: number) => new Date(ms).toISOString();
const advanceMs = (sb: TestSandbox, ms: number) => sb.ry.scheduler.advanceBy(ms);
const RETRY_SCHEDULE = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

// ---------------------------------------------------------------------------------------------

describe('Signed deliveries verify with the standardwebhooks package', () => {
  it('carries webhook-id (the event id), a real-time webhook-timestamp and one v1 signature, over exactly the event JSON', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const quoteEvt = await quoteEvent(sb);
    const charge = await chargeId(sb);
    await sb.advance(0);

    const chargeEvt = (await sb.ry.outbox.forObject(sb.ry.store, charge))[0]!.id;
    // Two objects' events: each reaches the endpoint once, in whichever order they arrive (only one object's events are ordered).
    expect(rx.received.map((r) => r.headers['webhook-id']).sort()).toEqual([quoteEvt, chargeEvt].sort());
    for (const r of rx.received) {
      const eventId = r.headers['webhook-id']!;
      const event = (await sb.get(`/api/v1/events/${eventId}`)).body.data;
      expect(r.rawBody).toBe(JSON.stringify(event));
      expect(verify(ep.secret, r)).toEqual(event);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      // Receivers check the timestamp against their own clocks, not the sandbox's virtual one.
      expect(r.headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
      expect(event).toMatchObject({ id: eventId, livemode: false });
    }
  });

  it('fails verification when the body, the signature or the timestamp is changed, or with the wrong secret', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    const other = await endpoint(sb, { url: rx.url, enabled: false });
    await quoteEvent(sb);
    await sb.advance(0);
    expect(rx.received).toHaveLength(1);
    const good = rx.received[0]!;
    expect(() => verify(ep.secret, good)).not.toThrow();

    const body = { ...good, rawBody: good.rawBody.replace('"net_fiat_amount":100000', '"net_fiat_amount":100001') };
    expect(body.rawBody).not.toBe(good.rawBody);
    const [version, sig] = good.headers['webhook-signature']!.split(',');
    const flipped = (sig![0] === 'A' ? 'B' : 'A') + sig!.slice(1);
    const signature = { ...good, headers: { ...good.headers, 'webhook-signature': `${version},${flipped}` } };
    const timestamp = { ...good, headers: { ...good.headers, 'webhook-timestamp': String(Number(good.headers['webhook-timestamp']) - 1) } };
    const id = { ...good, headers: { ...good.headers, 'webhook-id': 'evt_00000000000000000000' } };

    for (const tampered of [body, signature, timestamp, id]) expect(() => verify(ep.secret, tampered)).toThrow(WebhookVerificationError);
    expect(other.secret).not.toBe(ep.secret);
    expect(() => verify(other.secret, good)).toThrow(WebhookVerificationError);
  });
});

describe('Retries on the business clock', () => {
  it('retries a 500, a timeout and a refused connection exactly at the scheduled offsets, logs each attempt, then delivers', async () => {
    const sb = await sandbox({ webhooks: { timeout_ms: 200 } });
    const rx = await receiver();
    rx.answer(500, 'hang');
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const t0 = sb.ry.clock.now();
    const eventId = await quoteEvent(sb);
    const attempts = async () => (await deliveryOf(sb, eventId, ep.id)).attempt_log.length;

    await sb.advance(0); // attempt 1: 500
    let d = await deliveryOf(sb, eventId, ep.id);
    expect(d).toMatchObject({ status: 'pending', attempts: 1, next_attempt_at: isoAt(t0 + 5_000) });

    await advanceMs(sb, 5_000 - 1);
    expect(await attempts()).toBe(1);
    await advanceMs(sb, 1); // attempt 2: the receiver hangs past the 200 ms timeout
    expect(await attempts()).toBe(2);
    expect((await deliveryOf(sb, eventId, ep.id)).next_attempt_at).toBe(isoAt(t0 + 305_000));

    await rx.close();
    await advanceMs(sb, 300_000 - 1);
    expect(await attempts()).toBe(2);
    await advanceMs(sb, 1); // attempt 3: connection refused
    expect(await attempts()).toBe(3);
    expect((await deliveryOf(sb, eventId, ep.id)).next_attempt_at).toBe(isoAt(t0 + 2_105_000));

    await rx.open(); // the same port again
    await advanceMs(sb, 1_800_000 - 1);
    expect(await attempts()).toBe(3);
    await advanceMs(sb, 1); // attempt 4: 200
    d = await deliveryOf(sb, eventId, ep.id);
    expect(d).toMatchObject({
      id: expect.stringMatching(/^wd_[0-9a-z]{20}$/),
      event_id: eventId,
      event_type: 'quote.created',
      endpoint_id: ep.id,
      status: 'delivered',
      attempts: 4,
      next_attempt_at: null,
    });

    expect(d.attempt_log.map(({ latency_ms: _, ...a }) => a)).toEqual([
      { attempt: 1, trigger: 'automatic', at: isoAt(t0), url: rx.url, http_status: 500, response_excerpt: 'no thanks (500)', error: null },
      { attempt: 2, trigger: 'automatic', at: isoAt(t0 + 5_000), url: rx.url, http_status: null, response_excerpt: null, error: 'timed out after 200 ms' },
      { attempt: 3, trigger: 'automatic', at: isoAt(t0 + 305_000), url: rx.url, http_status: null, response_excerpt: null, error: expect.stringMatching(/^connection failed/) },
      { attempt: 4, trigger: 'automatic', at: isoAt(t0 + 2_105_000), url: rx.url, http_status: 200, response_excerpt: 'thanks', error: null },
    ]);
    for (const a of d.attempt_log) {
      expect(Number.isInteger(a.latency_ms)).toBe(true);
      expect(a.latency_ms).toBeGreaterThanOrEqual(0);
    }

    // Three requests reached the receiver (the refused one never did): the same id and body, each verifying.
    expect(rx.received).toHaveLength(3);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(rx.received.map((r) => r.rawBody)).size).toBe(1);
    for (const r of rx.received) expect(() => verify(ep.secret, r)).not.toThrow();

    // Delivered: nothing more is sent, however long the clock runs.
    await sb.advance(200_000);
    expect(await attempts()).toBe(4);
    expect(rx.received).toHaveLength(3);
  });

  it('fails the delivery after the last scheduled retry and flags the endpoint failing; a later success clears the flag', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    rx.fallback = 500;
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const t0 = sb.ry.clock.now();
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    expect(rx.received).toHaveLength(1);

    let due = t0;
    for (const [i, delay] of RETRY_SCHEDULE.entries()) {
      await advanceMs(sb, delay * 1_000 - 1);
      expect(rx.received).toHaveLength(i + 1);
      expect((await endpointState(sb, ep.id)).failing).toBe(false);
      await advanceMs(sb, 1);
      due += delay * 1_000;
      expect(rx.received).toHaveLength(i + 2);
    }
    const failed = await deliveryOf(sb, eventId, ep.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 8, next_attempt_at: null });
    expect(failed.attempt_log.at(-1)).toMatchObject({ attempt: 8, at: isoAt(due), http_status: 500 });
    expect(failed.attempt_log.every((a) => a.http_status === 500 && a.trigger === 'automatic')).toBe(true);
    expect((await endpointState(sb, ep.id)).failing).toBe(true);
    expect((await sb.get('/api/v1/webhook_endpoints')).body.data.find((e: { id: string }) => e.id === ep.id).failing).toBe(true);

    await sb.advance(100_000);
    expect(rx.received).toHaveLength(8);

    rx.fallback = 200;
    const next = await quoteEvent(sb);
    await sb.advance(0);
    expect((await deliveryOf(sb, next, ep.id)).status).toBe('delivered');
    expect((await endpointState(sb, ep.id)).failing).toBe(false);
    expect((await deliveryOf(sb, eventId, ep.id)).status).toBe('failed');
  });

  it('counts a redirect as a failure (it is not followed) and keeps only the first 500 characters of a response', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    rx.answer(302, 500);
    rx.body = 'x'.repeat(2_000);
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    await sb.advance(5);
    await sb.advance(300);
    const d = await deliveryOf(sb, eventId, ep.id);
    expect(d.status).toBe('delivered');
    expect(d.attempt_log.map((a) => a.http_status)).toEqual([302, 500, 200]);
    expect(d.attempt_log.map((a) => a.response_excerpt)).toEqual(['x'.repeat(500), 'x'.repeat(500), 'x'.repeat(500)]);
    // The redirect target was never asked.
    expect(rx.received).toHaveLength(3);
  });

  it('resumes pending retries after a restart on the same database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-webhooks-'));
    dirs.push(dir);
    const db = join(dir, 'r.db');
    const rx = await receiver();
    rx.answer(500, 500);

    const first = await startTestSandbox({ db, trading: { market: { volatility_bps: 0 } } });
    let ep: EndpointWithSecret;
    let eventId: string;
    let t0: number;
    try {
      ep = await endpoint(first, { url: rx.url, event_types: ['quote.created'] });
      t0 = first.ry.clock.now();
      eventId = await quoteEvent(first);
      await first.advance(0);
      await first.advance(5);
      expect(rx.received).toHaveLength(2);
      expect((await deliveryOf(first, eventId, ep.id)).next_attempt_at).toBe(isoAt(t0 + 305_000));
    } finally {
      await first.close();
    }
    const stoppedAt = t0 + 5_000;

    const second = await sandbox({ db, virtual_start: isoAt(stoppedAt) });
    expect(await deliveryOf(second, eventId, ep.id)).toMatchObject({ status: 'pending', attempts: 2, next_attempt_at: isoAt(t0 + 305_000) });
    await advanceMs(second, 300_000 - 1);
    expect(rx.received).toHaveLength(2);
    await advanceMs(second, 1);
    expect(rx.received).toHaveLength(3);
    const d = await deliveryOf(second, eventId, ep.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(d.attempt_log.map((a) => [a.at, a.http_status])).toEqual([
      [isoAt(t0), 500],
      [isoAt(t0 + 5_000), 500],
      [isoAt(t0 + 305_000), 200],
    ]);
    for (const r of rx.received) {
      expect(r.headers['webhook-id']).toBe(eventId);
      expect(() => verify(ep.secret, r)).not.toThrow();
    }
  });
});

describe('Redelivery', () => {
  it('sends a delivered delivery again at once, logged with trigger redelivery', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    const delivered = await deliveryOf(sb, eventId, ep.id);
    expect(delivered.status).toBe('delivered');

    const res = await sb.post(`/api/v1/webhook_deliveries/${delivered.id}/redeliver`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: delivered.id, status: 'delivered', attempts: 2 });
    expect(res.body.data.attempt_log.map((a: AttemptLog) => [a.attempt, a.trigger, a.http_status])).toEqual([
      [1, 'automatic', 200],
      [2, 'redelivery', 200],
    ]);
    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.headers['webhook-id']).toBe(eventId);
    expect(rx.received[1]!.rawBody).toBe(rx.received[0]!.rawBody);
    expect(() => verify(ep.secret, rx.received[1]!)).not.toThrow();
    expect(await deliveryOf(sb, eventId, ep.id)).toEqual(res.body.data);
  });

  it('marks a failed delivery delivered when a redelivery succeeds, and clears the endpoint failing flag', async () => {
    const sb = await sandbox({ webhooks: { retry_schedule_seconds: [5] } });
    const rx = await receiver();
    rx.fallback = 503;
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    await sb.advance(5);
    const failed = await deliveryOf(sb, eventId, ep.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 2 });
    expect((await endpointState(sb, ep.id)).failing).toBe(true);

    // A redelivery that fails again is logged and changes nothing else.
    const again = await sb.post(`/api/v1/webhook_deliveries/${failed.id}/redeliver`, {});
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: 'failed', attempts: 3 });
    expect(again.body.data.attempt_log[2]).toMatchObject({ attempt: 3, trigger: 'redelivery', http_status: 503 });

    rx.fallback = 200;
    const res = await sb.post(`/api/v1/webhook_deliveries/${failed.id}/redeliver`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'delivered', attempts: 4, next_attempt_at: null });
    expect(res.body.data.attempt_log[3]).toMatchObject({ attempt: 4, trigger: 'redelivery', http_status: 200, response_excerpt: 'thanks', error: null });
    expect((await endpointState(sb, ep.id)).failing).toBe(false);
    expect(rx.received).toHaveLength(4);
    for (const r of rx.received) expect(() => verify(ep.secret, r)).not.toThrow();
  });

  it('needs the webhooks:write scope and answers 404 for an unknown delivery', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    const d = await deliveryOf(sb, eventId, ep.id);
    const readOnly = await issueKey(sb, 'test', ['read']);
    const res = await sb.post(`/api/v1/webhook_deliveries/${d.id}/redeliver`, {}, { key: readOnly });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(rx.received).toHaveLength(1);
    expect((await sb.post('/api/v1/webhook_deliveries/wd_00000000000000000000/redeliver', {})).status).toBe(404);
  });
});

describe('Endpoint management', () => {
  it('needs the webhooks:write scope to create, list, read, rotate and delete endpoints', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    const readOnly = await issueKey(sb, 'test', ['read', 'collections:write']);
    const writer = await issueKey(sb, 'test', ['webhooks:write']);

    const refused = [
      await sb.post('/api/v1/webhook_endpoints', { url: rx.url }, { key: readOnly }),
      await sb.get('/api/v1/webhook_endpoints', readOnly),
      await sb.get(`/api/v1/webhook_endpoints/${ep.id}`, readOnly),
      await sb.post(`/api/v1/webhook_endpoints/${ep.id}/rotate_secret`, {}, { key: readOnly }),
      await sb.http.delete(`/api/v1/webhook_endpoints/${ep.id}`).set('Authorization', `Bearer ${readOnly}`),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect((await sb.get('/api/v1/webhook_endpoints')).body.data.map((e: { id: string }) => e.id)).toEqual([ep.id]);

    const created = await sb.post('/api/v1/webhook_endpoints', { url: rx.url }, { key: writer });
    expect(created.status).toBe(201);
    expect((await sb.get('/api/v1/webhook_endpoints', writer)).body.data).toHaveLength(2);
    expect((await sb.http.delete(`/api/v1/webhook_endpoints/${created.body.data.id}`).set('Authorization', `Bearer ${writer}`)).status).toBe(200);
    expect((await sb.http.post('/api/v1/webhook_endpoints').send({ url: rx.url })).status).toBe(401);
  });

  it('shows the signing secret only at creation, never in GET or the list', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const res = await sb.post('/api/v1/webhook_endpoints', { url: rx.url, event_types: ['charge.success', 'charge.failed'] });
    expect(res.status).toBe(201);
    const now = isoAt(sb.ry.clock.now());
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^we_[0-9a-z]{20}$/),
      object: 'webhook_endpoint',
      url: rx.url,
      event_types: ['charge.success', 'charge.failed'],
      enabled: true,
      failing: false,
      secret_rotating_until: null,
      livemode: false,
      created_at: now,
      updated_at: now,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const { secret, ...shown } = res.body.data;
    const one = await sb.get(`/api/v1/webhook_endpoints/${shown.id}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(shown);
    const list = await sb.get('/api/v1/webhook_endpoints');
    expect(list.body.data).toEqual([shown]);
    expect(JSON.stringify(one.body)).not.toContain(secret);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('sends an endpoint only the event types it subscribed to, and every type to one without a filter', async () => {
    const sb = await sandbox();
    const all = await receiver();
    const some = await receiver();
    const epAll = await endpoint(sb, { url: all.url });
    const epSome = await endpoint(sb, { url: some.url, event_types: ['charge.success'] });
    await quoteEvent(sb);
    const charge = await chargeId(sb);
    await sb.advance(5);
    expect(Object.values(all.typesByObject()).sort()).toEqual([['charge.pending', 'charge.success'], ['quote.created']]);
    expect(all.typesByObject()[charge]).toEqual(['charge.pending', 'charge.success']);
    expect(some.bodies().map((b) => b.type)).toEqual(['charge.success']);
    for (const r of all.received) expect(() => verify(epAll.secret, r)).not.toThrow();
    expect(() => verify(epSome.secret, some.received[0]!)).not.toThrow();
    const deliveries = (await sb.get(`/api/v1/webhook_deliveries?endpoint_id=${epSome.id}`)).body.data;
    expect(deliveries.map((d: Delivery) => d.event_type)).toEqual(['charge.success']);
  });

  it('sends nothing to a disabled endpoint', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const on = await receiver();
    const res = await sb.post('/api/v1/webhook_endpoints', { url: rx.url, enabled: false });
    expect(res.status).toBe(201);
    expect(res.body.data.enabled).toBe(false);
    expect((await endpointState(sb, res.body.data.id)).enabled).toBe(false);
    await endpoint(sb, { url: on.url });
    await quoteEvent(sb);
    await chargeId(sb);
    await sb.advance(5);
    expect(on.received).toHaveLength(3);
    expect(rx.received).toHaveLength(0);
    expect((await sb.get(`/api/v1/webhook_deliveries?endpoint_id=${res.body.data.id}`)).body.data).toEqual([]);
  });

  it('sends nothing to a deleted endpoint, neither retries nor new events', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    rx.fallback = 500;
    const ep = await endpoint(sb, { url: rx.url });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    expect(rx.received).toHaveLength(1);
    expect((await deliveryOf(sb, eventId, ep.id)).status).toBe('pending');

    const del = await sb.http.delete(`/api/v1/webhook_endpoints/${ep.id}`).set('Authorization', `Bearer ${sb.key}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ id: ep.id, object: 'webhook_endpoint' });
    expect(del.body.data).not.toHaveProperty('secret');
    expect((await sb.get(`/api/v1/webhook_endpoints/${ep.id}`)).status).toBe(404);
    expect((await sb.get('/api/v1/webhook_endpoints')).body.data).toEqual([]);
    expect((await sb.http.delete(`/api/v1/webhook_endpoints/${ep.id}`).set('Authorization', `Bearer ${sb.key}`)).status).toBe(404);

    // The whole retry schedule passes, and new events happen: nothing reaches the receiver.
    await sb.advance(RETRY_SCHEDULE.reduce((a, b) => a + b, 0) + 60);
    await quoteEvent(sb);
    await chargeId(sb);
    await sb.advance(10);
    expect(rx.received).toHaveLength(1);
    expect((await sb.get(`/api/v1/webhook_deliveries?endpoint_id=${ep.id}`)).body.data.map((d: Delivery) => d.event_id)).toEqual([eventId]);
  });

  it('stops the pending retries of a deleted endpoint: no further attempt is scheduled or logged', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    rx.fallback = 500;
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const eventId = await quoteEvent(sb);
    await sb.advance(0);
    expect((await deliveryOf(sb, eventId, ep.id)).attempt_log).toHaveLength(1);
    expect((await sb.http.delete(`/api/v1/webhook_endpoints/${ep.id}`).set('Authorization', `Bearer ${sb.key}`)).status).toBe(200);

    await sb.advance(RETRY_SCHEDULE.reduce((a, b) => a + b, 0) + 60);
    const d = await deliveryOf(sb, eventId, ep.id);
    expect(d.attempt_log.map((a) => [a.attempt, a.error])).toEqual([[1, null]]);
    expect(d.next_attempt_at).toBeNull();
    expect(rx.received).toHaveLength(1);
  });

  it("keeps each environment's endpoints apart: a live endpoint gets only live events, a test endpoint only test events", async () => {
    const sb = await sandbox();
    const liveKey = await issueKey(sb, 'live', ['read', 'collections:write', 'webhooks:write']);
    const testRx = await receiver();
    const liveRx = await receiver();
    const testEp = await endpoint(sb, { url: testRx.url });
    const liveEp = await endpoint(sb, { url: liveRx.url }, liveKey);
    expect(testEp.livemode).toBe(false);
    expect(liveEp.livemode).toBe(true);

    const testCharge = await chargeId(sb);
    const liveCharge = await chargeId(sb, '0551234987', liveKey);
    await sb.advance(5);

    expect(testRx.bodies().map((b) => [b.type, b.livemode, b.data.object.id])).toEqual([
      ['charge.pending', false, testCharge],
      ['charge.success', false, testCharge],
    ]);
    expect(liveRx.bodies().map((b) => [b.type, b.livemode, b.data.object.id])).toEqual([
      ['charge.pending', true, liveCharge],
      ['charge.success', true, liveCharge],
    ]);
    for (const r of testRx.received) expect(() => verify(testEp.secret, r)).not.toThrow();
    for (const r of liveRx.received) expect(() => verify(liveEp.secret, r)).not.toThrow();

    expect((await sb.get('/api/v1/webhook_endpoints', liveKey)).body.data.map((e: { id: string }) => e.id)).toEqual([liveEp.id]);
    expect((await sb.get('/api/v1/webhook_endpoints')).body.data.map((e: { id: string }) => e.id)).toEqual([testEp.id]);
    expect((await sb.get(`/api/v1/webhook_endpoints/${liveEp.id}`)).status).toBe(404);
    expect((await sb.get(`/api/v1/webhook_endpoints/${testEp.id}`, liveKey)).status).toBe(404);
    const liveEvents = (await sb.get('/api/v1/events', liveKey)).body.data;
    expect(liveEvents.map((e: { livemode: boolean }) => e.livemode)).toEqual([true, true]);
    const liveDeliveries = (await sb.get('/api/v1/webhook_deliveries', liveKey)).body.data;
    expect(liveDeliveries.map((d: Delivery) => d.endpoint_id)).toEqual([liveEp.id, liveEp.id]);
  });

  it.each([
    ['a URL that does not parse', { url: 'not a url' }, 'url'],
    ['a URL that is not http(s)', { url: 'ftp://127.0.0.1/hooks' }, 'url'],
    ['a missing URL', {}, 'url'],
    ['an unknown event type', { url: 'http://127.0.0.1:9/hooks', event_types: ['charge.refunded'] }, 'event_types'],
    ['an empty event type list', { url: 'http://127.0.0.1:9/hooks', event_types: [] }, 'event_types'],
    ['an unknown field', { url: 'http://127.0.0.1:9/hooks', secret: 'whsec_bWluZQ==' }, 'secret'],
  ])('refuses %s with a validation error', async (_label, body, field) => {
    const sb = await sandbox();
    const res = await sb.post('/api/v1/webhook_endpoints', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field).join(' ')).toContain(field);
    expect((await sb.get('/api/v1/webhook_endpoints')).body.data).toEqual([]);
  });
});

describe('Secret rotation', () => {
  it('signs with both secrets during the grace period and only with the new one after it', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const rotatedAt = sb.ry.clock.now();
    const res = await sb.post(`/api/v1/webhook_endpoints/${ep.id}/rotate_secret`, {});
    expect(res.status).toBe(200);
    const fresh: string = res.body.data.secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(ep.secret);
    expect(res.body.data.secret_rotating_until).toBe(isoAt(rotatedAt + 86_400_000));
    const shown = await endpointState(sb, ep.id);
    expect(shown.secret_rotating_until).toBe(isoAt(rotatedAt + 86_400_000));
    expect(shown).not.toHaveProperty('secret');

    await quoteEvent(sb);
    await sb.advance(0);
    const during = rx.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => verify(fresh, during)).not.toThrow();
    expect(() => verify(ep.secret, during)).not.toThrow();

    await sb.advance(86_400 + 1);
    expect((await endpointState(sb, ep.id)).secret_rotating_until).toBeNull();
    await quoteEvent(sb);
    await sb.advance(0);
    expect(rx.received).toHaveLength(2);
    const after = rx.received[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(() => verify(fresh, after)).not.toThrow();
    expect(() => verify(ep.secret, after)).toThrow(WebhookVerificationError);
  });

  it('honours a grace period given at rotation: zero retires the old secret at once', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url, event_types: ['quote.created'] });
    const res = await sb.post(`/api/v1/webhook_endpoints/${ep.id}/rotate_secret`, { grace_seconds: 0 });
    expect(res.status).toBe(200);
    expect(res.body.data.secret_rotating_until).toBeNull();
    await quoteEvent(sb);
    await sb.advance(0);
    expect(() => verify(res.body.data.secret, rx.received[0]!)).not.toThrow();
    expect(() => verify(ep.secret, rx.received[0]!)).toThrow(WebhookVerificationError);
  });

  it('rotates with no body at all, using the configured grace period, and answers 404 for an unknown endpoint', async () => {
    const sb = await sandbox({ webhooks: { rotation_grace_seconds: 600 } });
    const rx = await receiver();
    const ep = await endpoint(sb, { url: rx.url });
    const bare = await sb.http.post(`/api/v1/webhook_endpoints/${ep.id}/rotate_secret`).set('Authorization', `Bearer ${sb.key}`);
    expect(bare.status).toBe(200);
    expect(bare.body.data.secret).toMatch(/^whsec_/);
    expect(bare.body.data.secret_rotating_until).toBe(isoAt(sb.ry.clock.now() + 600_000));
    expect((await sb.post('/api/v1/webhook_endpoints/we_00000000000000000000/rotate_secret', {})).status).toBe(404);
    expect((await sb.post(`/api/v1/webhook_endpoints/${ep.id}/rotate_secret`, { grace_seconds: -1 })).status).toBe(400);
  });
});

describe('The events API and the delivery log', () => {
  it('lists events newest first with cursor pagination and a type filter, and reads one by id', async () => {
    const sb = await sandbox();
    const q1 = await quoteEvent(sb);
    const charge = await chargeId(sb);
    const q2 = await quoteEvent(sb);
    const q3 = await quoteEvent(sb);
    await sb.advance(5);
    const [pending, success] = (await sb.ry.outbox.forObject(sb.ry.store, charge)).map((e) => e.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await sb.get(`/api/v1/events?page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.meta.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([success, q3, q2, pending, q1]);

    const quotes = await sb.get('/api/v1/events?type=quote.created');
    expect(quotes.body.data.map((e: { id: string }) => e.id)).toEqual([q3, q2, q1]);
    expect(quotes.body.data.every((e: { type: string }) => e.type === 'quote.created')).toBe(true);
    expect((await sb.get('/api/v1/events?type=charge.success')).body.data.map((e: { id: string }) => e.id)).toEqual([success]);
    expect((await sb.get('/api/v1/events?type=transfer.failed')).body.data).toEqual([]);

    const one = await sb.get(`/api/v1/events/${success}`);
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual({
      id: success,
      type: 'charge.success',
      created_at: isoAt(sb.ry.clock.now()),
      livemode: false,
      data: { object: (await sb.get(`/api/v1/charges/${charge}`)).body.data },
    });
    expect((await sb.get('/api/v1/events/evt_00000000000000000000')).status).toBe(404);
    expect((await sb.get('/api/v1/events?type=charge.refunded')).status).toBe(400);
    const liveKey = await issueKey(sb, 'live', ['read']);
    expect((await sb.get('/api/v1/events', liveKey)).body.data).toEqual([]);
    expect((await sb.get(`/api/v1/events/${success}`, liveKey)).status).toBe(404);
  });

  it('filters the delivery list by event, endpoint and status', async () => {
    const sb = await sandbox();
    const okRx = await receiver();
    const badRx = await receiver();
    badRx.fallback = 500;
    const good = await endpoint(sb, { url: okRx.url, event_types: ['quote.created'] });
    const bad = await endpoint(sb, { url: badRx.url, event_types: ['quote.created'] });
    const e1 = await quoteEvent(sb);
    const e2 = await quoteEvent(sb);
    await sb.advance(0);

    const ids = async (query: string) => {
      const res = await sb.get(`/api/v1/webhook_deliveries${query}`);
      expect(res.status).toBe(200);
      return (res.body.data as Delivery[]).map((d) => `${d.event_id === e1 ? 'e1' : 'e2'}:${d.endpoint_id === good.id ? 'good' : 'bad'}:${d.status}`);
    };
    expect((await ids('')).sort()).toEqual(['e1:bad:pending', 'e1:good:delivered', 'e2:bad:pending', 'e2:good:delivered']);
    expect((await ids(`?event_id=${e1}`)).sort()).toEqual(['e1:bad:pending', 'e1:good:delivered']);
    expect((await ids(`?endpoint_id=${good.id}`)).sort()).toEqual(['e1:good:delivered', 'e2:good:delivered']);
    expect((await ids('?status=pending')).sort()).toEqual(['e1:bad:pending', 'e2:bad:pending']);
    expect((await ids('?status=delivered')).sort()).toEqual(['e1:good:delivered', 'e2:good:delivered']);
    expect(await ids('?status=failed')).toEqual([]);
    expect(await ids(`?event_id=${e2}&endpoint_id=${bad.id}&status=pending`)).toEqual(['e2:bad:pending']);
    expect((await sb.get('/api/v1/webhook_deliveries?status=lost')).status).toBe(400);
    expect((await sb.get('/api/v1/webhook_deliveries?event_id=chg_1')).status).toBe(400);
    expect((await sb.get('/api/v1/webhook_deliveries/wd_00000000000000000000')).status).toBe(404);

    const page1 = await sb.get('/api/v1/webhook_deliveries?page_size=3');
    expect(page1.body.data).toHaveLength(3);
    const page2 = await sb.get(`/api/v1/webhook_deliveries?page_size=3&cursor=${encodeURIComponent(page1.body.meta.next_cursor)}`);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.meta.next_cursor).toBeNull();
  });
});

describe('RAILYARD_WEBHOOK_URL', () => {
  it('registers the URL for the sandbox merchant at start-up, and sandbox.webhookSecret verifies what it receives', async () => {
    const rx = await receiver();
    const dir = mkdtempSync(join(tmpdir(), 'railyard-webhooks-env-'));
    dirs.push(dir);
    const config = loadConfig({ RAILYARD_WEBHOOK_URL: rx.url }, dir);
    expect(config.webhooks.sandbox_url).toBe(rx.url);
    const sb = await sandbox({ webhooks: config.webhooks });
    const secret = sb.ry.sandbox.webhookSecret;
    expect(secret).toMatch(/^whsec_/);
    const list = (await sb.get('/api/v1/webhook_endpoints')).body.data;
    expect(list).toEqual([expect.objectContaining({ url: rx.url, event_types: null, enabled: true, livemode: false })]);
    expect(JSON.stringify(list)).not.toContain(secret!);

    const eventId = await quoteEvent(sb);
    const charge = await chargeId(sb);
    await sb.advance(5);
    expect(Object.values(rx.typesByObject()).sort()).toEqual([['charge.pending', 'charge.success'], ['quote.created']]);
    expect(rx.typesByObject()[charge]).toEqual(['charge.pending', 'charge.success']);
    expect(rx.received.find((r) => JSON.parse(r.rawBody).type === 'quote.created')!.headers['webhook-id']).toBe(eventId);
    for (const r of rx.received) expect(() => verify(secret!, r)).not.toThrow();
  });

  it('keeps the sandbox endpoint and its secret across a restart on the same database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-webhooks-'));
    dirs.push(dir);
    const db = join(dir, 'r.db');
    const rx = await receiver();
    const first = await startTestSandbox({ db, webhooks: { sandbox_url: rx.url } });
    const secret = first.ry.sandbox.webhookSecret;
    const now = first.ry.clock.now();
    await first.close();
    const second = await sandbox({ db, virtual_start: isoAt(now), webhooks: { sandbox_url: rx.url } });
    expect(second.ry.sandbox.webhookSecret).toBe(secret);
    expect((await second.get('/api/v1/webhook_endpoints')).body.data).toHaveLength(1);
    await quoteEvent(second);
    await second.advance(0);
    expect(rx.received).toHaveLength(1);
    expect(() => verify(secret!, rx.received[0]!)).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// The SSE stream: frames read off a fetch body.

interface Frame {
  id?: string;
  event?: string;
  data?: string;
}

async function openStream(sb: TestSandbox, query = '', key = sb.key) {
  const abort = new AbortController();
  const res = await fetch(`${sb.baseUrl}/api/v1/events/stream${query}`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    res,
    /** The next event frame (comments such as `: connected` are skipped). */
    async next(): Promise<Frame> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(': ');
            const [field, value] = [line.slice(0, colon), line.slice(colon + 2)];
            if (field === 'id' || field === 'event' || field === 'data') frame[field] = value;
          }
          if (frame.id || frame.event || frame.data) return frame;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close() {
      abort.abort();
    },
  };
}

interface ErrorBody {
  message: string;
  error: { code: string };
}

describe('The SSE event stream', () => {
  it('streams dispatched events as id/event/data frames', async () => {
    const sb = await sandbox();
    const stream = await openStream(sb);
    try {
      expect(stream.res.status).toBe(200);
      expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const quoteEvt = await quoteEvent(sb);
      const charge = await chargeId(sb);
      await sb.advance(5);
      const [pending, success] = (await sb.ry.outbox.forObject(sb.ry.store, charge)).map((e) => e.id);
      const frames = [await stream.next(), await stream.next(), await stream.next()];
      expect(frames.map((f) => [f.id, f.event])).toEqual([
        [quoteEvt, 'quote.created'],
        [pending, 'charge.pending'],
        [success, 'charge.success'],
      ]);
      for (const f of frames) expect(JSON.parse(f.data!)).toEqual((await sb.get(`/api/v1/events/${f.id}`)).body.data);
    } finally {
      stream.close();
    }
  });

  it('narrows the stream to the types= given, and to the key environment', async () => {
    const sb = await sandbox();
    const liveKey = await issueKey(sb, 'live', ['read', 'collections:write']);
    const stream = await openStream(sb, '?types=charge.success,transfer.failed');
    try {
      await quoteEvent(sb);
      await chargeId(sb, '0551234987', liveKey);
      const charge = await chargeId(sb);
      await sb.advance(5);
      const success = (await sb.ry.outbox.forObject(sb.ry.store, charge)).find((e) => e.type === 'charge.success')!;
      await quoteEvent(sb);
      await sb.fund(5_000);
      const transfer = await sb.transfer({ amount: 1_000, currency: 'GHS', channel: 'bank', account_number: '1000000002', bank_code: '040100', bank_account_name: 'Yaw Asante' });
      expect(transfer.status).toBe(201);
      await sb.advance(5);
      const failed = (await sb.ry.outbox.forObject(sb.ry.store, transfer.body.data.id)).find((e) => e.type === 'transfer.failed')!;
      const frames = [await stream.next(), await stream.next()];
      expect(frames.map((f) => [f.id, f.event])).toEqual([
        [success.id, 'charge.success'],
        [failed.id, 'transfer.failed'],
      ]);
      expect(JSON.parse(frames[0]!.data!)).toMatchObject({ livemode: false, data: { object: { id: charge } } });
    } finally {
      stream.close();
    }
  });

  it('answers 401 without a key, 403 without the read scope and 400 for an unknown type', async () => {
    const sb = await sandbox();
    const anonymous = await fetch(`${sb.baseUrl}/api/v1/events/stream`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as ErrorBody).error.code).toBe('unauthorized');
    const writeOnly = await issueKey(sb, 'test', ['webhooks:write']);
    const noRead = await fetch(`${sb.baseUrl}/api/v1/events/stream`, { headers: { authorization: `Bearer ${writeOnly}` } });
    expect(noRead.status).toBe(403);
    await noRead.body?.cancel();
    const unknown = await fetch(`${sb.baseUrl}/api/v1/events/stream?types=charge.success,charge.refunded`, { headers: { authorization: `Bearer ${sb.key}` } });
    expect(unknown.status).toBe(400);
    const body = (await unknown.json()) as ErrorBody;
    expect(body.error.code).toBe('validation_error');
    expect(body.message).toContain('charge.refunded');
    const empty = await fetch(`${sb.baseUrl}/api/v1/events/stream?types=`, { headers: { authorization: `Bearer ${sb.key}` } });
    expect(empty.status).toBe(400);
    await empty.body?.cancel();
  });
});
