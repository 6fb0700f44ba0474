// Scenario decisions on a shared (PostgreSQL) store: each locks the state's row, and decisions
// asked for while one is on its way share the next lock, in the order they were asked for.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadScenarios } from '../../src/railyard-scenarios.ts';
import { RuleEngine } from '../../src/scenarios/rule-engine.ts';
import type { Db, Store, TransactionOptions } from '../../src/store/db.ts';
import { PostgresStore } from '../../src/store/postgres-store.ts';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.ts';

let cluster: Promise<PostgresCluster> | undefined;
const postgres = () => (cluster ??= startPostgresCluster());
afterAll(async () => {
  if (cluster) await (await cluster).stop();
}, 60_000);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const STEPS = Array.from({ length: 12 }, (_, i) => `Step ${i + 1}`);

/** An engine whose rule answers 0241110009's name enquiries with the next step at each call, on `store`. */
function engineOn(store: Store): RuleEngine {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-decisions-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'steps.yaml'),
    `version: 1
name: steps
rules:
  - name: a new name each call
    match: { msisdn: "0241110009" }
    resolve:
      any: [${STEPS.map((s) => `{ name: ${s} }`).join(', ')}]
`,
  );
  const engine = new RuleEngine(loadScenarios([join(dir, 'steps.yaml')]).rules);
  engine.share(store);
  return engine;
}

async function sharedStore(): Promise<{ store: Store; transactions: () => number }> {
  const url = await (await postgres()).createDatabase();
  const pg = await PostgresStore.open(url);
  cleanups.push(() => pg.close());
  let transactions = 0;
  const store: Store = {
    kind: pg.kind,
    run: (sql, params) => pg.run(sql, params),
    get: (sql, params) => pg.get(sql, params),
    all: (sql, params) => pg.all(sql, params),
    transaction: <T>(work: (tx: Db) => Promise<T>, options?: TransactionOptions) => {
      transactions++;
      return pg.transaction(work, options);
    },
    close: () => pg.close(),
  };
  return { store, transactions: () => transactions };
}

const call = { provider: 'mtn-momo', operation: 'resolve', channel: 'momo', msisdn: '233241110009' } as const;
const nameOf = (decision: Awaited<ReturnType<RuleEngine['decideShared']>>) => decision?.behaviour.name;

describe('scenario decisions on a shared store', () => {
  it('answers calls asked for at once in the order asked, sharing the lock of the state row between them', async () => {
    const { store, transactions } = await sharedStore();
    const engine = engineOn(store);
    const decisions = await Promise.all(STEPS.map(() => engine.decideShared({ ...call })));
    expect(decisions.map(nameOf)).toEqual(STEPS);
    // The first takes the lock alone; the rest, asked for while it was on its way, share the next.
    expect(transactions()).toBeLessThan(STEPS.length);
  });

  it('continues on a second engine (another instance) where the first left off, calls of both at once taking each step once', async () => {
    const { store } = await sharedStore();
    const [a, b] = [engineOn(store), engineOn(store)];
    const decisions = await Promise.all(STEPS.map((_, i) => (i % 2 === 0 ? a : b).decideShared({ ...call })));
    expect(decisions.map(nameOf).sort()).toEqual([...STEPS].sort());
    expect(nameOf(await a.decideShared({ ...call }))).toBe(STEPS.at(-1));
  });
});
