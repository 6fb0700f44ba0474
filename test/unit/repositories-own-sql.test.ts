import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 15: services stop writing SQL, and routes stop touching the store. The money half of the
// code base (ledger, idempotency, the outbox, wallet, /v1, rails) holds no SQL statement: its
// statements live in src/store/repositories/. (The lead widens FOLDERS to all of src/ once the
// platform half is merged; migrations and repositories stay the only homes of SQL.)

const SRC = resolve(import.meta.dirname, '../../src');
const FOLDERS = ['ledger', 'idempotency', 'events', 'wallet', 'v1', 'rails'];
const STATEMENT = /\b(SELECT\s[\s\S]*?\sFROM|INSERT\s+INTO|UPDATE\s+[\w${}.]+\s+SET|DELETE\s+FROM)\b/; // upper case, as this code base writes SQL

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('SQL lives in the repositories', () => {
  it('sees the files it judges', () => {
    const judged = FOLDERS.flatMap((f) => files(join(SRC, f))).map((f) => relative(SRC, f));
    expect(judged).toContain('ledger/ledger.ts');
    expect(judged).toContain('wallet/settlement-machine.ts');
  });

  it('the recognizer knows a statement when it sees one', () => {
    expect(STATEMENT.test("'SELECT balance FROM ledger_balances WHERE environment = ?'")).toBe(true);
    expect(STATEMENT.test('`UPDATE ${this.table} SET provider = ?`')).toBe(true);
    expect(STATEMENT.test('select the rows from the page')).toBe(false);
    expect(STATEMENT.test("'INSERT INTO transactions (environment) VALUES (?)'")).toBe(true);
  });

  it.each(FOLDERS)('src/%s/ runs no SQL of its own', (folder) => {
    const offenders = files(join(SRC, folder)).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const found = [STATEMENT.test(text) ? 'a SQL statement' : null, /\b(tx|db|store)\.(run|get|all)\s*[<(]/.test(text) ? 'a Db call' : null].filter(Boolean);
      return found.length ? [`${relative(SRC, file)}: ${found.join(', ')}`] : [];
    });
    expect(offenders).toEqual([]);
  });
});
