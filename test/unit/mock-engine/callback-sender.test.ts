import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallbackSender, jsonCallback } from '../../../src/mocks/engine/callback-sender.ts';
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
