import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallbackSender, jsonCallback, type LocalCallback } from '../../../src/mocks/engine/callback-sender.ts';
import { callbackReceiver, recordingLogger, serve } from './engine-fixture.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function receiver(status = 200) {
  const { app, received } = callbackReceiver(status);
  const server = await serve(app);
  closers.push(server.close);
  return { base: server.base, received };
}

describe('the callback sender', () => {
  it('sends the message once, with its method, its exact body and JSON as the default content type', async () => {
    const { base, received } = await receiver();
    const sender = new CallbackSender({ provider: 'acme', logger: recordingLogger() });
    await sender.send(jsonCallback(`${base}/cb/tok?x=1`, 'PUT', { status: 'SUCCESSFUL', amount: '12.50' }), 'ref-1');
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'PUT', path: '/cb/tok?x=1', body: '{"status":"SUCCESSFUL","amount":"12.50"}' });
    expect(received[0]!.headers['content-type']).toBe('application/json');
  });

  it("adds the signing hook's headers, made over the message and the URL it goes to", async () => {
    const { base, received } = await receiver();
    const sender = new CallbackSender({
      provider: 'acme',
      logger: recordingLogger(),
      sign: (message, url) => ({ 'x-signature': `${message.method} ${url.pathname} ${message.body.length}` }),
    });
    await sender.send({ url: `${base}/hooks/abc`, method: 'POST', body: 'hello', headers: { 'content-type': 'text/plain' } }, 'ref-2');
    expect(received[0]!.headers['x-signature']).toBe('POST /hooks/abc 5');
    expect(received[0]!.headers['content-type']).toBe('text/plain');
  });

  it('logs a receiver that refuses, without retrying or throwing', async () => {
    const { base, received } = await receiver(500);
    const logger = recordingLogger();
    await new CallbackSender({ provider: 'acme', logger }).send(jsonCallback(`${base}/cb`, 'POST', {}), 'ref-3');
    expect(received).toHaveLength(1);
    expect(logger.lines).toEqual([{ level: 'warn', message: 'acme mock: callback was not accepted', fields: { reference: 'ref-3', status: 500 } }]);
  });

  it('gives up on a receiver that does not answer within the configured timeout, and logs it without the URL', async () => {
    let arrive: () => void;
    const arrived = new Promise<void>((done) => (arrive = done));
    const app = express();
    app.all('/*rest', () => arrive()); // never answers
    const server = await serve(app);
    closers.push(server.close);
    const logger = recordingLogger();
    // The timeout's timer is driven by the test: no real time passes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const sending = new CallbackSender({ provider: 'acme', logger, timeoutMs: 100 }).send(jsonCallback(`${server.base}/cb/secret-token`, 'POST', {}), 'ref-4');
      await arrived;
      await vi.advanceTimersByTimeAsync(99);
      expect(logger.lines, 'still waiting for the answer 99 ms in').toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await sending;
    } finally {
      vi.useRealTimers();
    }
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({ level: 'warn', message: 'acme mock: callback delivery failed', fields: { reference: 'ref-4' } });
    expect(String(logger.lines[0]!.fields!.error)).toContain('timed out after 100 ms');
    expect(JSON.stringify(logger.lines)).not.toContain('secret-token');
  });

  it('logs a refused connection', async () => {
    const server = await serve(express());
    await server.close(); // nothing listens there any more
    const logger = recordingLogger();
    await new CallbackSender({ provider: 'acme', logger }).send(jsonCallback(`${server.base}/cb`, 'POST', {}), 'ref-5');
    expect(logger.lines[0]).toMatchObject({ level: 'warn', message: 'acme mock: callback delivery failed' });
  });
});

describe("the callback sender, with railyard's own receiver wired in", () => {
  /** railyard's receiver in process, at `serviceBaseUrl`: it records what it is handed and answers `status`. */
  function ownReceiver(serviceBaseUrl: string, status = 200) {
    const handed: LocalCallback[] = [];
    return { handed, local: { serviceBaseUrl: () => serviceBaseUrl, receive: async (callback: LocalCallback) => (handed.push(callback), { status }) } };
  }

  it('hands a callback to the receiver in process: the exact method, path, headers (signature included) and body, no socket', async () => {
    const { base, received } = await receiver();
    const { handed, local } = ownReceiver(base);
    const sender = new CallbackSender({ provider: 'acme', logger: recordingLogger(), sign: (message, url) => ({ 'X-Signature': `${message.method} ${url.pathname}` }), local });

    await sender.send({ url: `${base}/internal/callbacks/acme/cbt_secret?x=1`, method: 'PUT', body: '{"status":"SUCCESSFUL"}', headers: { 'X-Request-Id': 'r-1' } }, 'ref-6');

    expect(received).toEqual([]);
    expect(handed).toEqual([
      {
        method: 'PUT',
        path: '/internal/callbacks/acme/cbt_secret',
        // As a server reads them: lower-case names, the host and the length of the body.
        headers: { host: new URL(base).host, 'content-type': 'application/json', 'x-request-id': 'r-1', 'x-signature': 'PUT /internal/callbacks/acme/cbt_secret', 'content-length': '23' },
        body: '{"status":"SUCCESSFUL"}',
      },
    ]);
  });

  it("logs the receiver's refusal as it would an HTTP answer", async () => {
    const { local } = ownReceiver('http://127.0.0.1:4010', 401);
    const logger = recordingLogger();
    await new CallbackSender({ provider: 'acme', logger, local }).send(jsonCallback('http://127.0.0.1:4010/internal/callbacks/acme/tok', 'POST', {}), 'ref-7');
    expect(logger.lines).toEqual([{ level: 'warn', message: 'acme mock: callback was not accepted', fields: { reference: 'ref-7', status: 401 } }]);
  });

  it('finds the receiver under a base URL with a path, and hands it the path the service is served at', async () => {
    const { handed, local } = ownReceiver('https://sandbox.example.com/railyard/');
    await new CallbackSender({ provider: 'acme', logger: recordingLogger(), local }).send(jsonCallback('https://sandbox.example.com/railyard/internal/callbacks/acme', 'POST', {}), 'ref-8');
    expect(handed.map((c) => c.path)).toEqual(['/internal/callbacks/acme']);
  });

  it('sends a callback elsewhere over HTTP: another origin, or another path of its own origin', async () => {
    const { base, received } = await receiver();
    const { handed, local } = ownReceiver('http://127.0.0.1:4010');
    const sender = new CallbackSender({ provider: 'acme', logger: recordingLogger(), local });
    await sender.send(jsonCallback(`${base}/internal/callbacks/acme/tok`, 'POST', { n: 1 }), 'ref-9');
    const own = ownReceiver(base);
    const same = new CallbackSender({ provider: 'acme', logger: recordingLogger(), local: own.local });
    await same.send(jsonCallback(`${base}/hooks/acme`, 'POST', { n: 2 }), 'ref-10');
    await same.send(jsonCallback(`${base}/internal/callbacks/`, 'POST', { n: 3 }), 'ref-11');

    expect(received.map((r) => `${r.path} ${r.body}`)).toEqual(['/internal/callbacks/acme/tok {"n":1}', '/hooks/acme {"n":2}', '/internal/callbacks/ {"n":3}']);
    expect([...handed, ...own.handed]).toEqual([]);
  });

  it('still gives up on a receiver elsewhere that does not answer within the configured timeout', async () => {
    const app = express();
    app.all('/*rest', () => {}); // never answers
    const server = await serve(app);
    closers.push(server.close);
    const { handed, local } = ownReceiver('http://127.0.0.1:4010');
    const logger = recordingLogger();
    await new CallbackSender({ provider: 'acme', logger, timeoutMs: 100, local }).send(jsonCallback(`${server.base}/internal/callbacks/acme/secret-token`, 'POST', {}), 'ref-12');
    expect(handed).toEqual([]);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({ level: 'warn', message: 'acme mock: callback delivery failed', fields: { reference: 'ref-12' } });
    expect(String(logger.lines[0]!.fields!.error)).toContain('timed out after 100 ms');
  });
});
