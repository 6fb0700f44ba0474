import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 15: services stop writing SQL, and routes stop touching the store. The platform half of
// the code base (webhooks, scheduler, auth, access, sandbox, trading, the mocks' books, the
// inspector, the composition root) holds no SQL statement: its statements live in
// src/store/repositories/. And no route, in either half, runs a statement or opens a transaction.

const SRC = resolve(import.meta.dirname, '../../src');
const FOLDERS = ['webhooks', 'scheduler', 'auth', 'access', 'sandbox', 'trading', 'mocks', 'inspector'];
const STATEMENT = /\b(SELECT\s[\s\S]*?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/i;
const DB_CALL = /\b(tx|db|store)\.(run|get|all)\s*[<(]/;

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

describe('the platform half keeps its SQL in the repositories', () => {
  it('sees the files it judges', () => {
    const judged = FOLDERS.flatMap((f) => files(join(SRC, f))).map((f) => relative(SRC, f));
    expect(judged).toContain('webhooks/webhook-dispatcher.ts');
    expect(judged).toContain('scheduler/scheduler.ts');
    expect(judged).toContain('trading/trade-service.ts');
    expect(judged).toContain('mocks/engine/mock-transaction-book.ts');
  });

  it('the checks know a statement and a Db call when they see one', () => {
    expect(STATEMENT.test("'UPDATE jobs SET state = ? WHERE id = ?'")).toBe(true);
    expect(STATEMENT.test("'SELECT * FROM webhook_endpoints WHERE id = ?'")).toBe(true);
    expect(DB_CALL.test("await tx.run('…')")).toBe(true);
    expect(DB_CALL.test('await store.get<Row>(sql)')).toBe(true);
    expect(DB_CALL.test('await this.repo.find(db, id)')).toBe(false);
  });

  it.each(FOLDERS)('src/%s/ runs no SQL of its own', (folder) => {
    expect(offenders(files(join(SRC, folder)), [[STATEMENT, 'a SQL statement'], [DB_CALL, 'a Db call']])).toEqual([]);
  });

  it('src/app.ts runs no SQL of its own', () => {
    expect(offenders([join(SRC, 'app.ts')], [[STATEMENT, 'a SQL statement'], [DB_CALL, 'a Db call']])).toEqual([]);
  });

  it('no route runs a statement or opens a transaction: it calls a service', () => {
    const routes = files(SRC).filter((f) => f.endsWith('.routes.ts'));
    expect(routes.length).toBeGreaterThan(10);
    expect(offenders(routes, [[STATEMENT, 'a SQL statement'], [DB_CALL, 'a Db call'], [/\bstore\.transaction\s*\(/, 'a transaction']])).toEqual([]);
  });
});
