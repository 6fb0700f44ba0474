import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/kernel/sign-request.ts';
import { freePort, startServe, type ServeProcess } from '../support/serve-process.ts';

// Restarts of real `railyard serve` processes on one database file: what a merchant's container
// meets when it is killed (SIGKILL) or stopped (SIGTERM) and started again.

const KEY = 'sk_test_restart_recovery_0000000001';
const SECRET = 'sig_test_restart_recovery_000000001';
const dirs: string[] = [];
const running: ServeProcess[] = [];

afterEach(async () => {
  for (const p of running.splice(0)) await p.stop('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sandboxDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-e2e-restart-'));
  dirs.push(dir);
  return dir;
}

async function serve(env: Record<string, string>, port: number): Promise<ServeProcess> {
  const p = await startServe({ RAILYARD_CLOCK: 'virtual', RAILYARD_SEED: '11', RAILYARD_SANDBOX_KEY: KEY, RAILYARD_SANDBOX_SIGNING_SECRET: SECRET, ...env }, port);
  running.push(p);
  return p;
}

interface SentRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A request built once, so that a retry sends exactly the same bytes. */
function request(path: string, body: unknown, idempotencyKey: string, signed = false): SentRequest {
  const raw = JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
  if (signed) Object.assign(headers, signatureHeaders(SECRET, Date.now(), { method: 'POST', pathAndQuery: path, idempotencyKey, rawBody: raw }));
  return { path, headers, body: raw };
}

async function send(p: ServeProcess, r: SentRequest): Promise<{ status: number; body: any; replayed: boolean }> {
  const res = await fetch(p.baseUrl + r.path, { method: 'POST', headers: r.headers, body: r.body });
  return { status: res.status, body: await res.json(), replayed: res.headers.get('idempotent-replayed') === 'true' };
}

async function get(p: ServeProcess, path: string): Promise<any> {
  return (await fetch(p.baseUrl + path, { headers: { authorization: `Bearer ${KEY}` } })).json();
}

async function post(p: ServeProcess, path: string, body: unknown): Promise<any> {
  const res = await fetch(p.baseUrl + path, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

let keys = 0;
async function createSome(p: ServeProcess, label: string): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i < 3; i++) {
    const charge = await send(p, request('/api/v1/charges', { amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, `${label}-charge-${++keys}`));
    expect(charge.status, JSON.stringify(charge.body)).toBe(201);
    const body = { amount: 500, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' };
    const transfer = await send(p, request('/api/v1/transfers', body, `${label}-transfer-${++keys}`, true));
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(201);
    made.push(charge.body.data.id, transfer.body.data.id);
  }
  return made;
}

describe('a virtual-clock sandbox restarted on the same database', () => {
  it('never repeats an id after a SIGKILL or a graceful stop, and keeps business time', async () => {
    const dir = sandboxDir();
    const env = { RAILYARD_DB: join(dir, 'railyard.db') };
    const port = await freePort();

    let p = await serve(env, port);
    await post(p, '/api/v1/sandbox/wallet/fund', { amount: 1_000_000 });
    const ids = await createSome(p, 'first');
    await post(p, '/api/v1/sandbox/clock/advance', { seconds: 30 });
    const clockBefore = (await get(p, '/api/v1/sandbox/clock')).data.now;
    await p.stop('SIGKILL');

    p = await serve(env, port);
    expect((await get(p, '/api/v1/sandbox/clock')).data.now).toBe(clockBefore);
    ids.push(...(await createSome(p, 'after-kill')));
    await p.stop('SIGTERM');

    p = await serve(env, port);
    ids.push(...(await createSome(p, 'after-stop')));
    expect(new Set(ids).size).toBe(18);
    const listed = (await get(p, '/api/v1/transactions?page_size=100')).data.map((t: { id: string }) => t.id);
    expect(listed.sort()).toEqual([...ids].sort());
    expect(p.output()).not.toMatch(/UNIQUE constraint|internal_error/);
  });
});

describe('a process killed between its claim and the provider answer', () => {
  it('answers a byte-identical retry after the restart with the object created before the crash, not 409', async () => {
    const dir = sandboxDir();
    // MTN takes the charge and the payout but holds both answers back until the caller gives up.
    const scenario = join(dir, 'held.yaml');
    writeFileSync(
      scenario,
      `version: 1
name: held
rules:
  - name: mtn-momo takes it but answers late
    match: { msisdn: "0551230001" }
    collect:
      mtn-momo: { respond: timeout, callback: { after_seconds: 5, status: success } }
    payout:
      mtn-momo: { respond: timeout, callback: { after_seconds: 5, status: success } }
`,
    );
    const env = {
      RAILYARD_DB: join(dir, 'railyard.db'),
      RAILYARD_SCENARIOS: [resolve('scenarios/sandbox.yaml'), scenario].join(','),
      RAILYARD_RAIL_TIMEOUT_MS: '60000',
    };
    const port = await freePort();
    let p = await serve(env, port);
    await post(p, '/api/v1/sandbox/wallet/fund', { amount: 100_000 });

    const charge = request('/api/v1/charges', { amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551230001' }, 'held-charge');
    const transfer = request('/api/v1/transfers', { amount: 3_000, currency: 'GHS', channel: 'momo', msisdn: '0551230001' }, 'held-transfer', true);
    const unanswered = [send(p, charge).catch(() => null), send(p, transfer).catch(() => null)];
    // Both are claimed and recorded, and MTN has taken both and holds the answers: nobody has
    // an answer yet. (Killed any earlier, before MTN took them, a resumed call would meet a
    // fresh hold instead of MTN's duplicate answer.)
    const count = (sql: string) => {
      const db = new DatabaseSync(env.RAILYARD_DB, { readOnly: true });
      try {
        return Number((db.prepare(sql).get() as { n: number }).n);
      } finally {
        db.close();
      }
    };
    for (let i = 0; i < 300 && count("SELECT COUNT(*) AS n FROM mock_transactions WHERE provider = 'mtn-momo'") < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(count("SELECT COUNT(*) AS n FROM mock_transactions WHERE provider = 'mtn-momo'")).toBe(2);
    expect(count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE state = 'in_flight'")).toBe(2);
    const created: { id: string }[] = (await get(p, '/api/v1/transactions')).data;
    expect(created).toHaveLength(2);
    await p.stop('SIGKILL');
    expect(await Promise.all(unanswered)).toEqual([null, null]);

    p = await serve(env, port);
    const chargeRetry = await send(p, charge);
    const transferRetry = await send(p, transfer);
    expect([chargeRetry.status, transferRetry.status]).toEqual([201, 201]);
    const createdIds = created.map((c) => c.id).sort();
    expect([chargeRetry.body.data.id, transferRetry.body.data.id].sort()).toEqual(createdIds);
    // MTN knew the references already: the same transactions, not new ones.
    expect(chargeRetry.body.data).toMatchObject({ status: 'pending_provider', provider: 'mtn-momo' });
    expect(transferRetry.body.data).toMatchObject({ status: 'pending', provider: 'mtn-momo' });
    // Asked again: the stored answer.
    const again = await send(p, charge);
    expect(again).toMatchObject({ status: 201, replayed: true });
    expect(again.body).toEqual(chargeRetry.body);

    await post(p, '/api/v1/sandbox/clock/advance', { seconds: 10 });
    expect((await get(p, `/api/v1/charges/${chargeRetry.body.data.id}`)).data.status).toBe('success');
    expect((await get(p, `/api/v1/transfers/${transferRetry.body.data.id}`)).data.status).toBe('success');
    expect((await get(p, '/api/v1/wallet')).data).toMatchObject({ available: 100_000 + 2_000 - chargeRetry.body.data.fees - 3_000 - transferRetry.body.data.fees, reserved: 0 });
    await p.stop('SIGTERM');

    const after = new DatabaseSync(env.RAILYARD_DB, { readOnly: true });
    expect(after.prepare("SELECT COUNT(*) AS n FROM mock_transactions WHERE provider = 'mtn-momo'").get()).toEqual({ n: 2 });
    expect(after.prepare("SELECT COUNT(*) AS n FROM idempotency_keys WHERE state = 'in_flight'").get()).toEqual({ n: 0 });
    const unbalanced = after.prepare('SELECT journal_id, currency, SUM(amount) AS total FROM ledger_postings GROUP BY journal_id, currency HAVING SUM(amount) <> 0').all();
    expect(unbalanced).toEqual([]);
    after.close();
  });
});
