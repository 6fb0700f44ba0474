import { existsSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { YamlSourceError } from '../kernel/yaml-source.ts';
import { expandScenarioPaths, loadScenarios, type LoadedScenarios } from './scenario-loader.ts';
import type { ScenarioSchema } from './scenario-schema.ts';

export interface ScenarioWatcher {
  close(): void;
}

export interface WatchOptions {
  /** Quiet time after the last file event before reloading (editors write in bursts). */
  debounceMs?: number;
  cwd?: string;
}

const SCENARIO_FILE = /\.ya?ml$/;

/**
 * Serve mode's reload: watches the scenario files and directories and, after a change (debounced),
 * reloads ALL of them with loadScenarios. A valid set goes to `onChange`; an invalid one to
 * `onError` with its file:line:column problems, and the caller keeps the last good set.
 *
 * Directories are watched for their *.yaml / *.yml files, added and removed ones included. A file
 * is watched through its directory, so an editor's save by rename (write a temporary file, rename
 * it over the original) is seen too. An event that leaves every file as it was at the last reload
 * (a touch, a second event for the same save) reloads nothing, so rule state is not reset for
 * nothing.
 */
export function watchScenarios(schema: ScenarioSchema, paths: string[], onChange: (loaded: LoadedScenarios) => void, onError: (message: string) => void, options: WatchOptions = {}): ScenarioWatcher {
  const cwd = options.cwd ?? process.cwd();
  const debounceMs = options.debounceMs ?? 100;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let lastSeen = snapshot(paths, cwd);

  const reload = () => {
    timer = undefined;
    if (closed) return;
    const seen = snapshot(paths, cwd);
    if (seen === lastSeen) return;
    lastSeen = seen;
    let loaded: LoadedScenarios;
    try {
      loaded = loadScenarios(schema, paths, cwd);
    } catch (err) {
      onError(describe(err));
      return;
    }
    onChange(loaded);
  };
  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(reload, debounceMs);
  };

  // One watcher per directory: the whole directory's YAML files, or just the named files in it.
  const targets = new Map<string, { all: boolean; names: Set<string> }>();
  for (const p of paths) {
    const full = resolve(cwd, p);
    const isDir = existsSync(full) && statSync(full).isDirectory();
    const dir = isDir ? full : dirname(full);
    const target = targets.get(dir) ?? { all: false, names: new Set<string>() };
    if (isDir) target.all = true;
    else target.names.add(basename(full));
    targets.set(dir, target);
  }

  const watchers: FSWatcher[] = [];
  for (const [dir, target] of targets) {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (_event, filename) => {
        // Some platforms do not say which file changed: then reload and compare.
        const name = filename === null ? null : String(filename);
        if (name === null || (target.all && SCENARIO_FILE.test(name)) || target.names.has(name)) schedule();
      });
    } catch (err) {
      onError(`cannot watch ${dir}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    watcher.on('error', (err) => {
      if (!closed) onError(`stopped watching ${dir}: ${err.message}`);
    });
    watchers.push(watcher);
  }

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}

/** What the files say now, to tell a real change from a repeated or empty event. */
function snapshot(paths: readonly string[], cwd: string): string {
  try {
    return JSON.stringify(expandScenarioPaths(paths, cwd).map((file) => [file, readFileSync(file, 'utf8')]));
  } catch (err) {
    // A path gone missing: a state of its own, so that its return is a change.
    return `unreadable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function describe(err: unknown): string {
  if (err instanceof YamlSourceError) return err.problems.join('\n');
  return err instanceof Error ? err.message : String(err);
}
