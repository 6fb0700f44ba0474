import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const dirs: string[] = [];
const sandboxes: TestSandbox[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-restart-'));
  dirs.push(dir);
  return join(dir, 'railyard.db');
}
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('durability', () => {
  it('pending provider callbacks survive a restart and still settle', async () => {
    const db = tempDb();
    const first = await startTestSandbox({ db });
    await first.fund(50_000);
    const charge = (await first.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' })).body.data; // hubtel
    const transfer = (await first.transfer({ amount: 10_000, currency: 'GHS', channel: 'bank', account_number: '1000000002', bank_code: '040100', bank_account_name: 'Yaw Asante' })).body.data;
    const now = first.ry.clock.now();
    const port = Number(new URL(first.baseUrl).port);
    await first.close();

    // Same address as before: the providers hold callback URLs that name it.
    const second = await startTestSandbox({ db, port, virtual_start: new Date(now).toISOString() });
    sandboxes.push(second);
    expect((await second.get(`/api/v1/charges/${charge.id}`)).body.data.status).toBe('pending_provider');
    await second.advance(5);
    expect((await second.get(`/api/v1/charges/${charge.id}`)).body.data.status).toBe('success');
    expect((await second.get(`/api/v1/transfers/${transfer.id}`)).body.data.status).toBe('failed');
    expect(await second.wallet()).toEqual({ currency: 'GHS', available: 50_000 + 9_900, reserved: 0 });
    expectBalanced(await second.trialBalance());
  });

  it('a process killed in the middle of a journal leaves the ledger balanced', () => {
    const db = tempDb();
    // Start a journal in a child process and kill it with SIGKILL before it commits.
    const script = join(dirs[0]!, 'crash.mts');
    writeFileSync(
      script,
      `import { SqliteStore } from ${JSON.stringify(join(import.meta.dirname, '../../src/store/sqlite-store.ts'))};
       const store = new SqliteStore(${JSON.stringify(db)});
       await store.transaction(async (tx) => {
         await tx.run("INSERT INTO ledger_journals (id, environment, kind, ref_type, ref_id, memo, created_at) VALUES ('jrn_ok', 'test', 'k', 'x', 'x', 'm', 0)");
         await tx.run("INSERT INTO ledger_postings (journal_id, environment, account, currency, amount) VALUES ('jrn_ok', 'test', 'a', 'GHS', 5)");
         await tx.run("INSERT INTO ledger_postings (journal_id, environment, account, currency, amount) VALUES ('jrn_ok', 'test', 'b', 'GHS', -5)");
       });
       await store.transaction(async (tx) => {
         await tx.run("INSERT INTO ledger_journals (id, environment, kind, ref_type, ref_id, memo, created_at) VALUES ('jrn_torn', 'test', 'k', 'x', 'x', 'm', 0)");
         await tx.run("INSERT INTO ledger_postings (journal_id, environment, account, currency, amount) VALUES ('jrn_torn', 'test', 'a', 'GHS', 7)");
         process.kill(process.pid, 'SIGKILL');
       });`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.signal).toBe('SIGKILL');
    const store = new SqliteStore(db);
    return (async () => {
      const journals = await store.all<{ id: string }>('SELECT id FROM ledger_journals');
      expect(journals.map((j) => j.id)).toEqual(['jrn_ok']);
      const total = await store.get<{ t: number }>('SELECT SUM(amount) AS t FROM ledger_postings');
      expect(total?.t).toBe(0);
      await store.close();
    })();
  });
});

describe('recovery from a stop in the middle of an initiation', () => {
  it('fails the transfer no provider accepted, refunds it, and answers its Idempotency-Key', async () => {
    const sb = await startTestSandbox();
    sandboxes.push(sb);
    await sb.fund(20_000);
    // What the first transaction of POST /transfers leaves behind when the process dies before
    // any provider answers: a pending transfer with no provider, a reservation, a key in flight.
    const ok = await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'crash-key' });
    await sb.ry.store.run("UPDATE transfers SET provider = NULL, provider_reference = NULL WHERE id = ?", [ok.body.data.id]);
    await sb.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', response_status = NULL, response_body = NULL");
    await sb.ry.store.run("DELETE FROM jobs WHERE kind LIKE 'mock.%'");
    await sb.advance(1);
    const inFlight = await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'crash-key' });
    expect(inFlight.status).toBe(409);

    await sb.advance(60); // the status poll finds no provider ever took it
    const transfer = (await sb.get(`/api/v1/transfers/${ok.body.data.id}`)).body.data;
    expect(transfer).toMatchObject({ status: 'failed', failure_reason: 'initiation_interrupted' });
    expect(await sb.wallet()).toMatchObject({ available: 20_000, reserved: 0 });
    const retry = await sb.transfer({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'crash-key' });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data).toMatchObject({ id: ok.body.data.id, status: 'failed' });
    expectBalanced(await sb.trialBalance());
  });
});
