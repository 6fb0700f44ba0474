import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedScenarios } from '../../src/scenarios/scenario-loader.ts';
import { watchScenarios, type ScenarioWatcher } from '../../src/scenarios/scenario-watcher.ts';
import { SCENARIO_SCHEMA } from '../../src/railyard-scenarios.ts';

// Serve mode's reload, against real files: write, watch, change, break, fix, close.

const scenario = (ruleName: string, msisdn = '0241110001') =>
  [
    'version: 1',
    'name: watched',
    'rules:',
    `  - name: ${ruleName}`,
    `    match: { msisdn: "${msisdn}" }`,
    '    collect:',
    '      any: { respond: accept, callback: { after_seconds: 5, status: success } }',
    '',
  ].join('\n');

/** Collects callbacks; `next()` resolves with the next one (or one already waiting), or fails after a timeout. */
class Inbox<T> {
  private items: T[] = [];
  private waiters: ((item: T) => void)[] = [];
  push = (item: T): void => {
    const waiter = this.waiters.shift();
    if (waiter) waiter(item);
    else this.items.push(item);
  };
  get size(): number {
    return this.items.length;
  }
  next(timeoutMs = 3_000): Promise<T> {
    const waiting = this.items.shift();
    if (waiting !== undefined) return Promise.resolve(waiting);
    return new Promise<T>((done, fail) => {
      const waiter = (item: T) => {
        clearTimeout(timer);
        done(item);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        fail(new Error(`no callback within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
  /** Resolves true if nothing arrives for `ms` (used only to show that something did NOT happen). */
  async quietFor(ms: number): Promise<boolean> {
    try {
      await this.next(ms);
      return false;
    } catch {
      return true;
    }
  }
}

let dir: string;
let file: string;
let changes: Inbox<LoadedScenarios>;
let errors: Inbox<string>;
let watcher: ScenarioWatcher | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-watch-'));
  file = join(dir, 'rules.yaml');
  writeFileSync(file, scenario('first version'));
  changes = new Inbox();
  errors = new Inbox();
});

afterEach(() => {
  watcher?.close();
  watcher = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const start = (paths: string[]) => {
  watcher = watchScenarios(SCENARIO_SCHEMA, paths, changes.push, errors.push, { debounceMs: 50 });
};

describe('watchScenarios', () => {
  it('reloads on change, reports a broken file with file:line:column and no change, reloads the fix, and stops on close', async () => {
    start([dir]);

    writeFileSync(file, scenario('second version'));
    const changed = await changes.next();
    expect(changed.rules.map((r) => r.name)).toEqual(['second version']);
    expect(changed.files.map((f) => f.path)).toEqual([file]);

    // An unknown field on line 6: the loader's message names the file, line and column.
    writeFileSync(file, scenario('third version').replace('    collect:', '    colect:'));
    const problem = await errors.next();
    expect(problem).toContain(`${file}:6:5: rules[0].colect: unknown field "colect"`);
    expect(problem).toMatch(/^.+\.yaml:\d+:\d+: /);
    expect(await changes.quietFor(300)).toBe(true);

    writeFileSync(file, scenario('fixed version', '0241110009'));
    const fixed = await changes.next();
    expect(fixed.rules.map((r) => r.name)).toEqual(['fixed version']);
    expect(fixed.rules[0]!.match).toEqual({ msisdn: { equals: '0241110009' } });
    expect(errors.size).toBe(0);

    watcher!.close();
    writeFileSync(file, scenario('after close'));
    expect(await changes.quietFor(300)).toBe(true);
    expect(errors.size).toBe(0);
  });

  it('reports a YAML syntax error (a bad indent) with its position', async () => {
    start([dir]);
    writeFileSync(file, ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: { msisdn: "0241110001" }', '   collect: {}'].join('\n'));
    expect(await errors.next()).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:\\d+: `));
  });

  it('reloads every file: a new file in a watched directory joins the set, in name order', async () => {
    start([dir]);
    writeFileSync(join(dir, 'another.yml'), scenario('from another file', '0241110002'));
    const loaded = await changes.next();
    expect(loaded.files.map((f) => f.path)).toEqual([join(dir, 'another.yml'), file]);
    expect(loaded.rules.map((r) => r.name)).toEqual(['from another file', 'first version']);
  });

  it('watches a single file through its directory, so a save by rename is seen; other files are ignored', async () => {
    start([file]);
    writeFileSync(join(dir, 'unrelated.yaml'), scenario('not watched'));
    expect(await changes.quietFor(300)).toBe(true);

    const temporary = join(dir, '.rules.yaml.swp');
    writeFileSync(temporary, scenario('saved by rename'));
    renameSync(temporary, file);
    const loaded = await changes.next();
    expect(loaded.rules.map((r) => r.name)).toEqual(['saved by rename']);
  });

  it('debounces a burst of writes into one reload, and ignores a write that changes nothing', async () => {
    start([dir]);
    for (let i = 1; i <= 5; i++) writeFileSync(file, scenario(`burst ${i}`));
    const loaded = await changes.next();
    expect(loaded.rules.map((r) => r.name)).toEqual(['burst 5']);
    writeFileSync(file, scenario('burst 5'));
    expect(await changes.quietFor(300)).toBe(true);
  });
});
