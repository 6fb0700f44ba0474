// A long advance can be watched: over a large backlog POST /api/v1/sandbox/clock/advance answers
// 202 at once with an advance to follow, and GET /api/v1/sandbox/clock/advances/{id} shows how far
// it got. Small advances, and any advance asked to wait, still answer 200 when done.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ASYNC_ADVANCE_THRESHOLD } from '../../src/sandbox/sandbox.routes.ts';
import type { AdvanceProgress } from '../../src/scheduler/scheduler.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

const SUCCESS = '0551234987';

/** Charges to the success number, `parallel` at a time: each one's callback is a job due in 3 s. */
async function charges(n: number, parallel = 8): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += parallel) {
    const batch = await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, () => sb.charge({ amount: 1000, currency: 'GHS', channel: 'momo', msisdn: SUCCESS })));
    for (const res of batch) {
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
  }
  return ids;
}

/** Polls the advance until it is no longer running; every answer seen on the way. */
async function follow(location: string) {
  const seen: { state: string; jobs_done: number; jobs_total: number }[] = [];
  for (;;) {
    const res = await sb.get(location);
    expect(res.status).toBe(200);
    seen.push(res.body.data);
    if (res.body.data.state !== 'running') return seen;
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('following a long clock advance', () => {
  it(`answers 202 over a backlog of more than ${ASYNC_ADVANCE_THRESHOLD} due jobs, and the advance is followed until every job ran`, async () => {
    const ids = await charges(ASYNC_ADVANCE_THRESHOLD + 20);
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.pending_jobs).toBeGreaterThan(ASYNC_ADVANCE_THRESHOLD);

    const res = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 3600 });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/sandbox/clock/advances/${res.body.data.id}`);
    expect(res.body.data).toMatchObject({ state: 'running', seconds: 3600, from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T01:00:00.000Z', finished_at: null, error: null });
    expect(res.body.data.jobs_total).toBeGreaterThan(ASYNC_ADVANCE_THRESHOLD);

    const seen = await follow(res.headers.location!);
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ state: 'succeeded', from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T01:00:00.000Z', error: null });
    expect(last.jobs_done).toBe(last.jobs_total);
    expect(last.jobs_done).toBeGreaterThanOrEqual(ids.length);
    for (const s of seen) expect(s.jobs_done).toBeLessThanOrEqual(s.jobs_total);
    const done = seen.map((s) => s.jobs_done);
    expect(done).toEqual([...done].sort((a, b) => a - b));

    // The jobs ran: every charge settled, and the clock stands at the target.
    expect((await sb.get('/api/v1/sandbox/clock')).body.data).toMatchObject({ now: '2026-01-01T01:00:00.000Z', pending_jobs: 0 });
    for (const id of [ids[0]!, ids[500]!, ids.at(-1)!]) expect((await sb.get(`/api/v1/charges/${id}`)).body.data.status).toBe('success');
  }, 120_000);

  it('waits for the 200 over the same backlog when asked to wait', async () => {
    await charges(ASYNC_ADVANCE_THRESHOLD + 5);
    const res = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 60, wait: true });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ now: '2026-01-01T00:01:00.000Z', pending_jobs: 0 });
    expect(res.body.data.jobs_run).toBeGreaterThanOrEqual(ASYNC_ADVANCE_THRESHOLD + 5);
  }, 120_000);

  it('runs a small advance in the background on request, by "async": true or Prefer: respond-async', async () => {
    const ids = await charges(3);
    const byBody = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 10, async: true });
    expect(byBody.status).toBe(202);
    expect(byBody.body.data.state).toBe('running');
    expect(byBody.body.data.jobs_total).toBeGreaterThanOrEqual(3);
    const last = (await follow(byBody.headers.location!)).at(-1)!;
    expect(last).toMatchObject({ state: 'succeeded', to: '2026-01-01T00:00:10.000Z' });
    // One callback per charge, and more should a slow machine make a provider call time out (failover).
    expect(last.jobs_done).toBe(last.jobs_total);
    expect(last.jobs_done).toBeGreaterThanOrEqual(3);
    for (const id of ids) expect((await sb.get(`/api/v1/charges/${id}`)).body.data.status).toBe('success');

    const byHeader = await sb.http.post('/api/v1/sandbox/clock/advance').set('Authorization', `Bearer ${sb.key}`).set('Prefer', 'respond-async').send({ seconds: 5 });
    expect(byHeader.status).toBe(202);
    expect(byHeader.headers['preference-applied']).toBe('respond-async');
    expect((await follow(byHeader.headers.location!)).at(-1)).toMatchObject({ state: 'succeeded', from: '2026-01-01T00:00:10.000Z', to: '2026-01-01T00:00:15.000Z' });
  });

  it('answers a small advance with 200 when it is done, as before', async () => {
    await charges(2);
    const res = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 10 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ mode: 'virtual', now: '2026-01-01T00:00:10.000Z' });
    expect(res.body.data.jobs_run).toBeGreaterThanOrEqual(2);
  });

  it('refuses async and wait together, and names no advance it does not hold', async () => {
    const both = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 10, async: true, wait: true });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('validation_error');
    expect(both.body.error.details.fields).toEqual([{ field: 'wait', message: 'ask for async or wait, not both' }]);
    const unknown = await sb.get('/api/v1/sandbox/clock/advances/adv_9_9');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: false, error: { code: 'not_found' } });
  });

  it('documents the 202 and the advance resource in /openapi.json', async () => {
    const spec = (await sb.http.get('/openapi.json')).body;
    const advance = spec.paths['/api/v1/sandbox/clock/advance'].post;
    expect(Object.keys(advance.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '403']));
    expect(advance.responses['202'].headers.Location).toBeDefined();
    expect(Object.keys(advance.requestBody.content['application/json'].schema.properties)).toEqual(['seconds', 'async', 'wait']);
    const get = spec.paths['/api/v1/sandbox/clock/advances/{id}'].get;
    expect(get.operationId).toBe('sandboxGetClockAdvance');
    expect(Object.keys(get.responses['200'].content['application/json'].schema.properties.data.properties)).toEqual(expect.arrayContaining(['state', 'jobs_done', 'jobs_total', 'from', 'to']));
  });
});

describe('Scheduler.advanceBy progress', () => {
  it('reports done 0 first, then every job, ending with done equal to total and to the jobs run', async () => {
    await charges(5);
    const progress: AdvanceProgress[] = [];
    const ran = await sb.ry.scheduler.advanceBy(10_000, (p) => progress.push({ ...p }));
    expect(ran).toBeGreaterThanOrEqual(5); // more should a provider call time out on a slow machine
    expect(progress[0]!.done).toBe(0);
    expect(progress[0]!.total).toBeGreaterThanOrEqual(5);
    expect(progress.at(-1)).toEqual({ done: ran, total: ran });
    expect(progress.map((p) => p.done)).toEqual([...Array.from({ length: ran + 1 }, (_, i) => i), ran]);
    for (const p of progress) expect(p.done).toBeLessThanOrEqual(p.total);
  });
});

describe('following a background advance as server-sent events', () => {
  it('streams progress events, then succeeded, and ends', async () => {
    await charges(30);
    const started = await sb.post('/api/v1/sandbox/clock/advance', { seconds: 10, async: true });
    expect(started.status).toBe(202);
    const res = await fetch(`${sb.baseUrl}/api/v1/sandbox/clock/advances/${started.body.data.id}/events`, { headers: { authorization: `Bearer ${sb.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text(); // the stream ends after the final event
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => ({ event: /^event: (.+)$/m.exec(block)![1], data: JSON.parse(/^data: (.+)$/m.exec(block)![1]!) }));
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: 'succeeded', data: { state: 'succeeded' } });
    expect(last.data.jobs_done).toBe(last.data.jobs_total);
    expect(last.data.jobs_done).toBeGreaterThanOrEqual(30);
    for (const e of events.slice(0, -1)) expect(e).toMatchObject({ event: 'progress', data: { state: 'running' } });

    // An advance that already ended: its final event alone.
    const again = await (await fetch(`${sb.baseUrl}/api/v1/sandbox/clock/advances/${started.body.data.id}/events`, { headers: { authorization: `Bearer ${sb.key}` } })).text();
    expect(again.trim().split('\n\n')).toHaveLength(1);
    expect(again).toContain('event: succeeded');
  });

  it('answers 404 in the envelope for an advance it does not hold', async () => {
    const res = await sb.get('/api/v1/sandbox/clock/advances/adv_9_9/events');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
