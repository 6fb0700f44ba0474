import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 15: services stop writing SQL, and routes stop touching the store. Outside src/store/
// (the Store port, its adapters, the migrations and the repositories in store/repositories/)
// no file holds a SQL statement or calls the Db itself, and no route opens a transaction.

const SRC = resolve(import.meta.dirname, '../../src');
// Upper case, as this code base writes SQL (so an HTML `<select>` … "from" in a page is not one).
const STATEMENT = /\b(SELECT\s[\s\S]*?\sFROM|INSERT\s+INTO|UPDATE\s+[\w${}.]+\s+SET|DELETE\s+FROM)\b/;
const DB_CALL = /\b(tx|db|store)\.(run|get|all)\s*[<(]/;
// A route naming the store as code (deps.store, `{ store, … }`, `store: Store`, an argument, an
// import from store/), not the word in a description ("store the key now", "its own store").
const STORE_REF = /[.{(,]\s*store\b|\bstore\s*:|\bStore\b|from\s+['"]\.\.\/store\//;
// A parameter whose Db (or Store) defaults to the object's own store: called inside a transaction
// without it, the method waited on the store for the transaction that was waiting on the method.
const DB_DEFAULT = /:\s*(Db|Store)\s*=\s*this\./;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function offenders(paths: string[], checks: [RegExp, string][]): string[] {
  return paths.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const found = checks.filter(([re]) => re.test(text)).map(([, what]) => what);
    return found.length ? [`${relative(SRC, file)}: ${found.join(', ')}`] : [];
  });
}

const judged = files(SRC).filter((f) => !relative(SRC, f).startsWith('store/'));

describe('SQL lives in the repositories', () => {
  it('judges every source file outside src/store/', () => {
    const names = judged.map((f) => relative(SRC, f));
    for (const file of [
      'app.ts',
      'ledger/ledger.ts',
      'settlement/settlement-machine.ts',
      'webhooks/webhook-dispatcher.ts',
      'scheduler/scheduler.ts',
      'trading/trade-service.ts',
      'mocks/engine/mock-transaction-book.ts',
      'dashboard/pages/sandbox-page.ts',
    ]) {
      expect(names).toContain(file);
    }
  });

  it('the checks know a statement and a Db call when they see one', () => {
    expect(STATEMENT.test("'SELECT balance FROM ledger_balances WHERE environment = ?'")).toBe(true);
    expect(STATEMENT.test('`UPDATE ${this.table} SET provider = ?`')).toBe(true);
    expect(STATEMENT.test("'INSERT INTO transactions (environment) VALUES (?)'")).toBe(true);
    expect(STATEMENT.test("'DELETE FROM jobs WHERE id = ?'")).toBe(true);
    expect(STATEMENT.test('select the rows from the page')).toBe(false);
    expect(DB_CALL.test("await tx.run('…')")).toBe(true);
    expect(DB_CALL.test('await store.get<Row>(sql)')).toBe(true);
    expect(DB_CALL.test('await this.repo.find(db, id)')).toBe(false);
  });

  it('no file outside src/store/ runs SQL of its own', () => {
    expect(
      offenders(judged, [
        [STATEMENT, 'a SQL statement'],
        [DB_CALL, 'a Db call'],
      ]),
    ).toEqual([]);
  });

  it('no route runs a statement or opens a transaction: it calls a service', () => {
    const routes = judged.filter((f) => f.endsWith('.routes.ts'));
    expect(routes.length).toBeGreaterThan(10);
    expect(offenders(routes, [[/\bstore\.transaction\s*\(/, 'a transaction']])).toEqual([]);
  });

  it('the store check knows a route naming the store, and not the word in prose', () => {
    expect(STORE_REF.test('deps.charges.get(deps.store, auth, id)')).toBe(true);
    expect(STORE_REF.test('const { store, apiKeys } = deps;')).toBe(true);
    expect(STORE_REF.test('apiKeys.get(store, auth.merchantId, id)')).toBe(true);
    expect(STORE_REF.test('export interface WalletRouteDeps {\n  store: Store;\n}')).toBe(true);
    expect(STORE_REF.test("import type { Db } from '../store/db.ts';")).toBe(true);
    expect(STORE_REF.test("ok('Key issued; store the key now, it is not shown again')")).toBe(false);
    expect(STORE_REF.test("'a fresh in-process sandbox with its own store and virtual clock'")).toBe(false);
    expect(STORE_REF.test("'the key itself is stored only as a hash'")).toBe(false);
  });

  it('no route knows the store: services read and write on their own', () => {
    const routes = judged.filter((f) => f.endsWith('.routes.ts') || relative(SRC, f) === join('http', 'record-list-route.ts'));
    expect(routes.map((f) => relative(SRC, f))).toContain(join('http', 'record-list-route.ts'));
    expect(routes.map((f) => relative(SRC, f))).toContain(join('webhooks', 'event-stream.routes.ts'));
    expect(offenders(routes, [[STORE_REF, 'the store']])).toEqual([]);
  });

  it('no method defaults its Db to the store: it takes the Db it runs on, or names the store itself', () => {
    expect(DB_DEFAULT.test('async get(auth: AuthContext, id: string, db: Db = this.deps.store): Promise<T> {')).toBe(true);
    expect(DB_DEFAULT.test('issueInTransaction(input: IssueInput, store: Store = this.deps.store) {')).toBe(true);
    expect(DB_DEFAULT.test('private readonly direct: Db = {')).toBe(false);
    expect(offenders(files(SRC), [[DB_DEFAULT, 'a Db defaulting to the store']])).toEqual([]);
  });
});
