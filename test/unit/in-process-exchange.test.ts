import { AsyncLocalStorage } from 'node:async_hooks';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { inProcessExchange, ownMocksExchange } from '../../src/http/in-process-exchange.ts';
import { HttpConnectionError, HttpTimeoutError } from '../../src/kernel/http-exchange.ts';

// railyard's adapters hand their calls to railyard's own mocks in process. The handler must see
// what it would have read off a socket, and the caller must get what it would have read back.

function echoApp() {
  const app = express();
  app.use(express.json());
  const seen: { events: string[] } = { events: [] };
  app.post('/mocks/echo/:id', (req, res) => {
    res.on('finish', () => seen.events.push('finish'));
    res.on('close', () => seen.events.push('close'));
    res.status(201).set('x-echo', 'yes').json({ id: req.params.id, query: req.query, body: req.body, headers: req.headers, ip: req.ip });
  });
  app.get('/mocks/hang-up', (req) => {
    req.socket.destroy();
  });
  app.get('/mocks/never', (_req, res) => {
    res.on('close', () => seen.events.push('closed while held'));
  });
  return { app, seen };
}

describe('inProcessExchange', () => {
  it('hands the handler the method, path, query, headers and body a client would send, and returns its answer', async () => {
    const { app, seen } = echoApp();
    const exchange = inProcessExchange(app);
    const body = JSON.stringify({ amount: 100 });
    const res = await exchange(new URL('http://127.0.0.1:4010/mocks/echo/a1?x=1'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t' },
      body,
      timeoutMs: 1_000,
    });
    expect(res.status).toBe(201);
    expect(res.headers['x-echo']).toBe('yes');
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const echoed = JSON.parse(res.text);
    expect(echoed).toMatchObject({ id: 'a1', query: { x: '1' }, body: { amount: 100 }, ip: '127.0.0.1' });
    expect(echoed.headers).toMatchObject({ host: '127.0.0.1:4010', 'content-type': 'application/json', authorization: 'Bearer t', 'content-length': String(body.length), connection: 'keep-alive' });
    await new Promise((done) => setImmediate(done));
    expect(seen.events).toEqual(['finish', 'close']);
  });

  it('answers an unknown path with the app’s own 404', async () => {
    const exchange = inProcessExchange(echoApp().app);
    const res = await exchange(new URL('http://127.0.0.1:4010/mocks/nothing'), { method: 'GET', timeoutMs: 1_000 });
    expect(res.status).toBe(404);
  });

  it('is a connection error when the handler hangs up without an answer', async () => {
    const exchange = inProcessExchange(echoApp().app);
    const failed = await exchange(new URL('http://127.0.0.1:4010/mocks/hang-up'), { method: 'GET', timeoutMs: 1_000 }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HttpConnectionError);
    expect((failed as HttpConnectionError).code).toBe('ECONNRESET');
  });

  it('times out a handler that holds the request, and closes it as a client that gives up would', async () => {
    const { app, seen } = echoApp();
    const failed = await inProcessExchange(app)(new URL('http://127.0.0.1:4010/mocks/never'), { method: 'GET', timeoutMs: 50 }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HttpTimeoutError);
    expect(seen.events).toEqual(['closed while held']);
  });

  it('runs the handler afresh, outside the caller’s async context, as a request off a socket would be', async () => {
    const storage = new AsyncLocalStorage<string>();
    const app = express();
    app.get('/mocks/context', (_req, res) => void res.json({ seen: storage.getStore() ?? null }));
    const exchange = inProcessExchange(app);
    const res = await storage.run('the caller’s job', () => exchange(new URL('http://127.0.0.1:4010/mocks/context'), { method: 'GET', timeoutMs: 1_000 }));
    expect(JSON.parse(res.text)).toEqual({ seen: null });
  });
});

describe('ownMocksExchange', () => {
  it('keeps calls to the service’s own mocks in process and sends anything else over HTTP', async () => {
    // Nothing listens on port 9: over HTTP the call would be refused.
    const exchange = ownMocksExchange(echoApp().app, () => 'http://127.0.0.1:9');
    const local = await exchange('http://127.0.0.1:9/mocks/echo/b2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs: 1_000 });
    expect(local.status).toBe(201);
    const elsewhere = await exchange('http://127.0.0.1:9/api/v1/charges', { method: 'GET', timeoutMs: 1_000 }).catch((err: unknown) => err);
    expect(elsewhere).toBeInstanceOf(HttpConnectionError);
    expect((elsewhere as HttpConnectionError).code).toBe('ECONNREFUSED');
  });

  it('goes over HTTP when the service is served under a path (a proxy may rewrite it)', async () => {
    const exchange = ownMocksExchange(echoApp().app, () => 'http://127.0.0.1:9/railyard');
    const failed = await exchange('http://127.0.0.1:9/railyard/mocks/echo/c3', { method: 'POST', body: '{}', timeoutMs: 1_000 }).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(HttpConnectionError);
  });
});
