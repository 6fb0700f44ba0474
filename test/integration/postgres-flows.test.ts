// The app on PostgreSQL (RAILYARD_DB=postgres://…): the money flows a merchant uses, end to end
// over HTTP, each on a fresh database of a throwaway cluster (or RAILYARD_TEST_PG_URL's server).
// The same flows run on SQLite in charges, transfers, trading-trades, idempotency and
// webhooks-delivery tests; here they prove the SQL they hit is portable.
import express from 'express';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);

const sandboxes: TestSandbox[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((done) => s.close(() => done()));
  }
});

/** A sandbox on a fresh PostgreSQL database; `db` reuses one (a restart). */
async function sandbox(overrides: Record<string, unknown> = {}): Promise<TestSandbox> {
  const db = (overrides.db as string | undefined) ?? (await (await postgres()).createDatabase());
  const sb = await startTestSandbox({ trading: { market: { volatility_bps: 0 } }, ...overrides, db });
  sandboxes.push(sb);
  return sb;
}

interface Received {
  headers: Record<string, string>;
  rawBody: string;
}

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps what it got. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const app = express();
  app.post('/hooks', express.raw({ type: () => true }), (req, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    received.push({ headers, rawBody: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '' });
    res.status(200).send('thanks');
  });
  const server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

const momo = (msisdn: string, amount = 10_000) => ({ amount, currency: 'GHS', channel: 'momo', msisdn });

describe('railyard on PostgreSQL', () => {
  it('runs on the PostgreSQL store when db is a postgres:// URL', async () => {
    const sb = await sandbox();
    expect(sb.ry.store.kind).toBe('postgres');
    expect((await sb.http.get('/healthz')).status).toBe(200);
  });

  it('settles a charge on the provider callback: wallet credited net of fees, events in order, ledger balanced', async () => {
    const sb = await sandbox();
    const res = await sb.charge(momo('0551234987'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ object: 'charge', status: 'pending_provider', amount: 10_000, fees: 100, provider: 'mtn-momo' });
    expect(await sb.wallet()).toMatchObject({ available: 0, reserved: 0 });

    await sb.advance(5); // the scenario's callback comes 5 s after acceptance
    expect((await sb.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 9_900, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['charge.pending', 'charge.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('pays a signed transfer: reserved at initiation, released on success', async () => {
    const sb = await sandbox();
    await sb.fund(100_000);
    const res = await sb.transfer(momo('0551234987'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ object: 'transfer', status: 'pending', total_debited: 10_100 });
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 10_100 });

    await sb.advance(5);
    expect((await sb.get(`/api/v1/transfers/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 89_900, reserved: 0 });
    expect(await sb.events(res.body.data.id)).toEqual(['transfer.pending', 'transfer.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('refuses a transfer the wallet cannot cover, and changes nothing', async () => {
    const sb = await sandbox();
    await sb.fund(5_000);
    const res = await sb.transfer(momo('0551234987'));
    expect(res.status).toBe(422);
    expect(res.body.error).toEqual({ code: 'insufficient_funds', details: { available: 5_000, required: 10_100, currency: 'GHS' } });
    expect(await sb.wallet()).toMatchObject({ available: 5_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('quotes and buys: the trade settles from the wallet and the quote is consumed', async () => {
    const sb = await sandbox();
    await sb.fund(200_000);
    const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
    expect(quote.status).toBe(201);
    const trade = await sb.execute({ quote_reference: quote.body.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' });
    expect(trade.status).toBe(201);
    expect(trade.body.data).toMatchObject({ object: 'trade', status: 'settled', side: 'buy', asset_amount: 63_562_688, net_fiat_amount: 100_000 });
    expect(trade.body.data.status_history.map((h: { status: string }) => h.status)).toEqual(['created', 'completed', 'settled']);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    const listed = await sb.get('/api/v1/trades');
    expect(listed.body.data.map((t: { reference: string }) => t.reference)).toEqual([trade.body.data.reference]);
    expectBalanced(await sb.trialBalance());
  });

  it('replays an Idempotency-Key: the stored response, the action done once', async () => {
    const sb = await sandbox();
    const first = await sb.charge(momo('0551234987', 5_000), { idempotencyKey: 'same-1' });
    expect(first.status).toBe(201);
    await sb.advance(10);
    const again = await sb.charge(momo('0551234987', 5_000), { idempotencyKey: 'same-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await sb.get('/api/v1/transactions')).body.data).toHaveLength(1);
    const other = await sb.charge(momo('0551234987', 6_000), { idempotencyKey: 'same-1' });
    expect(other.status).toBe(422);
    expect(other.body.error).toEqual({ code: 'idempotency_key_reused', details: { idempotency_key: 'same-1' } });
  });

  it('delivers signed webhooks to a registered endpoint', async () => {
    const sb = await sandbox();
    const rx = await receiver();
    const ep = await sb.post('/api/v1/webhook_endpoints', { url: rx.url });
    expect(ep.status).toBe(201);
    const charge = await sb.charge(momo('0551234987'));
    await sb.advance(5);
    await sb.advance(0);

    const types = rx.received.map((r) => JSON.parse(r.rawBody).type);
    expect(types).toEqual(['charge.pending', 'charge.success']);
    for (const r of rx.received) {
      const event = new Webhook(ep.body.data.secret).verify(r.rawBody, r.headers) as { data: { object: { id: string } } };
      expect(event.data.object.id).toBe(charge.body.data.id);
    }
    const deliveries = await sb.get('/api/v1/webhook_deliveries');
    expect(deliveries.body.data.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('answers 404 for an id with a NUL byte (PostgreSQL text cannot hold one, so nothing has it)', async () => {
    const sb = await sandbox();
    const res = await sb.get('/api/v1/charges/chg_%00abc');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('keeps everything across a restart on the same database', async () => {
    const db = await (await postgres()).createDatabase();
    const first = await sandbox({ db });
    await first.fund(50_000);
    const res = await first.charge(momo('0551234987'));
    await first.advance(5);
    await first.close();
    sandboxes.splice(sandboxes.indexOf(first), 1);

    const second = await sandbox({ db });
    expect((await second.get(`/api/v1/charges/${res.body.data.id}`)).body.data.status).toBe('success');
    expect(await second.wallet()).toMatchObject({ available: 59_900, reserved: 0 });
    expectBalanced(await second.trialBalance());
  });

  it('serves with RAILYARD_DB=postgres://…, never printing the password, and stops cleanly', async () => {
    const url = new URL(await (await postgres()).createDatabase());
    url.password = 'hunter2-not-for-logs'; // the throwaway cluster trusts local connections
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => done(free));
      });
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: { ...process.env, PORT: String(port), RAILYARD_DB: url.toString(), RAILYARD_LOG_REQUESTS: 'false' },
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('openapi')) ready();
      });
      void exited.then((code) => fail(new Error(`serve exited with ${code}: ${err}`)));
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toMatch(/store\s+PostgreSQL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/railyard_test_/);
    expect(out + err).not.toContain('hunter2');
  }, 60_000);
});
