import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';

// History for the history measure: `n` successful momo charges as railyard leaves them, each with
// its transactions row, its settlement journal (three postings) and the mtn-momo mock's
// transaction in its collection book. Written set-wise (INSERT … SELECT over a series) straight
// into a database railyard already created, on SQLite or PostgreSQL, so a million take seconds
// rather than the hours the API would. The mock transaction's body is a real one (the mock kept it
// for a charge made through the API) with its reference replaced, so it reads back like the rest.

export interface HistoryTemplate {
  merchantId: string;
  provider: string;
  book: string;
  reference: string;
  body: string;
}

export interface HistoryReport {
  charges: number;
  mockTransactions: number;
  seconds: number;
}

/** Epoch ms of the first seeded charge, a day apart from nothing railyard dates itself. */
const START = Date.UTC(2025, 0, 1);

interface Dialect {
  /** A CTE `series(i)` over 1..n. */
  series: string;
  id: (prefix: string) => string;
  /** A UUID-shaped reference, unique per i, as MTN's X-Reference-Id is. */
  reference: string;
}

const SQLITE: Dialect = {
  series: 'WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < {{n}})',
  id: (prefix) => `'${prefix}_h' || printf('%010d', i)`,
  reference: `printf('%08x-0000-4000-8000-%012x', i, i)`,
};

const POSTGRES: Dialect = {
  series: 'WITH series(i) AS (SELECT generate_series(1, {{n}}))',
  id: (prefix) => `'${prefix}_h' || lpad(i::text, 10, '0')`,
  reference: `lpad(to_hex(i), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0')`,
};

/** The statements, each over the series of n, with named parameters ({{n}}, {{merchant}}, {{provider}}, {{book}}, {{body}}, {{ref}}). */
function statements(d: Dialect, t: HistoryTemplate): string[] {
  const amount = '(10000 + i % 1000)';
  const fees = `((${amount} + 99) / 100)`;
  const at = `(${START} + i * 1000)`;
  const wallet = `merchant:${t.merchantId}:wallet:available`;
  return [
    `${d.series} INSERT INTO charges (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, provider, provider_reference, failure_reason, provider_reason, created_at, updated_at)
       SELECT ${d.id('chg')}, 'test', {{merchant}}, 'success', ${amount}, 'GHS', ${fees}, 'momo', '233551234987', 'MTN', 'mtn-momo', ${d.reference}, NULL, NULL, ${at}, ${at} + 5000 FROM series`,
    `${d.series} INSERT INTO transactions (environment, merchant_id, object_type, object_id, created_at) SELECT 'test', {{merchant}}, 'charge', ${d.id('chg')}, ${at} FROM series`,
    `${d.series} INSERT INTO ledger_journals (id, environment, kind, ref_type, ref_id, reverses, memo, created_at)
       SELECT ${d.id('jrn')}, 'test', 'charge.settled', 'charge', ${d.id('chg')}, NULL, 'momo collection via mtn-momo', ${at} + 5000 FROM series`,
    `${d.series} INSERT INTO ledger_postings (journal_id, environment, account, currency, amount)
       SELECT ${d.id('jrn')}, 'test', 'external:provider:mtn-momo', 'GHS', -${amount} FROM series
       UNION ALL SELECT ${d.id('jrn')}, 'test', '${wallet}', 'GHS', ${amount} - ${fees} FROM series
       UNION ALL SELECT ${d.id('jrn')}, 'test', 'revenue:fees', 'GHS', ${fees} FROM series`,
    `${d.series} INSERT INTO mock_transactions (provider, book, reference, body, created_at, updated_at)
       SELECT {{provider}}, {{book}}, ${d.reference}, replace({{body}}, {{ref}}, ${d.reference}), ${at}, ${at} + 5000 FROM series`,
  ];
}

const BALANCES = `INSERT INTO ledger_balances (environment, account, currency, balance)
  SELECT environment, account, currency, SUM(amount) FROM ledger_postings WHERE true GROUP BY environment, account, currency
  ON CONFLICT (environment, account, currency) DO UPDATE SET balance = excluded.balance`;

/** The template: the sandbox merchant, and the mock transaction of the one charge made through the API. */
export async function readTemplate(db: string): Promise<HistoryTemplate> {
  const sql = {
    merchant: "SELECT merchant_id FROM api_keys WHERE environment = 'test' ORDER BY created_at LIMIT 1",
    mock: "SELECT provider, book, reference, body FROM mock_transactions WHERE provider = 'mtn-momo' AND book = 'collection' ORDER BY created_at DESC LIMIT 1",
  };
  let merchant: { merchant_id: string } | undefined;
  let mock: Omit<HistoryTemplate, 'merchantId'> | undefined;
  if (db.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      merchant = (await client.query(sql.merchant)).rows[0];
      mock = (await client.query(sql.mock)).rows[0];
    } finally {
      await client.end();
    }
  } else {
    const sqlite = new DatabaseSync(db, { readOnly: true });
    try {
      merchant = sqlite.prepare(sql.merchant).get() as typeof merchant;
      mock = sqlite.prepare(sql.mock).get() as typeof mock;
    } finally {
      sqlite.close();
    }
  }
  if (!merchant) throw new Error(`${db} has no test key: start railyard on it once before seeding`);
  if (!mock) throw new Error(`${db} has no mtn-momo collection: make one charge through the API before seeding`);
  return { merchantId: merchant.merchant_id, ...mock };
}

/** A statement with named parameters as positional ones: `?N` for SQLite, `$N` with a cast for PostgreSQL; and its values. */
function positional(sql: string, values: Record<string, string | number>, postgres: boolean): { text: string; args: (string | number)[] } {
  const names: string[] = [];
  const text = sql.replace(/\{\{([a-z]+)\}\}/g, (_all, name: string) => {
    if (!(name in values)) throw new Error(`no value for {{${name}}}`);
    if (!names.includes(name)) names.push(name);
    const k = names.indexOf(name) + 1;
    return postgres ? `$${k}::${typeof values[name] === 'number' ? 'bigint' : 'text'}` : `?${k}`;
  });
  return { text, args: names.map((n) => values[n]!) };
}

/** Writes `n` charges of history into `db` (a SQLite path or a postgres:// URL), in one transaction. */
export async function seedHistory(db: string, n: number, t: HistoryTemplate): Promise<HistoryReport> {
  const started = performance.now();
  const values = { n, merchant: t.merchantId, provider: t.provider, book: t.book, body: t.body, ref: t.reference };
  if (db.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const sql of statements(POSTGRES, t)) {
        const { text, args } = positional(sql, values, true);
        await client.query(text, args);
      }
      await client.query(BALANCES);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await client.end();
    }
  } else {
    const sqlite = new DatabaseSync(db);
    try {
      sqlite.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;');
      sqlite.exec('BEGIN');
      for (const sql of statements(SQLITE, t)) {
        const { text, args } = positional(sql, values, false);
        sqlite.prepare(text).run(...args);
      }
      sqlite.exec(BALANCES);
      sqlite.exec('COMMIT');
      sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE);');
    } catch (err) {
      try {
        sqlite.exec('ROLLBACK');
      } catch {
        // nothing open
      }
      throw err;
    } finally {
      sqlite.close();
    }
  }
  return { charges: n, mockTransactions: n, seconds: (performance.now() - started) / 1_000 };
}
