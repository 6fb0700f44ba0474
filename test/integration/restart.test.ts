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
  const momo = (msisdn: string) => ({ amount: 5_000, currency: 'GHS', channel: 'momo', msisdn });
  const bank = { amount: 5_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' };

  /**
   * Puts a record back where a stop between the claim and the provider's answer leaves it: no
   * provider recorded, its key in flight under an earlier boot. What the upstream was told stays.
   */
  async function orphan(sb: TestSandbox, table: 'charges' | 'transfers', id: string, opts: { keepAttempts?: boolean } = {}): Promise<void> {
    await sb.ry.store.run(`UPDATE ${table} SET provider = NULL, provider_reference = NULL WHERE id = ?`, [id]);
    await sb.ry.store.run("UPDATE idempotency_keys SET state = 'in_flight', boot = ?, response_status = NULL, response_body = NULL WHERE resource_id = ?", [sb.ry.boot - 1, id]);
    if (!opts.keepAttempts) await sb.ry.store.run('DELETE FROM rail_attempts WHERE ref_id = ?', [id]);
  }

  async function start(): Promise<TestSandbox> {
    const sb = await startTestSandbox();
    sandboxes.push(sb);
    await sb.fund(50_000);
    return sb;
  }

  it.each([
    ['mtn-momo', 'a charge', '0551234987', 'RESOURCE_ALREADY_EXIST'],
    ['hubtel', 'a charge failed over to hubtel', '0551234989', 'its used ClientReference'],
  ])('resumes with the same reference at %s (%s), which knows it (%s): the retry gets the same charge', async (provider, _what, msisdn) => {
    const sb = await start();
    const first = await sb.charge(momo(msisdn), { idempotencyKey: `orphan-${provider}` });
    expect(first.body.data.provider).toBe(provider);
    await orphan(sb, 'charges', first.body.data.id);

    const retry = await sb.charge(momo(msisdn), { idempotencyKey: `orphan-${provider}` });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending_provider', provider });
    // (On PostgreSQL the MTN mock also keeps its access tokens there, in a book of their own.)
    const mockTransactions = await sb.ry.store.all("SELECT reference FROM mock_transactions WHERE provider = ? AND book <> 'tokens'", [provider]);
    expect(mockTransactions).toHaveLength(1);
    await sb.advance(10);
    expect((await sb.get(`/api/v1/charges/${first.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 50_000 + 5_000 - first.body.data.fees });
    expectBalanced(await sb.trialBalance());
  });

  it('resumes a bank transfer with the same sessionId, which the rail reports as a duplicate, and settles it once', async () => {
    const sb = await start();
    const first = await sb.transfer(bank, { idempotencyKey: 'orphan-bank' });
    await orphan(sb, 'transfers', first.body.data.id);
    const retry = await sb.transfer(bank, { idempotencyKey: 'orphan-bank' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending', provider: 'bank-rail' });
    await sb.advance(10);
    expect((await sb.get(`/api/v1/transfers/${first.body.data.id}`)).body.data.status).toBe('success');
    expect(await sb.wallet()).toMatchObject({ available: 50_000 - 5_000 - first.body.data.fees, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('finishes from the recorded acceptance without calling the provider again', async () => {
    const sb = await start();
    const first = await sb.charge(momo('0551234987'), { idempotencyKey: 'orphan-recorded' });
    await orphan(sb, 'charges', first.body.data.id, { keepAttempts: true });
    // Were the provider called again, it would refuse: it is down.
    await sb.ry.health.setDown('mtn-momo', true);
    const retry = await sb.charge(momo('0551234987'), { idempotencyKey: 'orphan-recorded' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'pending_provider', provider: 'mtn-momo' });
  });

  it('answers with the record as it stands when its provider settled it during the stop', async () => {
    const sb = await start();
    const first = await sb.transfer(momo('0551234987'), { idempotencyKey: 'orphan-settled' });
    await sb.advance(10);
    await orphan(sb, 'transfers', first.body.data.id);
    await sb.ry.store.run("UPDATE transfers SET provider = 'mtn-momo' WHERE id = ?", [first.body.data.id]);
    const retry = await sb.transfer(momo('0551234987'), { idempotencyKey: 'orphan-settled' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'success' });
  });

  it('fails the record with 502 provider_unavailable, refunding the reservation, when no provider can take it now', async () => {
    const sb = await start();
    const first = await sb.transfer(momo('0551234987'), { idempotencyKey: 'orphan-unavailable' });
    await orphan(sb, 'transfers', first.body.data.id);
    await sb.ry.store.run('DELETE FROM mock_transactions'); // the upstreams forgot it too
    for (const provider of ['mtn-momo', 'hubtel']) await sb.ry.health.setDown(provider, true);
    const retry = await sb.transfer(momo('0551234987'), { idempotencyKey: 'orphan-unavailable' });
    expect(retry.status).toBe(502);
    expect(retry.body.error).toMatchObject({ code: 'provider_unavailable', details: { transfer_id: first.body.data.id } });
    expect((await sb.get(`/api/v1/transfers/${first.body.data.id}`)).body.data).toMatchObject({ status: 'failed', failure_reason: 'provider_unavailable' });
    expect(await sb.wallet()).toMatchObject({ available: 50_000, reserved: 0 });
    expectBalanced(await sb.trialBalance());
  });

  it('is finished at start-up, before any retry, and by the status poll when nobody retries', async () => {
    const sb = await start();
    const a = await sb.charge(momo('0551234987'), { idempotencyKey: 'orphan-startup' });
    const b = await sb.charge(momo('0551234987'), { idempotencyKey: 'orphan-poll' });
    await orphan(sb, 'charges', a.body.data.id);
    expect(await sb.ry.recoverInterrupted()).toBe(1 + 0);
    const key = await sb.ry.store.get<{ state: string; response_status: number }>("SELECT state, response_status FROM idempotency_keys WHERE idempotency_key = 'orphan-startup'");
    expect(key).toEqual({ state: 'done', response_status: 201 });

    await orphan(sb, 'charges', b.body.data.id);
    await sb.advance(60); // the status poll meets the orphan
    const polled = await sb.ry.store.get<{ state: string }>("SELECT state FROM idempotency_keys WHERE idempotency_key = 'orphan-poll'");
    expect(polled).toEqual({ state: 'done' });
    expect((await sb.get(`/api/v1/charges/${b.body.data.id}`)).body.data).toMatchObject({ status: 'success', provider: 'mtn-momo' });
  });

  it('answers 409 only while the claim belongs to this process, still routing', async () => {
    const sb = await start();
    const first = await sb.charge(momo('0551234987'), { idempotencyKey: 'in-flight-here' });
    await orphan(sb, 'charges', first.body.data.id);
    await sb.ry.store.run('UPDATE idempotency_keys SET boot = ? WHERE resource_id = ?', [sb.ry.boot, first.body.data.id]);
    const retry = await sb.charge(momo('0551234987'), { idempotencyKey: 'in-flight-here' });
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_conflict');
  });
});
