import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort, startServe, type ServeProcess } from '../support/serve-process.ts';

// `railyard serve` on the system clock with a SQLite file runs its jobs on a thread of their own,
// with a connection of its own to the file (start-job-thread.ts). What a merchant sees must not change:
// callbacks settle, webhooks and the event stream carry them, the requests inspector lists the
// job thread's calls to the mocks, and an outage set through the API holds for the jobs too.

const KEY = 'sk_test_railyard_sandbox_0000000000000000';
const tmp = mkdtempSync(join(tmpdir(), 'railyard-job-thread-'));
const running: ServeProcess[] = [];
const receivers: Server[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop('SIGKILL');
  for (const r of receivers.splice(0)) r.close();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let dbs = 0;
async function serve(env: Record<string, string> = {}, config?: string, dir = join(tmp, `run-${++dbs}`), port?: number): Promise<ServeProcess> {
  const extra: Record<string, string> = {};
  if (config) {
    const file = `${dir}.yaml`;
    writeFileSync(file, config);
    extra.RAILYARD_CONFIG = file;
  }
  const p = await startServe({ RAILYARD_DB: join(dir, 'railyard.sqlite'), RAILYARD_CLOCK: 'system', ...extra, ...env }, port ?? (await freePort()));
  running.push(p);
  return p;
}

/** A merchant's webhook endpoint: the event types it received, by object id. */
async function receiver(): Promise<{ url: string; received: Map<string, string[]> }> {
  const received = new Map<string, string[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; data: { object: { id: string } } };
      received.set(event.data.object.id, [...(received.get(event.data.object.id) ?? []), event.type]);
      res.writeHead(200).end();
    });
  });
  receivers.push(server);
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${port}/hooks`, received };
}

async function api(p: ServeProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${p.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...(method === 'POST' ? { 'idempotency-key': `job-thread-${Math.random()}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const charge = (p: ServeProcess, msisdn: string) => api(p, 'POST', '/api/v1/charges', { amount: 10000, currency: 'GHS', channel: 'momo', msisdn });

/** Polls `check` until it holds or `ms` pass; the bound is generous, nothing is timed. */
async function eventually<T>(check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('gave up waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Reads the event stream until a `type` event about `objectId` comes (resolves) or the stream ends. */
async function streamed(p: ServeProcess, type: string, objectId: () => string | undefined, signal: AbortSignal): Promise<boolean> {
  const res = await fetch(`${p.baseUrl}/api/v1/events/stream`, { headers: { authorization: `Bearer ${KEY}` }, signal });
  const reader = res.body!.getReader();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return false;
    text += Buffer.from(value).toString('utf8');
    const id = objectId();
    if (id && text.split('\n').some((line) => line.startsWith('data:') && line.includes(`"type":"${type}"`) && line.includes(id))) return true;
  }
}

describe('railyard serve on the system clock with a SQLite file', () => {
  it('runs jobs on a thread of their own: the callback settles the charge, and its webhooks and the event stream carry it', async () => {
    const hooks = await receiver();
    const p = await serve({ RAILYARD_WEBHOOK_URL: hooks.url });
    expect(p.output()).toMatch(/jobs\s+on a thread of their own/);
    const listening = new AbortController();
    let chargeId: string | undefined;
    const heard = streamed(p, 'charge.success', () => chargeId, listening.signal);
    await new Promise((r) => setTimeout(r, 300)); // the stream is open before the charge
    const created = await charge(p, '0551234987');
    expect(created.status).toBe(201);
    chargeId = created.body.data.id as string;
    // The success number's callback comes 5 s after acceptance.
    const settled = await eventually(async () => {
      const { body } = await api(p, 'GET', `/api/v1/charges/${chargeId}`);
      return body.data.status === 'success' ? body.data : undefined;
    });
    expect(settled.provider).toBe('mtn-momo');
    expect(await eventually(async () => (hooks.received.get(chargeId!)?.length === 2 ? hooks.received.get(chargeId!) : undefined))).toEqual(['charge.pending', 'charge.success']);
    expect(await heard).toBe(true);
    listening.abort();
    const { body: balance } = await api(p, 'GET', '/api/v1/wallet');
    expect(balance.data).toMatchObject({ available: expect.any(Number) });
  }, 60_000);

  it("lists the job thread's calls to the mocks in the request thread's inspector, and holds an outage set through the API for them", async () => {
    // 0241110003 settles at 5 s without calling back: only the status poll (a job) learns of it.
    const p = await serve({}, 'rails:\n  poll_after_seconds: 1\n  poll_interval_seconds: 1\n');
    const created = await charge(p, '0241110003');
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await api(p, 'POST', '/api/v1/sandbox/providers/mtn-momo/outage', { down: true })).status).toBe(200);
    // Polled while mtn-momo is down: its mock answers 503 to the job thread's calls (the poll's
    // token request first), and the request thread's inspector lists them.
    const refused = await eventually(async () => {
      const { body } = await api(p, 'GET', '/api/v1/requests?kind=mock');
      const calls = body.data as { path: string; status: number; provider: string }[];
      return calls.some((r) => r.status === 503) ? calls.filter((r) => r.status === 503) : undefined;
    });
    expect(refused.every((r) => r.provider === 'mtn-momo')).toBe(true);
    expect((await api(p, 'GET', `/api/v1/charges/${id}`)).body.data.status).toBe('pending_provider');
    expect((await api(p, 'POST', '/api/v1/sandbox/providers/mtn-momo/outage', { down: false })).status).toBe(200);
    const settled = await eventually(async () => {
      const { body } = await api(p, 'GET', `/api/v1/charges/${id}`);
      return body.data.status === 'success' ? body.data : undefined;
    });
    expect(settled.status).toBe('success');
    const { body } = await api(p, 'GET', `/api/v1/requests?kind=mock&object_id=${id}`);
    // The poll that settled it: a status call about the charge, answered.
    expect((body.data as { method: string; status: number }[]).some((r) => r.method === 'GET' && r.status === 200)).toBe(true);
  }, 60_000);

  it('loses nothing to a SIGKILL while the job thread settles: restarted on the file, each charge settles once, its charge.success reaches the merchant, and every journal nets to zero', async () => {
    const hooks = await receiver();
    const dir = join(tmp, `run-${++dbs}`);
    const first = await serve({ RAILYARD_WEBHOOK_URL: hooks.url }, undefined, dir);
    const ids: string[] = [];
    for (let batch = 0; batch < 15; batch++) {
      const made = await Promise.all(Array.from({ length: 10 }, () => charge(first, '0551234987')));
      for (const m of made) {
        expect(m.status).toBe(201);
        ids.push(m.body.data.id as string);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // Killed as the first callbacks settle (5 s after acceptance), the last still to come.
    await eventually(async () => ((await api(first, 'GET', `/api/v1/charges/${ids[0]}`)).body.data.status === 'success' ? true : undefined));
    await first.stop('SIGKILL');
    running.splice(running.indexOf(first), 1);
    // On the same port, as a container restarts: the mock's callbacks still due go to the URL it was given.
    const second = await serve({ RAILYARD_WEBHOOK_URL: hooks.url }, undefined, dir, first.port);
    expect(second.output()).toMatch(/jobs\s+on a thread of their own/);
    await eventually(async () => {
      const statuses = await Promise.all(ids.map(async (id) => (await api(second, 'GET', `/api/v1/charges/${id}`)).body.data.status as string));
      return statuses.every((s) => s === 'success') ? true : undefined;
    }, 60_000);
    await eventually(async () => (ids.every((id) => hooks.received.get(id)?.includes('charge.success')) ? true : undefined));
    await second.stop('SIGTERM');
    running.splice(running.indexOf(second), 1);
    const db = new DatabaseSync(join(dir, 'railyard.sqlite'), { readOnly: true });
    try {
      const settled = db.prepare("SELECT ref_id, COUNT(*) AS n FROM ledger_journals WHERE kind = 'charge.settled' GROUP BY ref_id").all() as { ref_id: string; n: number }[];
      expect(settled.map((r) => r.ref_id).sort()).toEqual([...ids].sort());
      expect(settled.every((r) => Number(r.n) === 1)).toBe(true);
      expect(db.prepare('SELECT journal_id FROM ledger_postings GROUP BY journal_id, currency HAVING SUM(amount) <> 0').all()).toEqual([]);
    } finally {
      db.close();
    }
  }, 120_000);

  it('runs them on the request thread when scheduler.thread is off (RAILYARD_JOB_THREAD=false)', async () => {
    const p = await serve({ RAILYARD_JOB_THREAD: 'false' });
    expect(p.output()).toMatch(/jobs\s+on the request thread/);
    const id = (await charge(p, '0551234987')).body.data.id as string;
    const settled = await eventually(async () => {
      const { body } = await api(p, 'GET', `/api/v1/charges/${id}`);
      return body.data.status === 'success' ? body.data : undefined;
    });
    expect(settled.status).toBe('success');
  }, 60_000);
});
