import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { IdGenerator, SeededRandom } from '../src/kernel/ids.ts';
import { RailyardProcess } from './launch.ts';

export interface SeedReport {
  rows: number;
  charges: number;
  transfers: number;
  journals: number;
  postings: number;
  seconds: number;
  merchantId: string;
}

const START = Date.UTC(2025, 0, 1);
const STEP_MS = 1_000;

/**
 * Writes `rows` charges and transfers (with their transactions rows and, for the settled ones, a
 * ledger journal) straight into a railyard database whose schema railyard has already created.
 * One transaction, prepared statements: a million rows take seconds instead of the hours the API
 * would. Rows are dated before the virtual clock's start, oldest first, as railyard would have
 * inserted them, with ids from railyard's own generator.
 */
export function seedDatabase(path: string, rows: number, seed = 1): SeedReport {
  const started = performance.now();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;');
  const merchant = db.prepare("SELECT merchant_id FROM api_keys WHERE environment = 'test' ORDER BY created_at LIMIT 1").get() as { merchant_id: string } | undefined;
  if (!merchant) throw new Error(`${path} has no test key: start railyard on it once before seeding`);
  const merchantId = merchant.merchant_id;
  const wallet = `merchant:${merchantId}:wallet:available`;
  let time = START;
  const ids = new IdGenerator({ kind: 'virtual', now: () => time }, new SeededRandom(seed));
  const rng = new SeededRandom(seed ^ 0x5eed);
  const roll = () => rng.nextUint32() / 0x1_0000_0000;

  const insertCharge = db.prepare(
    `INSERT INTO charges (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, provider, provider_reference, failure_reason, provider_reason, created_at, updated_at)
     VALUES (?, 'test', ?, ?, ?, 'GHS', ?, 'momo', ?, 'MTN', ?, ?, ?, ?, ?, ?)`,
  );
  const insertTransfer = db.prepare(
    `INSERT INTO transfers (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, account_number, bank_code, bank_account_name, provider, provider_reference, failure_reason, provider_reason, created_at, updated_at)
     VALUES (?, 'test', ?, ?, ?, 'GHS', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertTransaction = db.prepare("INSERT INTO transactions (environment, merchant_id, object_type, object_id, created_at) VALUES ('test', ?, ?, ?, ?)");
  const insertJournal = db.prepare("INSERT INTO ledger_journals (id, environment, kind, ref_type, ref_id, reverses, memo, created_at) VALUES (?, 'test', ?, ?, ?, NULL, ?, ?)");
  const insertPosting = db.prepare("INSERT INTO ledger_postings (journal_id, environment, account, currency, amount) VALUES (?, 'test', ?, 'GHS', ?)");

  const report: SeedReport = { rows, charges: 0, transfers: 0, journals: 0, postings: 0, seconds: 0, merchantId };
  const posting = (journal: string, account: string, amount: number) => {
    insertPosting.run(journal, account, amount);
    report.postings++;
  };
  db.exec('BEGIN');
  try {
    for (let i = 0; i < rows; i++) {
      time = START + i * STEP_MS;
      const amount = 100 + Math.floor(roll() * 999_900);
      const r = roll();
      const status = r < 0.8 ? 'success' : r < 0.95 ? 'failed' : 'pending';
      if (roll() < 0.7) {
        const id = ids.next('chg');
        const fees = Math.ceil(amount / 100);
        const settled = status === 'success';
        insertCharge.run(
          id,
          merchantId,
          status === 'pending' ? 'pending_provider' : status,
          amount,
          fees,
          '233551234987',
          'mtn-momo',
          status === 'pending' ? null : `mtn-${id}`,
          status === 'failed' ? 'insufficient_funds' : null,
          status === 'failed' ? 'NOT_ENOUGH_FUNDS' : null,
          time,
          time + 5_000,
        );
        insertTransaction.run(merchantId, 'charge', id, time);
        report.charges++;
        if (settled) {
          const journal = ids.next('jrn');
          insertJournal.run(journal, 'charge.settled', 'charge', id, 'momo collection via mtn-momo', time + 5_000);
          report.journals++;
          posting(journal, 'external:provider:mtn-momo', -amount);
          posting(journal, wallet, amount - fees);
          posting(journal, 'revenue:fees', fees);
        }
      } else {
        const id = ids.next('trf');
        const bank = roll() < 0.2;
        const fees = bank ? 200 : 100;
        const provider = bank ? 'bank-rail' : 'mtn-momo';
        insertTransfer.run(
          id,
          merchantId,
          status,
          amount,
          fees,
          bank ? 'bank' : 'momo',
          bank ? null : '233551234987',
          bank ? null : 'MTN',
          bank ? '1000000001' : null,
          bank ? '040100' : null,
          bank ? 'Ama Owusu' : null,
          provider,
          status === 'pending' ? null : `${provider}-${id}`,
          status === 'failed' ? 'insufficient_funds' : null,
          status === 'failed' ? (bank ? '51' : 'NOT_ENOUGH_FUNDS') : null,
          time,
          time + 5_000,
        );
        insertTransaction.run(merchantId, 'transfer', id, time);
        report.transfers++;
        if (status === 'success') {
          const journal = ids.next('jrn');
          insertJournal.run(journal, 'transfer.settled', 'transfer', id, `payout via ${provider}`, time + 5_000);
          report.journals++;
          posting(journal, wallet, -(amount + fees));
          posting(journal, `external:provider:${provider}`, amount);
          posting(journal, 'revenue:fees', fees);
        }
      }
    }
    // What the ledger keeps with its postings: each account's running sum.
    db.exec(`INSERT INTO ledger_balances (environment, account, currency, balance)
               SELECT environment, account, currency, SUM(amount) FROM ledger_postings WHERE true GROUP BY environment, account, currency
             ON CONFLICT (environment, account, currency) DO UPDATE SET balance = excluded.balance`);
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    db.close();
    throw err;
  }
  // No ANALYZE: railyard never runs it, so the planner sees what it would see in a grown database.
  db.exec('PRAGMA wal_checkpoint(TRUNCATE);');
  db.close();
  report.seconds = (performance.now() - started) / 1_000;
  return report;
}

/**
 * The list databases of one run, built once and shared by the measures that read them (the list
 * page and memory measures), never by two servers that write at the same time.
 */
export class DatabaseCache {
  private readonly built = new Map<number, { path: string; report: SeedReport }>();

  constructor(
    private readonly runDir: string,
    private readonly log: (message: string) => void,
  ) {}

  async get(rows: number): Promise<{ path: string; report: SeedReport }> {
    const hit = this.built.get(rows);
    if (hit) return hit;
    const path = join(this.runDir, `list-${rows}.sqlite`);
    if (existsSync(path)) throw new Error(`${path} exists already`);
    // railyard creates the schema, the sandbox merchant and its key, as on any first start.
    this.log(`  building a ${rows.toLocaleString('en')}-row database (schema from a first start of railyard)`);
    const server = await RailyardProcess.start({ dir: this.runDir, label: `schema-${rows}`, db: path, clock: 'virtual' });
    await server.stop();
    const report = seedDatabase(path, rows);
    this.log(`  seeded ${rows.toLocaleString('en')} rows (${report.charges} charges, ${report.transfers} transfers, ${report.postings} postings) in ${report.seconds.toFixed(1)} s`);
    const entry = { path, report };
    this.built.set(rows, entry);
    return entry;
  }
}
