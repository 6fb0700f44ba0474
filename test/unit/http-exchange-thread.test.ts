import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpConnectionError, HttpTimeoutError } from '../../src/kernel/http-exchange.ts';
import { HttpExchangeThread } from '../../src/kernel/http-exchange-thread.ts';

// The thread webhooks are POSTed from carries an exchange exactly as httpExchange does.

let server: Server;
let base = '';
const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/slow') return; // never answers
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/hooks' });
        res.end();
        return;
      }
      res.writeHead(req.url === '/teapot' ? 418 : 200, { 'content-type': 'text/plain', 'x-echo': String(req.headers['webhook-id'] ?? '') });
      res.end(req.url === '/big' ? 'é'.repeat(100_000) : `got ${Buffer.concat(chunks).length} bytes`);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(
  () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
);

let thread: HttpExchangeThread;
afterEach(async () => {
  await thread?.close();
  seen.length = 0;
});

describe('HttpExchangeThread', () => {
  it('sends the method, headers and body bytes, and answers status, headers and the whole body', async () => {
    thread = new HttpExchangeThread();
    const body = JSON.stringify({ type: 'charge.success', note: 'ünïcode' });
    const res = await thread.exchange(`${base}/hooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' }, body, timeoutMs: 5_000 });
    expect(res.status).toBe(200);
    expect(res.headers['x-echo']).toBe('evt_1');
    expect(res.text).toBe(`got ${Buffer.byteLength(body)} bytes`);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/hooks', body });
    expect(seen[0]!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('answers a non-2xx as it came, and reads a large multi-byte answer whole', async () => {
    thread = new HttpExchangeThread();
    expect((await thread.exchange(`${base}/teapot`, { method: 'POST', body: '{}', timeoutMs: 5_000 })).status).toBe(418);
    expect((await thread.exchange(`${base}/big`, { method: 'GET', timeoutMs: 5_000 })).text).toBe('é'.repeat(100_000));
  });

  it('carries many exchanges at once, each answered to its own caller', async () => {
    thread = new HttpExchangeThread();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => thread.exchange(`${base}/n${i}`, { method: 'POST', body: 'x'.repeat(i), timeoutMs: 5_000 })));
    expect(answers.map((a) => a.text)).toEqual(Array.from({ length: 200 }, (_, i) => `got ${i} bytes`));
  });

  it('answers a redirect as it came, without following it', async () => {
    thread = new HttpExchangeThread();
    const res = await thread.exchange(`${base}/moved`, { method: 'POST', body: '{}', timeoutMs: 5_000 });
    expect(res.status).toBe(302);
    expect(seen.map((r) => r.url)).toEqual(['/moved']);
  });

  it('sends the credentials of a URL that carries them as basic auth', async () => {
    thread = new HttpExchangeThread();
    const withCredentials = base.replace('http://', 'http://merchant:s3cret@');
    expect((await thread.exchange(`${withCredentials}/hooks`, { method: 'POST', body: '{}', timeoutMs: 5_000 })).status).toBe(200);
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('merchant:s3cret').toString('base64')}`);
  });

  it('fails an exchange past its deadline as a timeout', async () => {
    thread = new HttpExchangeThread();
    await expect(thread.exchange(`${base}/slow`, { method: 'POST', body: '{}', timeoutMs: 200 })).rejects.toBeInstanceOf(HttpTimeoutError);
  });

  it("fails a refused connection as a connection error with node's code", async () => {
    thread = new HttpExchangeThread();
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const error = await thread.exchange(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpConnectionError);
    expect((error as HttpConnectionError).code).toBe('ECONNREFUSED');
  });

  it('fails an unusable URL as a connection error, and goes on serving', async () => {
    thread = new HttpExchangeThread();
    await expect(thread.exchange('ftp://example.invalid/', { method: 'POST', body: '{}', timeoutMs: 1_000 })).rejects.toBeInstanceOf(HttpConnectionError);
    expect((await thread.exchange(`${base}/after`, { method: 'POST', body: '{}', timeoutMs: 5_000 })).status).toBe(200);
  });

  it('fails the exchanges in flight when closed, and refuses new ones', async () => {
    thread = new HttpExchangeThread();
    const pending = thread.exchange(`${base}/slow`, { method: 'POST', body: '{}', timeoutMs: 10_000 });
    await new Promise((done) => setTimeout(done, 100));
    await thread.close();
    await expect(pending).rejects.toBeInstanceOf(HttpConnectionError);
    await expect(thread.exchange(`${base}/hooks`, { method: 'POST', body: '{}', timeoutMs: 1_000 })).rejects.toBeInstanceOf(HttpConnectionError);
  });
});
