// The configuration a replay's sandbox runs with.

import { readFileSync } from 'node:fs';
import { jobConcurrencyFromEnv } from '../config/config.ts';
import { parseYamlSource, YamlSourceError } from '../kernel/yaml-source.ts';
import { isPlainObject } from './partial-match.ts';
import type { ScenarioSource } from './scenario-source.ts';
import { configSchema, type RailyardConfig } from '../railyard-config.ts';

/** Objects merge key by key, recursively; anything else (lists included) replaces. */
export function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * The replay's configuration: short real-time rail timeouts, then the file's `replay.config`
 * overrides (deep-merged); the store (in memory), the clock (virtual), request logging (off) and
 * the seed are always the replay's own; RAILYARD_JOB_CONCURRENCY, when set, says how many jobs run
 * at once (the bytes are the same either way). Problems name the file, and its line and column
 * when the file can be read.
 */
export function replayConfig(file: ScenarioSource, seed: number, env: NodeJS.ProcessEnv = process.env): RailyardConfig {
  const base = {
    log_requests: false,
    rails: { timeout_ms: 500, max_hold_ms: 2_000 },
  };
  const concurrency = jobConcurrencyFromEnv(env);
  const own = { db: ':memory:', clock: 'virtual', seed, log_requests: false, ...(concurrency !== undefined ? { scheduler: { concurrency } } : {}) };
  const merged = deepMerge(deepMerge(base, file.scenario.replay?.config ?? {}), own);
  const parsed = configSchema.safeParse(merged);
  if (parsed.success) return Object.freeze(parsed.data) as RailyardConfig;
  let locate: ((path: PropertyKey[]) => { line: number; col: number }) | undefined;
  try {
    const source = parseYamlSource(file.text ?? readFileSync(file.path, 'utf8'), file.path);
    locate = (path) => source.locate(path);
  } catch {
    locate = undefined;
  }
  throw new YamlSourceError(
    parsed.error.issues.map((issue) => {
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
      const where = ['replay', 'config', ...path.map(String)].join('.');
      const what = issue.code === 'unrecognized_keys' ? `unknown configuration field ${JSON.stringify(issue.keys[0])}` : issue.message;
      const pos = locate?.(['replay', 'config', ...path]);
      return `${file.path}${pos ? `:${pos.line}:${pos.col}` : ''}: ${where}: ${what}`;
    }),
  );
}
