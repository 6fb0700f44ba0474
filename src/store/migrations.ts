// The schema of both stores, written once in SQLite's dialect. PostgreSQL runs each migration as
// postgresMigrationSql (postgres-sql.ts) renders it: INTEGER is BIGINT, an AUTOINCREMENT key an
// identity column, instr() strpos(). A migration those rules cannot render carries its
// PostgreSQL form in `postgres` and says why; test/unit/postgres-migrations.test.ts fails on one
// that needs it, and test/contract/schema-parity.test.ts compares the schemas both stores end with.
//
// Append-only: a released migration is never edited (nor its rendering, so mind the rules); add
// the next one.
export interface Migration {
  version: number;
  name: string;
  /** SQLite's form, and PostgreSQL's by the rules unless `postgres` is given. */
  sql: string;
  /** PostgreSQL's own form, where it differs from SQLite's in more than the rules' tokens. */
  postgres?: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'foundation',
    sql: `
CREATE TABLE merchants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants(id),
  environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
  key_hash TEXT NOT NULL UNIQUE,
  key_hint TEXT NOT NULL,
  scopes TEXT NOT NULL,
  signing_secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

CREATE TABLE seen_signatures (
  key_id TEXT NOT NULL,
  signature TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (key_id, signature)
);

CREATE TABLE idempotency_keys (
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
  resource_id TEXT,
  response_status INTEGER,
  response_body TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (environment, merchant_id, idempotency_key)
);

CREATE TABLE ledger_journals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  kind TEXT NOT NULL,
  ref_type TEXT NOT NULL,
  ref_id TEXT NOT NULL,
  reverses TEXT,
  memo TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX ledger_journals_ref ON ledger_journals (ref_type, ref_id);

CREATE TABLE ledger_postings (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  journal_id TEXT NOT NULL REFERENCES ledger_journals(id),
  environment TEXT NOT NULL,
  account TEXT NOT NULL,
  currency TEXT NOT NULL,
  amount INTEGER NOT NULL
);
CREATE INDEX ledger_postings_account ON ledger_postings (environment, account, currency);
CREATE INDEX ledger_postings_journal ON ledger_postings (journal_id);

CREATE TABLE charges (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  fees INTEGER NOT NULL,
  channel TEXT NOT NULL,
  msisdn TEXT NOT NULL,
  network TEXT NOT NULL,
  provider TEXT,
  provider_reference TEXT,
  failure_reason TEXT,
  provider_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE transfers (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  fees INTEGER NOT NULL,
  channel TEXT NOT NULL,
  msisdn TEXT,
  network TEXT,
  account_number TEXT,
  bank_code TEXT,
  bank_account_name TEXT,
  provider TEXT,
  provider_reference TEXT,
  failure_reason TEXT,
  provider_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Every provider call a charge, transfer or name enquiry made, in order: the failover trail.
CREATE TABLE rail_attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL,
  ref_type TEXT NOT NULL,
  ref_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  operation TEXT NOT NULL,
  outcome TEXT NOT NULL,
  provider_reference TEXT,
  detail TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX rail_attempts_ref ON rail_attempts (ref_type, ref_id);

-- One row per money movement, in insertion order: the keyset for GET /transactions.
CREATE TABLE transactions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX transactions_merchant ON transactions (environment, merchant_id, seq);

CREATE TABLE outbox_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  type TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  dispatched_at INTEGER
);
CREATE INDEX outbox_events_object ON outbox_events (object_type, object_id);

CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  run_at INTEGER NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs (state, run_at, seq);
`,
  },
  {
    version: 2,
    name: 'trading',
    sql: `
ALTER TABLE merchants ADD COLUMN trading_stage TEXT NOT NULL DEFAULT 'sandbox' CHECK (trading_stage IN ('none', 'requested', 'sandbox', 'live'));

-- Pinned or admin-set price legs (USDT, USDC: USD price; FX: USD/GHS). Rates are 8-decimal
-- fixed-point integers kept as text, so no float ever holds one.
CREATE TABLE market_legs (
  leg TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  as_of INTEGER NOT NULL,
  pinned INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE market_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  frozen_at INTEGER
);

CREATE TABLE quotes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  side TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
  asset TEXT NOT NULL,
  network TEXT NOT NULL,
  asset_amount INTEGER NOT NULL,
  net_fiat_amount INTEGER NOT NULL,
  applied_rate TEXT NOT NULL,
  benchmark_rate TEXT NOT NULL,
  usd_price TEXT NOT NULL,
  fx_rate TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('created', 'consumed', 'expired')),
  trade_id TEXT,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE trades (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  quote_id TEXT NOT NULL UNIQUE REFERENCES quotes(id),
  side TEXT NOT NULL,
  asset TEXT NOT NULL,
  network TEXT NOT NULL,
  status TEXT NOT NULL,
  asset_amount INTEGER NOT NULL,
  net_fiat_amount INTEGER NOT NULL,
  applied_rate TEXT NOT NULL,
  benchmark_rate TEXT NOT NULL,
  delivery_address TEXT,
  deposit_address TEXT,
  transaction_id TEXT,
  deposited_amount INTEGER,
  deposited_at INTEGER,
  excess_amount INTEGER,
  settled_fiat_amount INTEGER,
  confirmations INTEGER NOT NULL DEFAULT 0,
  failure_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX trades_merchant ON trades (environment, merchant_id, seq);

CREATE TABLE trade_status_history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  trade_id TEXT NOT NULL,
  status TEXT NOT NULL,
  note TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX trade_status_history_trade ON trade_status_history (trade_id, seq);
`,
  },
  {
    version: 3,
    name: 'webhooks',
    sql: `
CREATE TABLE webhook_endpoints (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  url TEXT NOT NULL,
  event_types TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,
  failing INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (environment, merchant_id);

CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries (environment, merchant_id, seq);

CREATE TABLE webhook_attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  trigger TEXT NOT NULL CHECK (trigger IN ('automatic', 'redelivery')),
  at INTEGER NOT NULL,
  url TEXT NOT NULL,
  http_status INTEGER,
  latency_ms INTEGER NOT NULL,
  response_excerpt TEXT,
  error TEXT
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, seq);
`,
  },
  {
    version: 4,
    name: 'late-settlements',
    sql: `
-- A success reported by a provider the service had abandoned (after a timeout): recorded once
-- per object and provider, and reversed.
CREATE TABLE late_settlements (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  amount INTEGER NOT NULL,
  journal_id TEXT NOT NULL,
  reversal_journal_id TEXT NOT NULL,
  source TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (object_type, object_id, provider)
);
`,
  },
  {
    version: 5,
    name: 'restarts',
    sql: `
-- Signatures cover the Idempotency-Key now, so a reused signature is an idempotent retry.
DROP TABLE seen_signatures;

-- Process facts that outlive a process: the boot counter (ids never repeat across restarts;
-- claims name the boot that made them) and where a virtual clock stood.
CREATE TABLE runtime_state (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);

-- Which boot claimed a key: a key still in flight from an earlier boot was orphaned by a stop.
ALTER TABLE idempotency_keys ADD COLUMN boot INTEGER;
CREATE INDEX idempotency_keys_in_flight ON idempotency_keys (state, boot);

-- The provider mocks' transactions, so that they deduplicate by the upstream's reference across
-- restarts, as the real upstreams do.
CREATE TABLE mock_transactions (
  provider TEXT NOT NULL,
  book TEXT NOT NULL,
  reference TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider, book, reference)
);
`,
  },
  {
    version: 6,
    name: 'hot-path-indexes',
    sql: `
-- The dispatcher looks for undispatched events on every scheduler pass; without this it read
-- every event ever dispatched (a clock advance over 20k callbacks spent most of its time there).
CREATE INDEX outbox_events_undispatched ON outbox_events (seq) WHERE dispatched_at IS NULL;
-- Daily and monthly trading limits sum a merchant's trades since a time.
CREATE INDEX trades_merchant_created ON trades (environment, merchant_id, created_at);
-- Recovery and the status poll find an in-flight key by the resource it claimed.
CREATE INDEX idempotency_keys_resource ON idempotency_keys (resource_id);
`,
  },
  {
    version: 7,
    name: 'job-leases',
    sql: `
-- A job is claimed before it runs: by a boot, until a real time. Several processes can then
-- share one jobs table; a dead process's claims run out.
ALTER TABLE jobs ADD COLUMN claimed_by INTEGER;
ALTER TABLE jobs ADD COLUMN lease_until INTEGER;
`,
  },
  {
    version: 8,
    name: 'list-indexes',
    sql: `
-- Lists filtered by type walk only the rows of that type, newest first; events are listed per
-- merchant without reading every merchant's.
CREATE INDEX transactions_merchant_type ON transactions (environment, merchant_id, object_type, seq);
CREATE INDEX outbox_events_merchant ON outbox_events (environment, merchant_id, seq);
CREATE INDEX outbox_events_merchant_type ON outbox_events (environment, merchant_id, type, seq);
`,
  },
  {
    version: 9,
    name: 'ledger-balances',
    sql: `
-- Each account's balance, kept by the ledger in the transaction that writes its postings: reading
-- one was a SUM over every posting the account ever had (a busy wallet slowed each transfer down).
-- Postings stay the source of truth; this is their running sum, checked against them in tests.
CREATE TABLE ledger_balances (
  environment TEXT NOT NULL,
  account TEXT NOT NULL,
  currency TEXT NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (environment, account, currency)
);
INSERT INTO ledger_balances (environment, account, currency, balance)
  SELECT environment, account, currency, SUM(amount) FROM ledger_postings GROUP BY environment, account, currency;
`,
  },
  {
    version: 10,
    name: 'v1-family',
    sql: `
-- The /v1 family: collections (momo, card, bank debit), payouts (single and bulk), bills, and
-- payment links. Each record a provider settles has the columns the settlement machine needs.
CREATE TABLE collections (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending_approval', 'settled', 'failed')),
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  fees INTEGER NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('momo', 'card', 'bank')),
  msisdn TEXT,
  network TEXT,
  card_brand TEXT,
  card_last4 TEXT,
  account_number TEXT,
  bank_code TEXT,
  payment_link_id TEXT,
  description TEXT,
  next_action TEXT,
  provider TEXT,
  provider_reference TEXT,
  failure_reason TEXT,
  provider_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX collections_payment_link ON collections (payment_link_id);

CREATE TABLE payouts (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  fees INTEGER NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('momo', 'bank')),
  msisdn TEXT,
  network TEXT,
  account_number TEXT,
  bank_code TEXT,
  bank_account_name TEXT,
  narration TEXT,
  bulk_id TEXT,
  bulk_index INTEGER,
  provider TEXT,
  provider_reference TEXT,
  failure_reason TEXT,
  provider_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX payouts_bulk ON payouts (bulk_id, bulk_index);

CREATE TABLE bills (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
  category TEXT NOT NULL,
  biller TEXT NOT NULL,
  product TEXT,
  customer TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  fees INTEGER NOT NULL,
  token TEXT,
  units TEXT,
  provider TEXT,
  provider_reference TEXT,
  failure_reason TEXT,
  provider_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE payment_links (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  slug TEXT NOT NULL UNIQUE,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  amount INTEGER,
  currency TEXT NOT NULL,
  description TEXT NOT NULL,
  expires_at INTEGER,
  usage_limit INTEGER,
  completed_count INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('active', 'deactivated', 'completed')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX payment_links_merchant ON payment_links (environment, merchant_id, seq);

-- Whose journal it is, so GET /v1/ledger/entries and settlement reports find a merchant's entries
-- without scanning the house's: the merchant whose accounts it posts to (or whose object it is).
ALTER TABLE ledger_journals ADD COLUMN merchant_id TEXT;
UPDATE ledger_journals SET merchant_id = (
  SELECT substr(p.account, 10, instr(substr(p.account, 10), ':') - 1) FROM ledger_postings p
   WHERE p.journal_id = ledger_journals.id AND p.account LIKE 'merchant:%' LIMIT 1);
UPDATE ledger_journals SET merchant_id = (
  SELECT t.merchant_id FROM transactions t WHERE t.object_id = ledger_journals.ref_id)
 WHERE merchant_id IS NULL;
CREATE INDEX ledger_journals_merchant ON ledger_journals (environment, merchant_id, seq);
`,
  },
  {
    version: 11,
    name: 'v1-collections-card-token',
    // A card collection paid with a processor token keeps the token (it is not a card number, so
    // an interrupted initiation can be resumed with it); a card number is never stored.
    sql: `
ALTER TABLE collections ADD COLUMN card_token TEXT;
`,
  },
  {
    version: 12,
    name: 'v1-payment-links-amount-bounds',
    // An open-amount payment link may bound what the customer types (minor units; null: no bound).
    sql: `
ALTER TABLE payment_links ADD COLUMN min_amount INTEGER;
ALTER TABLE payment_links ADD COLUMN max_amount INTEGER;
`,
  },
  {
    version: 13,
    name: 'v1-payout-bulks',
    sql: `
-- A bulk payout: its items are payouts (payouts.bulk_id); the items refused at creation are kept
-- here with their index and error, so the batch reads back as it was answered.
CREATE TABLE payout_bulks (
  id TEXT PRIMARY KEY,
  environment TEXT NOT NULL,
  merchant_id TEXT NOT NULL,
  item_count INTEGER NOT NULL,
  rejections TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`,
  },
  {
    version: 14,
    name: 'v1-ledger-reports',
    // Settlement reports and GET /v1/ledger/entries?from=&to= read a merchant's journals by time.
    sql: `
CREATE INDEX ledger_journals_merchant_time ON ledger_journals (environment, merchant_id, created_at);
`,
  },
  {
    version: 15,
    name: 'api-key-roles-and-ip-allowlists',
    // A key's role limits it to an area (finance or engineering; admin: everything its scopes allow),
    // and a non-empty allowlist (JSON array of addresses and CIDR blocks) limits where it is accepted from.
    sql: `
ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'finance', 'engineering'));
ALTER TABLE api_keys ADD COLUMN ip_allowlist TEXT NOT NULL DEFAULT '[]';
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, created_at);
`,
  },
  {
    version: 16,
    name: 'inspector',
    sql: `
-- What the object timeline shows and nothing else kept: each callback and status poll that reached
-- a record (in the transaction that handled it), and how long each provider call took.
CREATE TABLE rail_notices (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  environment TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('callback', 'poll')),
  status TEXT NOT NULL CHECK (status IN ('success', 'failed', 'pending')),
  reason TEXT,
  result TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX rail_notices_object ON rail_notices (object_id, seq);
ALTER TABLE rail_attempts ADD COLUMN latency_ms INTEGER;
-- A mock call names the upstream's reference; the inspector finds its object by it.
CREATE INDEX rail_attempts_provider_reference ON rail_attempts (provider_reference);
`,
  },
  {
    version: 17,
    name: 'quotes-list',
    // GET /api/v1/trades/quotes pages a merchant's quotes newest first on their insertion sequence.
    sql: `
CREATE INDEX quotes_merchant ON quotes (environment, merchant_id, seq);
`,
  },
  {
    version: 18,
    name: 'shared-state',
    // State that instances sharing one database keep together: scenario counters and states,
    // provider outages. Text values (JSON), beside runtime_state's integers.
    sql: `
CREATE TABLE shared_state (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`,
  },
  {
    version: 19,
    name: 'mock-transaction-lookup-keys',
    // A mock finds a transaction by an id of its own (Hubtel's transaction ids, the card processor's
    // charge id, the direct-debit rail's debit id) through this index, never by reading its book.
    // The transactions kept before it are filed here once; the first kept keeps a shared key.
    sql: `
CREATE TABLE mock_transaction_keys (
  provider TEXT NOT NULL,
  book TEXT NOT NULL,
  lookup_key TEXT NOT NULL,
  reference TEXT NOT NULL,
  PRIMARY KEY (provider, book, lookup_key)
);
INSERT OR IGNORE INTO mock_transaction_keys (provider, book, lookup_key, reference)
  SELECT provider, book, key, reference FROM (
    SELECT provider, book, reference, created_at, json_extract(body, '$.transactionId') AS key FROM mock_transactions WHERE provider = 'hubtel' AND book IN ('receive', 'send')
    UNION ALL SELECT provider, book, reference, created_at, json_extract(body, '$.externalTransactionId') FROM mock_transactions WHERE provider = 'hubtel' AND book IN ('receive', 'send')
    UNION ALL SELECT provider, book, reference, created_at, json_extract(body, '$.id') FROM mock_transactions WHERE provider = 'card-processor' AND book = 'charges'
    UNION ALL SELECT provider, book, reference, created_at, json_extract(body, '$.debitId') FROM mock_transactions WHERE provider = 'direct-debit' AND book = 'debits'
  ) WHERE key IS NOT NULL ORDER BY created_at, reference;
`,
    // PostgreSQL differs in substance here: INSERT OR IGNORE is ON CONFLICT … DO NOTHING, a JSON
    // field is read with ->> rather than json_extract, and the derived table needs a name.
    postgres: `
CREATE TABLE mock_transaction_keys (
  provider TEXT NOT NULL,
  book TEXT NOT NULL,
  lookup_key TEXT NOT NULL,
  reference TEXT NOT NULL,
  PRIMARY KEY (provider, book, lookup_key)
);
INSERT INTO mock_transaction_keys (provider, book, lookup_key, reference)
  SELECT provider, book, key, reference FROM (
    SELECT provider, book, reference, created_at, body::jsonb ->> 'transactionId' AS key FROM mock_transactions WHERE provider = 'hubtel' AND book IN ('receive', 'send')
    UNION ALL SELECT provider, book, reference, created_at, body::jsonb ->> 'externalTransactionId' FROM mock_transactions WHERE provider = 'hubtel' AND book IN ('receive', 'send')
    UNION ALL SELECT provider, book, reference, created_at, body::jsonb ->> 'id' FROM mock_transactions WHERE provider = 'card-processor' AND book = 'charges'
    UNION ALL SELECT provider, book, reference, created_at, body::jsonb ->> 'debitId' FROM mock_transactions WHERE provider = 'direct-debit' AND book = 'debits'
  ) AS filed WHERE key IS NOT NULL ORDER BY created_at, reference
  ON CONFLICT (provider, book, lookup_key) DO NOTHING;
`,
  },
  {
    version: 20,
    name: 'late-settlements-by-object',
    // An object's timeline reads its late settlements by object id alone; the UNIQUE key leads with
    // object_type, so without this index that read went through every late settlement.
    sql: `
CREATE INDEX late_settlements_object ON late_settlements (object_id, seq);
`,
  },
  {
    version: 21,
    name: 'job-partitions',
    // Jobs run side by side, one at a time per object: partition_key names the object a job acts
    // on (a charge, a quote, a webhook endpoint); a job without one is its own partition.
    sql: `
ALTER TABLE jobs ADD COLUMN partition_key TEXT;
`,
  },
  {
    version: 22,
    name: 'drop-unused-ledger-indexes',
    // Every settlement wrote entries to two indexes no query reads by: a merchant's journals are
    // found by (environment, merchant_id, created_at), which has the same prefix, and postings by
    // journal; only the trial balance read postings by account, and it reads all of them.
    sql: `
DROP INDEX ledger_journals_merchant;
DROP INDEX ledger_postings_account;
`,
  },
  {
    version: 23,
    name: 'fleet-market',
    // The simulated market is the fleet's: every instance on the database walks from the same
    // origin (clock time and seed) and the same anchors (where resume() restarted each walk), and
    // re-reads the market only when its version moved (a pin, an FX rate, a freeze, a resume).
    sql: `
ALTER TABLE market_state ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE market_state ADD COLUMN origin_at INTEGER;
ALTER TABLE market_state ADD COLUMN seed INTEGER;
CREATE TABLE market_walks (
  asset TEXT PRIMARY KEY,
  step INTEGER NOT NULL,
  value TEXT NOT NULL
);
`,
  },
  {
    version: 24,
    name: 'dashboard-sessions',
    // Dashboard sessions in the database, so any instance serves any session: found by the SHA-256
    // of the cookie's token, their contents sealed with a key derived from the token (the stored
    // row reveals no API key without the cookie), dropped once idle past expires_at.
    sql: `
CREATE TABLE dashboard_sessions (
  token_hash TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  signed_in INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_eviction ON dashboard_sessions (signed_in, last_seen);
`,
  },
  {
    version: 25,
    name: 'request-log',
    // The requests inspector's log on a shared database: a ring per environment of
    // inspector.max_requests slots. The n-th request of an environment (runtime_state
    // request_log:<environment> counts them) overwrites slot n mod max_requests, so the table never
    // holds more than the cap and no write reads more than the one row it replaces.
    sql: `
CREATE TABLE request_log (
  environment TEXT NOT NULL,
  slot INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  merchant_id TEXT,
  object_id TEXT,
  kind TEXT NOT NULL,
  status INTEGER,
  entry TEXT NOT NULL,
  PRIMARY KEY (environment, slot)
);
CREATE INDEX request_log_seq ON request_log (environment, seq);
CREATE INDEX request_log_object ON request_log (environment, object_id, seq);
`,
  },
  {
    version: 26,
    name: 'job-lanes',
    // Jobs that wait on a merchant's endpoint (webhook deliveries) in a lane of their own: a round
    // takes the due jobs of each lane, so deliveries are sent while the callbacks beside them
    // settle instead of queueing behind every callback due at the same instant.
    sql: `
ALTER TABLE jobs ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_lane_due ON jobs (lane, run_at, seq) WHERE state = 'pending';
`,
  },
  {
    version: 27,
    name: 'request-log-sequences',
    // On a shared database the requests inspector numbers its entries from a sequence per
    // environment, not a counter row: every request of the fleet incremented that one row and held
    // its lock until the commit was flushed, so requests queued behind each other. A sequence
    // neither locks nor waits for a commit. It starts after the counter's last number.
    sql: `-- SQLite: one process numbers its requests with the runtime_state counter, as before.
SELECT 1;
`,
    postgres: `
CREATE SEQUENCE request_log_test_seq;
CREATE SEQUENCE request_log_live_seq;
SELECT setval('request_log_test_seq', COALESCE((SELECT value FROM runtime_state WHERE name = 'request_log:test'), 0) + 1, false);
SELECT setval('request_log_live_seq', COALESCE((SELECT value FROM runtime_state WHERE name = 'request_log:live'), 0) + 1, false);
DELETE FROM runtime_state WHERE name IN ('request_log:test', 'request_log:live');
`,
  },
  {
    version: 28,
    name: 'api-faults',
    // Faults on the merchant API for the instances sharing one database: the faults switched on
    // through the sandbox control (numbered by seq, so flt_<seq> is unique in the fleet), and each
    // rule's counts, rate-limit windows (per rule and API key) and named states, each moved by one
    // atomic statement. SQLite keeps them in the process that owns the database, as before.
    sql: `
CREATE TABLE api_faults (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  rule TEXT NOT NULL
);
CREATE TABLE api_fault_counts (
  rule_key TEXT PRIMARY KEY,
  matched INTEGER NOT NULL,
  fired INTEGER NOT NULL
);
CREATE TABLE api_fault_windows (
  rule_key TEXT NOT NULL,
  key_id TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (rule_key, key_id)
);
CREATE TABLE api_fault_states (
  scenario TEXT PRIMARY KEY,
  state TEXT NOT NULL
);
`,
  },
  {
    version: 29,
    name: 'jobs-finished-index',
    // jobs_due indexed every job by state: each job was written to it when scheduled, and moved
    // within it (a delete and an insert) when it finished, on top of jobs_lane_due, which already
    // holds the pending jobs. The finished jobs are read once, at start-up, for the latest run time
    // (a process killed in an advance): a partial index of finished jobs answers that, and a job
    // enters it once, when it finishes.
    sql: `
DROP INDEX jobs_due;
CREATE INDEX jobs_finished ON jobs (run_at) WHERE state <> 'pending';
`,
  },
  {
    version: 30,
    name: 'outbox-pending',
    // The events not yet fanned out into deliveries, in a queue of their own: a row of one key,
    // inserted with the event and deleted when it fans out. They were marked by an update of
    // dispatched_at, found by a partial index on it; on PostgreSQL that update wrote a new version
    // of every event, and an entry for it in each of the outbox's five other indexes, as costly as
    // writing the event again.
    sql: `
CREATE TABLE outbox_pending (seq INTEGER PRIMARY KEY);
INSERT INTO outbox_pending (seq) SELECT seq FROM outbox_events WHERE dispatched_at IS NULL;
DROP INDEX outbox_events_undispatched;
ALTER TABLE outbox_events DROP COLUMN dispatched_at;
`,
  },
  {
    version: 31,
    name: 'jobs-claimed-index',
    // The jobs a process holds, for its heartbeat's renewal of their leases and for freeing them
    // when it leaves or dies: a claimed job has a lease until it finishes or is freed, so the
    // index holds the jobs claimed now, not the history. Those statements read every pending job.
    sql: `
CREATE INDEX jobs_claimed ON jobs (claimed_by, lease_until) WHERE lease_until IS NOT NULL;
`,
  },
];
