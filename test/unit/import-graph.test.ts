import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layer rule of DESIGN.md, read from the source: which file imports which.

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Each file of src/ (relative, e.g. `rails/rail-router.ts`) and the files of src/ it imports, types included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms),
      ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
    ].map((m) => m[1]!);
    graph.set(
      relative(SRC, file),
      specifiers.map((s) => relative(SRC, resolve(dirname(file), s))),
    );
  }
  return graph;
}

/** Every circle of imports (strongly connected components of more than one file, or a file importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const graph = importGraph();
const importsOf = (folder: string) => [...graph].filter(([file]) => file.startsWith(`${folder}/`));

describe('import graph of src/', () => {
  it('is read from the source (the test sees the files it judges)', () => {
    expect(graph.get('rails/rail-router.ts')).toContain('kernel/timeline.ts');
  });

  it('names only files that exist (the import lines were read right)', () => {
    const unknown = [...graph].flatMap(([file, deps]) => deps.filter((d) => !graph.has(d)).map((d) => `${file} -> ${d}`));
    expect(unknown).toEqual([]);
  });

  it('has no import circles', () => {
    expect(circles(graph)).toEqual([]);
  });

  it.each(['kernel', 'store', 'scenarios', 'rails', 'webhooks', 'mocks', 'wallet'])('%s/ imports nothing from replay/', (folder) => {
    const upward = importsOf(folder).flatMap(([file, deps]) => deps.filter((d) => d.startsWith('replay/')).map((d) => `${file} -> ${d}`));
    expect(upward).toEqual([]);
  });

  it('kernel/ imports nothing of ours outside kernel/', () => {
    const outside = importsOf('kernel').flatMap(([file, deps]) => deps.filter((d) => !d.startsWith('kernel/')).map((d) => `${file} -> ${d}`));
    expect(outside).toEqual([]);
  });

  it('dashboard/ is an API client: it imports only kernel/ and its own files, no service, store or repository', () => {
    const reach = importsOf('dashboard').flatMap(([file, deps]) =>
      deps.filter((d) => !d.startsWith('kernel/') && !d.startsWith('dashboard/')).map((d) => `${file} -> ${d}`),
    );
    expect(importsOf('dashboard').length).toBeGreaterThan(0);
    expect(reach).toEqual([]);
  });

  it('providers/, rails/ and mocks/ import no feature (settlement goes through the interface rails/ owns)', () => {
    const features = ['wallet', 'trading', 'v1', 'webhooks', 'sandbox', 'access', 'inspector', 'collections', 'payouts', 'bills', 'payment-links', 'reports', 'settlement'];
    const upward = ['providers', 'rails', 'mocks'].flatMap((folder) =>
      importsOf(folder).flatMap(([file, deps]) => deps.filter((d) => features.includes(d.split('/')[0]!)).map((d) => `${file} -> ${d}`)),
    );
    expect(importsOf('providers').length).toBeGreaterThan(20);
    expect(upward).toEqual([]);
  });

  it("the provider catalog (names and config blocks) imports only kernel/ and the providers' options files, so config/ and scenarios/ can read it", () => {
    const light = (file: string) => file === 'providers/provider-catalog.ts' || file === 'providers/provider-options.ts' || /^providers\/[^/]+\/options\.ts$/.test(file);
    const catalog = [...graph].filter(([file]) => light(file));
    expect(catalog.length).toBeGreaterThan(2);
    const reach = catalog.flatMap(([file, deps]) => deps.filter((d) => !light(d) && !d.startsWith('kernel/')).map((d) => `${file} -> ${d}`));
    expect(reach).toEqual([]);
  });

  it('contracts/ reach the replay only through replay/replay-api.ts', () => {
    const internals = importsOf('contracts').flatMap(([file, deps]) =>
      deps.filter((d) => d.startsWith('replay/') && d !== 'replay/replay-api.ts').map((d) => `${file} -> ${d}`),
    );
    expect(internals).toEqual([]);
  });
});
