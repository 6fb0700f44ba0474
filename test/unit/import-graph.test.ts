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
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms), ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1]!);
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

/**
 * The layer table of docs/architecture.md (DESIGN.md's "who may import whom"), bottom row first:
 * each row's folders (or root files) and the folders of ours they may import besides their own.
 * A folder of src/ that no row places fails the test, so a new folder must be placed.
 */
interface Layer {
  layer: string;
  members: readonly string[];
  imports: readonly string[];
}

const KERNEL = ['kernel'];
const FOUNDATIONS = ['config', 'store'];
const BUILDING_BLOCKS = ['ledger', 'scheduler', 'idempotency', 'events', 'scenarios', 'auth'];
const ROUTE_KIT = ['http'];
const FEATURES = ['wallet', 'collections', 'payouts', 'bills', 'payment-links', 'reports', 'trading', 'webhooks', 'sandbox', 'access', 'inspector'];
/** The composition root, and the provider list it hands down to config/ and scenarios/ (railyard-config.ts, railyard-scenarios.ts). */
const WIRING = ['railyard-config.ts', 'railyard-scenarios.ts', 'provider-registry.ts', 'app.ts'];
const DRIVERS = ['main.ts', 'cli', 'replay', 'contracts', 'recorder', 'dashboard', 'listen-railyard.ts', 'start-job-thread.ts', 'job-thread-worker.ts', 'testing', 'client', 'index.ts'];
const BELOW_RAILS = [...KERNEL, ...FOUNDATIONS, ...BUILDING_BLOCKS];
const BELOW_FEATURES = [...BELOW_RAILS, ...ROUTE_KIT, 'rails'];

const LAYERS: readonly Layer[] = [
  { layer: 'kernel', members: KERNEL, imports: [] },
  { layer: 'foundations', members: FOUNDATIONS, imports: KERNEL },
  { layer: 'building blocks', members: BUILDING_BLOCKS, imports: [...KERNEL, ...FOUNDATIONS] },
  { layer: 'the route kit', members: ROUTE_KIT, imports: ['kernel', 'store', 'auth', 'idempotency'] },
  { layer: 'rails', members: ['rails'], imports: BELOW_RAILS },
  { layer: 'mocks', members: ['mocks'], imports: [...BELOW_RAILS, 'rails'] },
  { layer: 'providers', members: ['providers'], imports: [...BELOW_RAILS, 'rails', 'mocks'] },
  { layer: 'settlement', members: ['settlement'], imports: BELOW_FEATURES },
  { layer: 'features', members: FEATURES, imports: [...BELOW_FEATURES, 'settlement'] },
  { layer: 'wiring', members: WIRING, imports: [...BELOW_FEATURES, 'mocks', 'providers', 'settlement', ...FEATURES, ...WIRING] },
  { layer: 'drivers', members: DRIVERS, imports: [...BELOW_FEATURES, 'mocks', 'providers', 'settlement', ...FEATURES, ...WIRING] },
];

/** Imports across a row, or out of the rule, each for a reason the architecture doc gives. */
const EXCEPTIONS: Readonly<Record<string, readonly string[]>> = {
  // The hosted checkout takes its payments as /v1 collections.
  'payment-links': ['collections'],
  // The sandbox's wallet funding answers with the wallet's own schema.
  sandbox: ['wallet'],
  // The composition root mounts the dashboard (which reaches the API only over HTTP).
  'app.ts': ['dashboard'],
  // The CLI runs the drivers' commands; main.ts dispatches to the CLI and replays.
  'main.ts': ['cli', 'replay', 'listen-railyard.ts', 'start-job-thread.ts'],
  // The job thread's module speaks the protocol its starter defines; the starter is the listener's job runner.
  'job-thread-worker.ts': ['start-job-thread.ts'],
  'start-job-thread.ts': ['listen-railyard.ts'],
  cli: ['contracts', 'recorder', 'replay'],
  // railyard/testing listens as serve does, and reads durations as `railyard clock advance` does.
  testing: ['listen-railyard.ts', 'cli'],
  // The package's main entry re-exports the composition root and its listener.
  'index.ts': ['listen-railyard.ts'],
  // Only through replay/replay-api.ts (checked below).
  contracts: ['replay'],
  // The dashboard is an API client: kernel/ only (checked below, stricter than its row).
};

const graph = importGraph();
const importsOf = (folder: string) => [...graph].filter(([file]) => file.startsWith(`${folder}/`));
/** The folder (or root file) a file of src/ belongs to: `rails` for `rails/adapters/x.ts`, `app.ts` for `app.ts`. */
const memberOf = (file: string) => file.split('/')[0]!;
const allowed = new Map(LAYERS.flatMap((l) => l.members.map((m) => [m, new Set([m, ...l.imports, ...(EXCEPTIONS[m] ?? [])])] as const)));
const layerOf = new Map(LAYERS.flatMap((l) => l.members.map((m) => [m, l.layer] as const)));

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

  it('places every folder and root file of src/ in a row of the layer table', () => {
    const members = new Set([...graph.keys()].map(memberOf));
    expect([...members].filter((m) => !layerOf.has(m)).sort()).toEqual([]);
    expect([...layerOf.keys()].filter((m) => !members.has(m)).sort()).toEqual([]);
  });

  it('imports only from the rows below (or the listed exceptions), never up the table', () => {
    const upward = [...graph].flatMap(([file, deps]) => {
      const may = allowed.get(memberOf(file));
      return deps.filter((d) => !may?.has(memberOf(d))).map((d) => `${file} (${layerOf.get(memberOf(file))}) -> ${d} (${layerOf.get(memberOf(d))})`);
    });
    expect(upward).toEqual([]);
  });

  it.each(['rails', 'mocks'])('%s/ imports no feature, no settlement machine and no driver', (folder) => {
    const forbidden = new Set([...FEATURES, 'settlement', ...DRIVERS, ...WIRING]);
    const reach = importsOf(folder).flatMap(([file, deps]) => deps.filter((d) => forbidden.has(memberOf(d))).map((d) => `${file} -> ${d}`));
    expect(importsOf(folder).length).toBeGreaterThan(0);
    expect(reach).toEqual([]);
  });

  it('nothing below the drivers imports one (but app.ts, which mounts the dashboard)', () => {
    const drivers = new Set(DRIVERS);
    const reach = [...graph].flatMap(([file, deps]) => (drivers.has(memberOf(file)) || file === 'app.ts' ? [] : deps.filter((d) => drivers.has(memberOf(d))).map((d) => `${file} -> ${d}`)));
    expect(reach).toEqual([]);
  });

  it('kernel/ imports nothing of ours outside kernel/', () => {
    const outside = importsOf('kernel').flatMap(([file, deps]) => deps.filter((d) => !d.startsWith('kernel/')).map((d) => `${file} -> ${d}`));
    expect(outside).toEqual([]);
  });

  it('dashboard/ is an API client: it imports only kernel/ and its own files, no service, store or repository', () => {
    const reach = importsOf('dashboard').flatMap(([file, deps]) => deps.filter((d) => !d.startsWith('kernel/') && !d.startsWith('dashboard/')).map((d) => `${file} -> ${d}`));
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

  it('nothing below providers/ imports it: the composition root hands the provider list down to config/ and scenarios/', () => {
    const below = new Set([...BELOW_RAILS, ...ROUTE_KIT, 'rails', 'mocks']);
    const reach = [...graph].flatMap(([file, deps]) => (below.has(memberOf(file)) ? deps.filter((d) => memberOf(d) === 'providers').map((d) => `${file} -> ${d}`) : []));
    expect(importsOf('config').length + importsOf('scenarios').length).toBeGreaterThan(5);
    expect(reach).toEqual([]);
  });

  it('contracts/ reach the replay only through replay/replay-api.ts', () => {
    const internals = importsOf('contracts').flatMap(([file, deps]) => deps.filter((d) => d.startsWith('replay/') && d !== 'replay/replay-api.ts').map((d) => `${file} -> ${d}`));
    expect(internals).toEqual([]);
  });
});
