import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseRule } from '../../src/railyard-scenarios.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// The Paystack mock's reads that list and look up (List Transactions, Fetch Transaction, Fetch
// Transfer) on PostgreSQL, where text compares under the database's collation.

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);
let sb: TestSandbox | undefined;
afterEach(() => sb?.close());

describe('the Paystack mock on PostgreSQL', () => {
  it('lists charges newest first with their total, and fetches a transaction by id and a transfer by id and code', async () => {
    const db = await (await postgres()).createDatabase();
    const settles = { respond: 'accept' as const, callback: { after_seconds: 5, status: 'success' as const } };
    sb = await startTestSandbox({ db, providers: { paystack: { enabled: true, priority: 1 }, 'mtn-momo': { priority: 2 }, hubtel: { priority: 3 } } }, [
      parseRule({ name: 'paystack', match: { msisdn: '0241110060' }, collect: { paystack: settles }, payout: { paystack: settles } }),
    ]);
    const paystack = (path: string) => sb!.http.get(`/mocks/paystack${path}`).set('Authorization', 'Bearer sk_test_railyard_paystack');
    const first = (await sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0241110060' })).body.data.id;
    await sb.advance(5);
    const second = (await sb.charge({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0241110060' })).body.data.id;
    const page = await paystack('/transaction?perPage=1&page=1');
    expect(page.body.data.map((t: { reference: string }) => t.reference)).toEqual([second]);
    expect(page.body.meta).toMatchObject({ total: 2, pageCount: 2 });
    expect((await paystack('/transaction?perPage=1&page=2')).body.data.map((t: { reference: string }) => t.reference)).toEqual([first]);
    expect((await paystack(`/transaction/${page.body.data[0].id}`)).body.data.reference).toBe(second);

    const transfer = (await sb.transfer({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0241110060' })).body.data.id;
    await sb.advance(5);
    const verified = (await paystack(`/transfer/verify/${transfer}`)).body.data;
    expect((await paystack(`/transfer/${verified.transfer_code}`)).body.data).toMatchObject({ reference: transfer, status: 'success' });
    expect((await paystack(`/transfer/${verified.id}`)).body.data).toMatchObject({ reference: transfer, status: 'success' });
  }, 60_000);
});
