import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { BehaviourStage, holdOpen, MALFORMED_BODY, takesRequest } from '../../../src/mocks/engine/behaviour.ts';
import type { ProviderBehaviour } from '../../../src/scenarios/scenario-types.ts';
import { recordingLogger, serve } from './engine-fixture.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const later = { after_seconds: 5, status: 'success' } as const;

describe('whether the upstream takes a request', () => {
  it.each<[string, ProviderBehaviour, boolean]>([
    ['accept', { respond: 'accept' }, true],
    ['reject', { respond: 'reject', callback: later }, false],
    ['server_error', { respond: 'server_error', callback: later }, false],
    ['timeout without callbacks', { respond: 'timeout' }, false],
    ['timeout with a callback', { respond: 'timeout', callback: later }, true],
    ['malformed with only extra callbacks', { respond: 'malformed', extra_callbacks: [later] }, true],
    ['malformed with an empty list of extras', { respond: 'malformed', extra_callbacks: [] }, false],
    ['reset with a callback', { respond: 'reset', callback: later }, true],
  ])('%s: %s', (_what, behaviour, takes) => {
    expect(takesRequest(behaviour)).toBe(takes);
  });
});

async function stageServer(behaviour: ProviderBehaviour, maxHoldMs = 2_000) {
  const logger = recordingLogger();
  const refused: string[] = [];
  const stage = new BehaviourStage({
    provider: 'acme',
    maxHoldMs,
    logger,
    refusals: {
      reject: (res, b, q) => void (refused.push(`reject ${b.reason} ${q.operation}`), res.status(400).json({ code: b.reason })),
      serverError: (res) => void (refused.push('server_error'), res.status(500).json({ code: 'E500' })),
    },
  });
  const app = express();
  let held = 0;
  app.post('/pay', async (req, res) => {
    const started = Date.now();
    await stage.answer(behaviour, { req, res, successStatus: 202 }, { operation: 'payout', channel: 'bank' });
    held = Date.now() - started;
    if (!res.headersSent && !res.destroyed) res.status(299).end(); // accept: the wire answers
  });
  const server = await serve(app);
  closers.push(server.close);
  return { logger, refused, held: () => held, pay: (timeoutMs = 2_000) => fetch(`${server.base}/pay`, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) }) };
}

describe('the behaviour stage', () => {
  it('leaves accept to the wire', async () => {
    const s = await stageServer({ respond: 'accept' });
    expect((await s.pay()).status).toBe(299);
  });

  it("refuses through the wire's own bodies", async () => {
    const reject = await stageServer({ respond: 'reject', reason: 'E_LIMIT' });
    expect(await (await reject.pay()).json()).toEqual({ code: 'E_LIMIT' });
    expect(reject.refused).toEqual(['reject E_LIMIT payout']);
    const broken = await stageServer({ respond: 'server_error' });
    expect((await broken.pay()).status).toBe(500);
    expect(broken.refused).toEqual(['server_error']);
  });

  it('answers malformed with the success status and an HTML page', async () => {
    const s = await stageServer({ respond: 'malformed' });
    const res = await s.pay();
    expect(res.status).toBe(202);
    expect(await res.text()).toBe(MALFORMED_BODY);
  });

  it('resets the connection', async () => {
    const s = await stageServer({ respond: 'reset' });
    await expect(s.pay()).rejects.toThrow();
  });

  it('holds a timeout until the client gives up, then releases it', async () => {
    const s = await stageServer({ respond: 'timeout' });
    await expect(s.pay(150)).rejects.toThrow();
    await expect.poll(() => s.logger.lines.length).toBe(1);
    expect(s.logger.lines[0]).toMatchObject({ message: 'acme mock released a held request', fields: { path: '/pay', after: 'client_closed' } });
  });

  it('holds a timeout no longer than maxHoldMs, then hangs up without an answer', async () => {
    const s = await stageServer({ respond: 'timeout' }, 200);
    await expect(s.pay(5_000)).rejects.toThrow();
    expect(s.held()).toBeGreaterThanOrEqual(190);
    expect(s.logger.lines[0]).toMatchObject({ fields: { after: 'max_hold' } });
  });
});

describe('holding a request open', () => {
  it('returns at once for a response that has already ended', async () => {
    const logger = recordingLogger();
    const res = { destroyed: false, writableEnded: true, off() {}, on() {}, destroy() {} } as unknown as express.Response;
    const req = { originalUrl: '/x?secret=1', socket: { destroyed: false } } as unknown as express.Request;
    await holdOpen({ req, res }, 60_000, logger, 'acme');
    expect(logger.lines).toEqual([{ level: 'info', message: 'acme mock released a held request', fields: { path: '/x', after: 'client_closed' } }]);
  });
});
