import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import supertest from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadScenarios, parseScenario } from '../../src/railyard-scenarios.ts';
import { scratchDir } from '../support/scratch-dir.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// Faults on railyard's own merchant API, written as a scenario file's `api:` section, proved
// through the whole service: what the client sees, and what the database holds afterwards.

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
  await sb.fund(100_000);
});
afterEach(() => sb.close());

/** Loads an `api:` section as serve does, from a file; answers the file's path. */
function useApiRules(yaml: string): string {
  const file = join(scratchDir('api-faults-'), 'api-faults.yaml');
  writeFileSync(file, `version: 1\nname: api faults\napi:\n${yaml}`);
  sb.ry.apiFaults.replace(loadScenarios([file]).apiRules);
  return file;
}

const transferBody = { amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' };
const timestamp = () => Math.floor(sb.ry.wallClock.now() / 1000);

async function transferIds(): Promise<string[]> {
  return (await sb.ry.store.all<{ id: string }>('SELECT id FROM transfers ORDER BY id')).map((r) => r.id);
}

describe('drop: after_commit (the answer is lost after the work committed)', () => {
  it('leaves exactly one transfer after a byte-identical retry, which gets the stored answer', async () => {
    useApiRules(`
  - name: lose the first transfer answer
    match: { method: POST, route: /api/v1/transfers }
    drop: after_commit
    times: 1
`);
    const ts = timestamp();
    const first = sb.transfer(transferBody, { idempotencyKey: 'lost-1', timestamp: ts });
    await expect(first).rejects.toThrow(/socket hang up|ECONNRESET/);
    // The work committed: the transfer exists, reserved, though the client heard nothing.
    const [id] = await transferIds();
    expect(id).toMatch(/^trf_/);
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 2_100, reserved: 2_100 });

    const retry = await sb.transfer(transferBody, { idempotencyKey: 'lost-1', timestamp: ts });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data).toMatchObject({ id, status: 'pending', amount: 2_000 });
    expect(await transferIds()).toEqual([id]);
    expect(await sb.wallet()).toMatchObject({ available: 100_000 - 2_100, reserved: 2_100 });
    await sb.advance(5);
    expect(await sb.events(id!)).toEqual(['transfer.pending', 'transfer.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('is shown by the requests inspector (the rule that fired) and on the object timeline', async () => {
    const file = useApiRules(`
  - name: lose the first transfer answer
    match: { route: /api/v1/transfers }
    drop: after_commit
    times: 1
`);
    const ts = timestamp();
    await expect(sb.transfer(transferBody, { idempotencyKey: 'lost-2', timestamp: ts })).rejects.toThrow();
    const retry = await sb.transfer(transferBody, { idempotencyKey: 'lost-2', timestamp: ts });
    const id = retry.body.data.id as string;

    const log = (await sb.get('/api/v1/requests?kind=merchant')).body.data as { path: string; status: number | null; fault: unknown }[];
    const transfers = log.filter((e) => e.path === '/api/v1/transfers');
    expect(transfers.map((e) => [e.status, e.fault])).toEqual([
      [201, null],
      [null, { rule: 'lose the first transfer answer', file, index: 0, action: 'drop', dropped_after_commit: true }],
    ]);

    // The dashboard's Requests page names it too.
    const agent = supertest.agent(sb.baseUrl);
    const csrf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const form = await agent.get('/dashboard/sign-in');
    await agent
      .post('/dashboard/sign-in')
      .type('form')
      .send({ csrf: csrf(form.text), api_key: sb.key, signing_secret: '' });
    expect((await agent.get('/dashboard/requests')).text).toContain(`fault <code>${file}</code> lose the first transfer answer (drop: answer dropped after commit)`);

    const timeline = (await sb.get(`/api/v1/objects/${id}/timeline`)).body.data as { entries: { kind: string; title: string; details: Record<string, unknown> }[] };
    const requests = timeline.entries.filter((e) => e.kind === 'request');
    expect(requests[0]!.title).toBe('POST /api/v1/transfers: answer dropped after commit (rule "lose the first transfer answer")');
    expect(requests[0]!.details.fault).toMatchObject({ rule: 'lose the first transfer answer', dropped_after_commit: true });
    expect(requests[1]!.title).toBe('POST /api/v1/transfers');
  });
});

describe('respond: a 5xx with the envelope', () => {
  it('before_commit: nothing happened, and the same request then succeeds', async () => {
    useApiRules(`
  - name: transfers unavailable once
    match: { route: /api/v1/transfers }
    respond: { status: 503, before_commit: true }
    times: 1
`);
    const ts = timestamp();
    const failed = await sb.transfer(transferBody, { idempotencyKey: 'five-1', timestamp: ts });
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({ status: false, message: expect.any(String), error: { code: 'service_unavailable' } });
    expect(await transferIds()).toEqual([]);
    expect(await sb.wallet()).toMatchObject({ available: 100_000, reserved: 0 });
    expect((await sb.ry.store.all('SELECT idempotency_key FROM idempotency_keys')).length).toBe(0);

    const retry = await sb.transfer(transferBody, { idempotencyKey: 'five-1', timestamp: ts });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await transferIds()).toEqual([retry.body.data.id]);
  });

  it('after the commit: the client gets a 500, the work is done, and the retry gets the stored answer', async () => {
    useApiRules(`
  - name: ambiguous 500
    match: { route: /api/v1/transfers }
    respond: 500
    times: 1
`);
    const ts = timestamp();
    const failed = await sb.transfer(transferBody, { idempotencyKey: 'five-2', timestamp: ts });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toEqual({ code: 'internal_error' });
    expect(failed.headers['idempotent-replayed']).toBeUndefined();
    const ids = await transferIds();
    expect(ids).toHaveLength(1);
    const retry = await sb.transfer(transferBody, { idempotencyKey: 'five-2', timestamp: ts });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await transferIds()).toEqual([retry.body.data.id]);
  });
});

describe('rate_limit: per API key, fixed windows on the business clock', () => {
  it('answers 429 rate_limited with Retry-After and RateLimit headers; honouring it succeeds', async () => {
    useApiRules(`
  - name: two requests per 10 s
    default: true
    rate_limit: { requests: 2, per_seconds: 10 }
`);
    const first = await sb.get('/api/v1/wallet');
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '2', 'ratelimit-remaining': '1', 'ratelimit-policy': '2;w=10' });
    expect((await sb.get('/api/v1/wallet')).headers['ratelimit-remaining']).toBe('0');
    const limited = await sb.get('/api/v1/wallet');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(limited.headers['ratelimit-reset']).toBe(String(retryAfter));
    expect(limited.body.error.details).toEqual({ limit: 2, window_seconds: 10, retry_after_seconds: retryAfter });

    // The sandbox's clock is virtual here: honouring Retry-After means advancing it.
    await sb.advance(retryAfter);
    const after = await sb.get('/api/v1/wallet');
    expect(after.status).toBe(200);
    expect(after.headers['ratelimit-remaining']).toBe('1');
  });

  it('counts each key on its own, and never limits a live key', async () => {
    useApiRules(`
  - name: one request per minute
    default: true
    rate_limit: { requests: 1, per_seconds: 60 }
`);
    const other = (await sb.post('/api/v1/sandbox/merchants', { name: 'Other' })).body.data;
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] })).body.data;
    expect((await sb.get('/api/v1/wallet')).status).toBe(200);
    expect((await sb.get('/api/v1/wallet')).status).toBe(429);
    expect((await sb.get('/api/v1/wallet', other.key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await sb.get('/api/v1/wallet', live.key)).status).toBe(200);
  });
});

describe('latency_ms', () => {
  it('delays the answer for real, before or after the commit, and changes nothing else', async () => {
    useApiRules(`
  - name: slow before
    match: { route: /api/v1/wallet }
    latency_ms: 150
  - name: slow after the commit
    match: { route: /api/v1/transfers }
    latency_ms: { after_commit: 150 }
`);
    const slow = await sb.get('/api/v1/wallet');
    expect(slow.status).toBe(200);
    const transfer = await sb.transfer(transferBody);
    expect(transfer.status).toBe(201);
    const log = (await sb.get('/api/v1/requests?kind=merchant')).body.data as { path: string; latency_ms: number; fault: { rule: string } | null }[];
    const byPath = (path: string) => log.find((e) => e.path === path)!;
    expect(byPath('/api/v1/wallet').fault?.rule).toBe('slow before');
    expect(byPath('/api/v1/wallet').latency_ms).toBeGreaterThanOrEqual(150);
    expect(byPath('/api/v1/transfers').fault?.rule).toBe('slow after the commit');
    expect(byPath('/api/v1/transfers').latency_ms).toBeGreaterThanOrEqual(150);
  });
});

describe('times, every, probability and named state', () => {
  it('the first two attempts fail, the third succeeds (times)', async () => {
    useApiRules(`
  - name: two failures
    match: { route: /api/v1/transfers }
    respond: { status: 503, before_commit: true }
    times: 2
`);
    const ts = timestamp();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await sb.transfer(transferBody, { idempotencyKey: 'three-tries', timestamp: ts })).status);
    expect(statuses).toEqual([503, 503, 201]);
    expect(await transferIds()).toHaveLength(1);
  });

  it('the same with named state: a rule for the first attempt, another for the second', async () => {
    useApiRules(`
  - name: first attempt cut
    match: { route: /api/v1/transfers }
    state: { scenario: flaky, requires: Started, sets: cut-once }
    drop: before_commit
  - name: second attempt 503
    match: { route: /api/v1/transfers }
    state: { scenario: flaky, requires: cut-once, sets: healthy }
    respond: { status: 503, before_commit: true }
`);
    const ts = timestamp();
    await expect(sb.transfer(transferBody, { idempotencyKey: 'stateful', timestamp: ts })).rejects.toThrow();
    expect(await transferIds()).toEqual([]);
    expect((await sb.transfer(transferBody, { idempotencyKey: 'stateful', timestamp: ts })).status).toBe(503);
    expect((await sb.transfer(transferBody, { idempotencyKey: 'stateful', timestamp: ts })).status).toBe(201);
    expect(sb.ry.apiFaults.stateOf('flaky')).toBe('healthy');
  });

  it('every: fires on every Nth matching request; matches by body field and header', async () => {
    useApiRules(`
  - name: every second big charge from QA
    match: { route: /api/v1/charges, body: { amount: { range: { min: 5000 } } }, header: { X-Test-Run: qa } }
    respond: { status: 503, before_commit: true }
    every: 2
`);
    const charge = (amount: number, qa: boolean) => sb.charge({ amount, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }).set(qa ? { 'X-Test-Run': 'qa' } : {});
    const statuses = [];
    for (const [amount, qa] of [
      [6000, true],
      [6000, true],
      [100, true],
      [6000, false],
      [6000, true],
      [6000, true],
    ] as const)
      statuses.push((await charge(amount, qa)).status);
    expect(statuses).toEqual([201, 503, 201, 201, 201, 503]);
  });

  it('probability: decided by the seed, so the same requests give the same faults', async () => {
    const run = async () => {
      const local = await startTestSandbox({ seed: 11 });
      try {
        const scenario = parseScenario('version: 1\nname: p\napi:\n  - { name: coin, match: { route: /api/v1/wallet }, probability: 0.5, respond: { status: 503, before_commit: true } }\n', 'p.yaml');
        local.ry.apiFaults.replace(scenario.api);
        const statuses = [];
        for (let i = 0; i < 24; i++) statuses.push((await local.get('/api/v1/wallet')).status);
        return statuses;
      } finally {
        await local.close();
      }
    };
    const first = await run();
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });
});

describe('POST /api/v1/sandbox/scenarios/restart', () => {
  it('starts the api rules afresh: times, windows and states', async () => {
    useApiRules(`
  - name: one failure
    match: { route: /api/v1/wallet }
    respond: { status: 503, before_commit: true }
    times: 1
`);
    expect((await sb.get('/api/v1/wallet')).status).toBe(503);
    expect((await sb.get('/api/v1/wallet')).status).toBe(200);
    expect((await sb.post('/api/v1/sandbox/scenarios/restart', {})).status).toBe(200);
    expect((await sb.get('/api/v1/wallet')).status).toBe(503);
  });
});

describe('what faults never touch', () => {
  it('leaves the sandbox controls alone, so a default rule cannot lock the sandbox out', async () => {
    useApiRules(`
  - name: everything down
    default: true
    respond: { status: 503, before_commit: true }
`);
    expect((await sb.get('/api/v1/wallet')).status).toBe(503);
    expect((await sb.post('/api/v1/sandbox/wallet/fund', { amount: 100 })).status).toBe(200);
  });
});

describe('the sandbox control: POST, GET and DELETE /api/v1/sandbox/faults', () => {
  it('switches lost responses on for one route, lists them with their counts, and off again', async () => {
    const on = await sb.post('/api/v1/sandbox/faults', { profile: 'lost-responses', route: 'POST /api/v1/transfers', times: 1 });
    expect(on.status).toBe(201);
    expect(on.body.data).toMatchObject({ id: 'flt_1', file: null, name: 'lost-responses on POST /api/v1/transfers', action: 'drop', matched: 0, fired: 0 });
    expect(on.body.data.rule).toMatchObject({ match: { method: { equals: 'POST' }, route: { equals: '/api/v1/transfers' } }, drop: 'after_commit', times: 1 });

    const ts = timestamp();
    await expect(sb.transfer(transferBody, { idempotencyKey: 'ctl-1', timestamp: ts })).rejects.toThrow();
    const retry = await sb.transfer(transferBody, { idempotencyKey: 'ctl-1', timestamp: ts });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await transferIds()).toEqual([retry.body.data.id]);

    const listed = await sb.get('/api/v1/sandbox/faults');
    expect(listed.body.data.map((f: { id: string; matched: number; fired: number }) => [f.id, f.matched, f.fired])).toEqual([['flt_1', 2, 1]]);
    expect((await sb.http.delete('/api/v1/sandbox/faults/flt_9').set('Authorization', `Bearer ${sb.key}`)).status).toBe(404);
    const off = await sb.http.delete('/api/v1/sandbox/faults').set('Authorization', `Bearer ${sb.key}`);
    expect(off.body.data).toEqual({ removed: 1 });
    expect((await sb.get('/api/v1/sandbox/faults')).body.data).toEqual([]);
  });

  it('a rate-limit profile, and server errors before the commit, switched off by id', async () => {
    const limit = (await sb.post('/api/v1/sandbox/faults', { profile: 'rate-limit', requests: 1, per_seconds: 5 })).body.data;
    expect(limit.rule.rate_limit).toEqual({ requests: 1, per_seconds: 5 });
    expect((await sb.get('/api/v1/wallet')).status).toBe(200);
    const refused = await sb.get('/api/v1/wallet');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect((await sb.http.delete(`/api/v1/sandbox/faults/${limit.id}`).set('Authorization', `Bearer ${sb.key}`)).status).toBe(200);
    await sb.post('/api/v1/sandbox/faults', { profile: 'server-errors', route: '/api/v1/wallet' });
    expect((await sb.get('/api/v1/wallet')).status).toBe(503);
  });

  it('refuses a profile it does not know, with the envelope', async () => {
    const res = await sb.post('/api/v1/sandbox/faults', { profile: 'earthquake' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields[0].field).toBe('profile');
  });
});
