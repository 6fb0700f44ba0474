import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import express from 'express';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_KEY, listenSecret, runListen, SseParser, type CommandIo, type SseEvent } from '../../src/cli/listen-command.ts';
import { runTrigger } from '../../src/cli/trigger-command.ts';
import { EVENT_TYPES } from '../../src/webhooks/webhook.schemas.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const ROOT = resolve(import.meta.dirname, '../..');

// ---- helpers ---------------------------------------------------------------------------------

interface Received {
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
}

/** A webhook receiver on 127.0.0.1:0 that records each raw body and its headers. */
async function startReceiver(status = 200): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const app = express();
  app.post('/{*rest}', express.raw({ type: '*/*' }), (req, res) => {
    received.push({ path: req.path, body: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '', headers: req.headers });
    res.status(status).json({ received: true });
  });
  const server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => closeServer(server),
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}

function capture(signal?: AbortSignal): CommandIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
    signal,
    out: () => out,
    err: () => err,
  };
}

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function railyard(args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, RAILYARD_LOG_REQUESTS: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function stop(proc: Proc | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return proc?.child.exitCode ?? null;
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 12_000);
  try {
    return await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

// ---- real processes: serve, listen, trigger ----------------------------------------------------

describe('railyard listen + trigger, as processes', () => {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const api = `http://127.0.0.1:${port}`;
  let serve: Proc | undefined;
  let listen: Proc | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    serve = railyard(['serve'], { PORT: String(port), RAILYARD_DB: ':memory:', RAILYARD_CLOCK: 'virtual' });
    await until(
      'serve to start',
      () => {
        if (serve!.child.exitCode !== null) throw new Error(`serve exited ${serve!.child.exitCode}: ${serve!.err()}`);
        return serve!.out().includes('openapi');
      },
      15_000,
    );
    listen = railyard(['listen', '--forward-to', `${receiver.url}/hook`, '--api', api]);
    const ready = await until('the Ready line', () => /Ready! Forwarding (\S+) events to (\S+)\. Your webhook signing secret is (whsec_\S+) \(\^C to quit\)/.exec(listen!.out()) ?? undefined, 15_000);
    expect(ready[1]).toBe(api);
    expect(ready[2]).toBe(`${receiver.url}/hook`);
    secret = ready[3]!;
  }, 40_000);

  afterAll(async () => {
    await stop(listen, 'SIGKILL');
    await stop(serve, 'SIGKILL');
    await receiver?.close();
  });

  it('prints a secret that is stable for the key (the same as --print-secret)', async () => {
    expect(secret).toBe(listenSecret(DEFAULT_KEY));
    const printed = railyard(['listen', '--print-secret']);
    expect(await printed.exited).toBe(0);
    expect(printed.out().trim()).toBe(secret);
  }, 15_000);

  it('forwards the events of `railyard trigger charge.success`, signed per Standard Webhooks', async () => {
    const trigger = railyard(['trigger', 'charge.success', '--api', api]);
    const code = await trigger.exited;
    expect(trigger.err()).toBe('');
    expect(code).toBe(0);
    expect(trigger.out()).toMatch(/POST \/api\/v1\/charges 201 chg_[0-9a-z]{20} pending_provider/);
    expect(trigger.out()).toMatch(/POST \/api\/v1\/sandbox\/clock\/advance 200 \+5 s/);
    expect(trigger.out()).toMatch(/Triggered charge\.success \(evt_[0-9a-z]{20}\)/);

    const byType = await until('charge.pending and charge.success at the receiver', () => {
      const types = new Map(receiver.received.map((r) => [(JSON.parse(r.body) as { type: string }).type, r]));
      return types.has('charge.pending') && types.has('charge.success') && types;
    });
    const wh = new Webhook(secret);
    const chargeIds = new Set<string>();
    for (const type of ['charge.pending', 'charge.success']) {
      const r = byType.get(type)!;
      expect(r.path).toBe('/hook');
      expect(r.headers['content-type']).toBe('application/json');
      const verified = wh.verify(r.body, r.headers as Record<string, string>) as { id: string; type: string; data: { object: { id: string } } };
      expect(verified.type).toBe(type);
      expect(r.headers['webhook-id']).toBe(verified.id);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      chargeIds.add(verified.data.object.id);
      // listen printed both sides of the delivery.
      const out = await until(`the <-- line for ${type}`, () => listen!.out().includes(`<-- [200] POST ${receiver.url}/hook [${verified.id}]`) && listen!.out());
      expect(out).toMatch(new RegExp(`^\\S+Z  --> ${type.replace('.', '\\.')} \\[${verified.id}\\]$`, 'm'));
      expect(out).toMatch(new RegExp(`^\\S+Z  <-- \\[200\\] POST ${receiver.url}/hook \\[${verified.id}\\]$`, 'm'));
    }
    expect(chargeIds.size).toBe(1);
    // A wrong secret does not verify.
    const other = new Webhook(listenSecret('sk_test_someone_else_entirely_0000'));
    const r = byType.get('charge.success')!;
    expect(() => other.verify(r.body, r.headers as Record<string, string>)).toThrow();
  }, 30_000);

  it('exits 2 with a message on bad options, and stops cleanly on SIGTERM', async () => {
    const missing = railyard(['listen', '--api', api]);
    expect(await missing.exited).toBe(2);
    expect(missing.err()).toContain('--forward-to <url> is required');
    const badUrl = railyard(['listen', '--forward-to', 'not a url']);
    expect(await badUrl.exited).toBe(2);
    expect(badUrl.err()).toContain('--forward-to must be an absolute http(s) URL');
    const unknown = railyard(['trigger', 'charge.refunded', '--api', api]);
    expect(await unknown.exited).toBe(2);
    expect(unknown.err()).toContain('unknown event type "charge.refunded"');
    expect(unknown.err()).toContain('  transfer.failed');

    expect(await stop(listen, 'SIGTERM')).toBe(0);
  }, 30_000);
});

// ---- in process: every event type against an in-process sandbox ------------------------------

describe('runTrigger, against an in-process sandbox', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox();
  });
  afterAll(async () => {
    await sb?.close();
  });

  const triggerable = EVENT_TYPES.filter((t) => t !== 'compliance.review_required');
  it.each(triggerable)('triggers %s', async (type) => {
    const io = capture();
    const code = await runTrigger(type, { api: sb.baseUrl, key: sb.key, secret: sb.signingSecret }, io, {});
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    const eventId = /Triggered \S+ \((evt_[0-9a-z]{20})\)/.exec(io.out())?.[1];
    expect(eventId).toBeDefined();
    const res = await sb.get(`/api/v1/events?type=${type}&page_size=100`);
    expect(res.status).toBe(200);
    const events = res.body.data as { id: string; type: string }[];
    expect(events.map((e) => e.id)).toContain(eventId);
    expect(events.every((e) => e.type === type)).toBe(true);
  });

  it('explains an unknown event type, and a refusal by the API', async () => {
    const unknown = capture();
    expect(await runTrigger('charge.refunded', { api: sb.baseUrl }, unknown, {})).toBe(2);
    expect(unknown.err()).toContain('quote.created');
    const badSecret = capture();
    expect(await runTrigger('transfer.pending', { api: sb.baseUrl, key: sb.key, secret: 'sig_test_wrong' }, badSecret, {})).toBe(1);
    expect(badSecret.out()).toMatch(/POST \/api\/v1\/transfers 401 invalid_signature/);
    expect(badSecret.err()).toContain('could not trigger transfer.pending');
    const noServer = capture();
    expect(await runTrigger('charge.pending', { api: 'http://127.0.0.1:1' }, noServer, {})).toBe(1);
    expect(noServer.err()).toContain('Is railyard running there');
  });
});

describe('runTrigger compliance.review_required', () => {
  const reviewAddress = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ trading: { screening: { review: [reviewAddress] } } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('parks a buy to a review address', async () => {
    const io = capture();
    const code = await runTrigger('compliance.review_required', { api: sb.baseUrl, key: sb.key, secret: sb.signingSecret, reviewAddress }, io, {});
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    expect(io.out()).toMatch(/POST \/api\/v1\/trades 403 trd_[0-9a-z]{20} under_review/);
    const res = await sb.get('/api/v1/events?type=compliance.review_required');
    expect(res.body.data).toHaveLength(1);
  });

  it('without --review-address, says how to configure one (exit 2); with an unlisted one, fails (exit 1)', async () => {
    const none = capture();
    expect(await runTrigger('compliance.review_required', { api: sb.baseUrl }, none, {})).toBe(2);
    expect(none.err()).toContain('trading:\n    screening:\n      review:');
    expect(none.err()).toContain('--review-address');
    const unlisted = capture();
    expect(await runTrigger('compliance.review_required', { api: sb.baseUrl, key: sb.key, secret: sb.signingSecret, reviewAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' }, unlisted, {})).toBe(1);
    expect(unlisted.err()).toContain('not in the sandbox');
  });
});

// ---- in process: listen's stream handling ------------------------------------------------------

describe('runListen, in process', () => {
  it('parses SSE frames split anywhere: CRLF, CR, comments, multi-line data, UTF-8', () => {
    const events: SseEvent[] = [];
    const parser = new SseParser((e) => events.push(e));
    const text =
      ': connected\r\n\r\n' +
      'id: evt_1\r\nevent: charge.pending\r\ndata: {"id":"evt_1","name":"Kwame ₵"}\r\n\r\n' +
      'id: evt_2\revent: charge.success\rdata: line1\rdata: line2\r\r' +
      ': heartbeat\n\n' +
      'event: empty\n\n' +
      'id: evt_3\nevent: quote.created\ndata:{"x":1}\n\n';
    const bytes = new TextEncoder().encode(text);
    for (let i = 0; i < bytes.length; i++) parser.push(bytes.subarray(i, i + 1));
    expect(events).toEqual([
      { id: 'evt_1', event: 'charge.pending', data: '{"id":"evt_1","name":"Kwame ₵"}' },
      { id: 'evt_2', event: 'charge.success', data: 'line1\nline2' },
      { id: 'evt_3', event: 'quote.created', data: '{"x":1}' },
    ]);
  });

  it('validates its options', async () => {
    const missing = capture();
    expect(await runListen({}, missing, {})).toBe(2);
    expect(missing.err()).toContain('--forward-to <url> is required');
    const bad = capture();
    expect(await runListen({ forwardTo: 'ftp://example.com/x' }, bad, {})).toBe(2);
    expect(bad.err()).toContain('--forward-to must be an absolute http(s) URL');
    const badApi = capture();
    expect(await runListen({ forwardTo: 'http://127.0.0.1:9/x', api: 'nope' }, badApi, {})).toBe(2);
    const badEvents = capture();
    expect(await runListen({ forwardTo: 'http://127.0.0.1:9/x', events: 'charge.success,charge.nope' }, badEvents, {})).toBe(2);
    expect(badEvents.err()).toContain('charge.nope');
    const secret = capture();
    expect(await runListen({ printSecret: true, key: 'sk_test_abc' }, secret, {})).toBe(0);
    expect(secret.out()).toBe(`${listenSecret('sk_test_abc')}\n`);
    expect(listenSecret('sk_test_abc')).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });

  it('reconnects when the stream drops, reports receiver failures, and resolves 0 when aborted', async () => {
    // A fake stream: the first connection sends one event in pieces and then breaks; the second
    // sends another and stays open.
    let connections = 0;
    const open: ServerResponse[] = [];
    const stream = createServer((req, res) => {
      expect(req.headers.authorization).toBe('Bearer sk_test_fake_stream_key');
      expect(req.url).toBe('/api/v1/events/stream?types=charge.pending%2Ccharge.success');
      connections++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': connected\n\n');
      if (connections === 1) {
        const frame = `id: evt_a\nevent: charge.pending\ndata: ${JSON.stringify({ id: 'evt_a', type: 'charge.pending', data: { object: {} } })}\n\n`;
        res.write(frame.slice(0, 17));
        setTimeout(() => res.write(frame.slice(17, 40)), 20);
        setTimeout(() => res.write(frame.slice(40)), 40);
        setTimeout(() => res.destroy(), 150);
      } else {
        res.write(`id: evt_b\nevent: charge.success\ndata: ${JSON.stringify({ id: 'evt_b', type: 'charge.success', data: { object: {} } })}\n\n`);
        open.push(res);
      }
    });
    await new Promise<void>((done) => stream.listen(0, '127.0.0.1', done));
    const api = `http://127.0.0.1:${(stream.address() as AddressInfo).port}`;
    const receiver = await startReceiver(500);
    const controller = new AbortController();
    const io = capture(controller.signal);
    try {
      const running = runListen({ forwardTo: `${receiver.url}/in`, api, key: 'sk_test_fake_stream_key', events: 'charge.pending,charge.success' }, io, {});
      await until('both events forwarded', () => io.out().includes('<-- [500]') && io.out().split('<-- [500]').length === 3, 10_000);
      expect(io.out()).toContain(`Ready! Forwarding ${api} events to ${receiver.url}/in. Your webhook signing secret is ${listenSecret('sk_test_fake_stream_key')} (^C to quit)`);
      expect(io.out()).toMatch(/stream dropped \(.+\); reconnecting in 1 s/);
      expect(io.out()).toContain(`reconnected to ${api}`);
      expect(io.out()).toContain('--> charge.pending [evt_a]');
      expect(io.out()).toContain('--> charge.success [evt_b]');
      expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual(['evt_a', 'evt_b']);
      const wh = new Webhook(listenSecret('sk_test_fake_stream_key'));
      for (const r of receiver.received) wh.verify(r.body, r.headers as Record<string, string>);
      controller.abort();
      expect(await running).toBe(0);
    } finally {
      for (const res of open) res.destroy();
      await closeServer(stream);
      await receiver.close();
    }
  });

  it('prints [ERR] when the receiver is unreachable, and exits 1 when the API refuses the key', async () => {
    const sb = await startTestSandbox();
    try {
      const refused = capture();
      expect(await runListen({ forwardTo: 'http://127.0.0.1:9/x', api: sb.baseUrl, key: 'sk_test_not_a_real_key_0000000000' }, refused, {})).toBe(1);
      expect(refused.err()).toContain('401');

      const controller = new AbortController();
      const io = capture(controller.signal);
      const running = runListen({ forwardTo: 'http://127.0.0.1:1/nowhere', api: sb.baseUrl, key: sb.key }, io, {});
      await until('ready', () => io.out().includes('Ready!'));
      const charge = await sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
      expect(charge.status).toBe(201);
      await sb.ry.scheduler.runDue(); // fans the outbox out to the stream
      await until('the ERR line', () => /<-- \[ERR\] POST http:\/\/127\.0\.0\.1:1\/nowhere \[evt_[0-9a-z]{20}\] \S/.test(io.out()));
      controller.abort();
      expect(await running).toBe(0);
    } finally {
      await sb.close();
    }
  });
});
