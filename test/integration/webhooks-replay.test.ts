// Replaying failed webhook deliveries for an endpoint (POST /api/v1/webhook_endpoints/:id/replay_failed)
// and disabling / enabling an endpoint, against a real receiver on 127.0.0.1 that fails, then recovers.
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

/** Answers every POST with `status`, which a test changes to make it fail or recover. */
class Receiver {
  status = 500;
  readonly ids: string[] = [];
  private server: Server | undefined;
  url = '';

  async open(): Promise<this> {
    const app = express();
    app.post('/hooks', express.raw({ type: () => true }), (req, res) => {
      this.ids.push(String(req.headers['webhook-id']));
      res
        .status(this.status)
        .type('text/plain')
        .send(this.status < 300 ? 'ok' : 'down for maintenance');
    });
    this.server = createServer(app);
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}

let sb: TestSandbox;
let rx: Receiver;

beforeEach(async () => {
  // No automatic retries: a delivery fails for good on its first failed attempt.
  sb = await startTestSandbox({ webhooks: { retry_schedule_seconds: [] }, trading: { market: { volatility_bps: 0 } } });
  rx = await new Receiver().open();
});
afterEach(async () => {
  await sb?.close();
  await rx?.close();
});

async function endpoint(url: string): Promise<string> {
  const res = await sb.post('/api/v1/webhook_endpoints', { url, event_types: ['quote.created'] });
  return res.body.data.id;
}

/** One quote.created event, delivered (or not) by the next scheduler tick. */
async function quoteEvent(): Promise<void> {
  const res = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  await sb.advance(0);
}

const deliveries = async (endpointId: string) =>
  (await sb.get(`/api/v1/webhook_deliveries?endpoint_id=${endpointId}`)).body.data as { id: string; status: string; created_at: string; attempt_log: { trigger: string; http_status: number }[] }[];
const replay = (endpointId: string, body: unknown = {}) => sb.post(`/api/v1/webhook_endpoints/${endpointId}/replay_failed`, body);

describe('POST /api/v1/webhook_endpoints/:id/replay_failed', () => {
  it('redelivers every failed delivery once after the receiver recovers, and then there is nothing left to replay', async () => {
    const ep = await endpoint(rx.url);
    await quoteEvent();
    await quoteEvent();
    const failed = await deliveries(ep);
    expect(failed.map((d) => d.status)).toEqual(['failed', 'failed']);
    expect(rx.ids).toHaveLength(2);

    rx.status = 200;
    const res = await replay(ep);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ endpoint_id: ep, redelivered: 2, deliveries: failed.map((d) => d.id).reverse(), more: false });
    expect(rx.ids).toHaveLength(4);
    for (const d of await deliveries(ep)) {
      expect(d.status).toBe('delivered');
      expect(d.attempt_log.map((a) => [a.trigger, a.http_status])).toEqual([
        ['automatic', 500],
        ['redelivery', 200],
      ]);
    }
    expect((await sb.get(`/api/v1/webhook_endpoints/${ep}`)).body.data.failing).toBe(false);

    const again = await replay(ep);
    expect(again.body.data).toMatchObject({ redelivered: 0, deliveries: [] });
    expect(rx.ids).toHaveLength(4);
  });

  it('logs a replay that fails again as a failed redelivery, leaving the delivery failed', async () => {
    const ep = await endpoint(rx.url);
    await quoteEvent();
    const res = await replay(ep);
    expect(res.body.data.redelivered).toBe(1);
    const [d] = await deliveries(ep);
    expect(d).toMatchObject({
      status: 'failed',
      attempt_log: [
        { trigger: 'automatic', http_status: 500 },
        { trigger: 'redelivery', http_status: 500 },
      ],
    });
  });

  it('replays only deliveries created in the from/to range', async () => {
    const ep = await endpoint(rx.url);
    await quoteEvent();
    await sb.advance(3_600);
    await quoteEvent();
    const [newer, older] = await deliveries(ep);
    rx.status = 200;

    const res = await replay(ep, { to: older!.created_at });
    expect(res.body.data).toMatchObject({ redelivered: 1, deliveries: [older!.id] });
    const late = await replay(ep, { from: newer!.created_at });
    expect(late.body.data).toMatchObject({ redelivered: 1, deliveries: [newer!.id] });
  });

  it('leaves other endpoints alone', async () => {
    const other = await new Receiver().open();
    try {
      const ep = await endpoint(rx.url);
      const otherEp = await endpoint(other.url);
      await quoteEvent();
      rx.status = 200;
      await replay(ep);
      expect((await deliveries(otherEp)).map((d) => d.status)).toEqual(['failed']);
      expect(other.ids).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('refuses a range whose from is after its to, and an unknown endpoint', async () => {
    const ep = await endpoint(rx.url);
    const bad = await replay(ep, { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual([{ field: 'from', message: 'from must not be after to' }]);
    const notDate = await replay(ep, { from: 'yesterday' });
    expect(notDate.body.error.details.fields[0].field).toBe('from');
    expect((await replay('we_nothing')).status).toBe(404);
  });
});

describe('disabling and enabling an endpoint', () => {
  it('stops new deliveries while disabled and resumes them when enabled', async () => {
    rx.status = 200;
    const ep = await endpoint(rx.url);
    const disabled = await sb.post(`/api/v1/webhook_endpoints/${ep}/disable`, {});
    expect(disabled.status).toBe(200);
    expect(disabled.body.data).toMatchObject({ id: ep, enabled: false });
    await quoteEvent();
    expect(rx.ids).toHaveLength(0);

    const enabled = await sb.post(`/api/v1/webhook_endpoints/${ep}/enable`, {});
    expect(enabled.body.data.enabled).toBe(true);
    await quoteEvent();
    expect(rx.ids).toHaveLength(1);
    // Enabling again changes nothing.
    expect((await sb.post(`/api/v1/webhook_endpoints/${ep}/enable`, {})).body.data.enabled).toBe(true);
  });
});
