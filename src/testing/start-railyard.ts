import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, type Railyard } from '../app.ts';
import { buildConfig } from '../railyard-config.ts';
import { parseScenario } from '../railyard-scenarios.ts';
import { routeNeedsOfRoutes } from './route-needs.ts';
import { listenRailyard } from '../listen-railyard.ts';
import { tagRuleSource } from '../scenarios/rule-source.ts';
import type { RuleSource } from '../scenarios/rule-engine.ts';
import { expandScenarioPaths } from '../scenarios/scenario-loader.ts';
import type { ApiRule, ScenarioFile, ScenarioRule, Wallet } from '../scenarios/scenario-schema.ts';
import { openConnection, type RailyardConnection } from './connect-railyard.ts';

// railyard/testing: a whole sandbox inside the test process, on a port of its own, with a
// throwaway store and the virtual clock, so a suite gets an isolated railyard in milliseconds.

/** The shipped sandbox numbers (docs/scenarios.md): beside dist/ and src/ alike. */
export const SANDBOX_SCENARIOS = fileURLToPath(new URL('../../scenarios/sandbox.yaml', import.meta.url));

export interface StartRailyardOptions {
  /** `memory` (default): nothing on disk. `temp`: a SQLite file in a temporary folder, removed by stop(). */
  store?: 'memory' | 'temp';
  /** `virtual` (default): nothing happens until clock.advance(). `system`: callbacks come in real time. */
  clock?: 'virtual' | 'system';
  /** Seeds ids and fake data (default 1): the same test makes the same ids. */
  seed?: number;
  /** Scenario files or folders loaded at start (default: the shipped sandbox numbers). */
  scenarios?: string[];
  /**
   * Further settings, as in railyard.yaml (docs/configuration.md). Defaults here: a 1 s upstream
   * timeout (a timeout scenario fails over in 1 s, not 5), no request log.
   */
  config?: Record<string, unknown>;
  /** Register a webhook endpoint for the sandbox merchant (default true). */
  webhooks?: boolean;
  /** Default 0: a free port the OS chooses. */
  port?: number;
}

export interface RailyardScenarios {
  /**
   * Loads a scenario file (a path) or its YAML text on top of those loaded at start: its rules
   * come first, so they win, and so do the faults of its `api:` section on railyard's own API
   * (docs/retries.md). Only this sandbox sees them. Counts and states start afresh.
   */
  use(yamlOrPath: string): void;
  /** Back to the scenarios loaded at start, counts and states afresh. */
  reset(): void;
}

export interface RailyardSandbox extends RailyardConnection {
  scenarios: RailyardScenarios;
  /** The app itself, for what the API does not show (the ledger, the store): see src/app.ts. */
  railyard: Railyard;
  /** Stops the sandbox, its webhook receiver, and removes a temporary store. */
  stop(): Promise<void>;
}

/** Scenario files as the loader reads them, without its lint pass: a test start need not wait for warnings nobody reads. */
function readScenarios(paths: readonly string[]): { rules: ScenarioRule[]; apiRules: ApiRule[]; wallets: Wallet[]; sources: RuleSource[] } {
  const files = expandScenarioPaths(paths).map((path) => ({ path, scenario: parseTagged(readFileSync(path, 'utf8'), path) }));
  return {
    rules: files.flatMap((f) => f.scenario.rules),
    apiRules: files.flatMap((f) => f.scenario.api),
    wallets: files.flatMap((f) => f.scenario.wallets),
    sources: files.map((f) => ({ file: f.path, rules: f.scenario.rules.length })),
  };
}

/** A scenario file, each of its rules (provider and api) tagged with its file and place, as the loader tags them. */
function parseTagged(text: string, file: string): ScenarioFile {
  const scenario = parseScenario(text, file);
  for (const [index, rule] of scenario.rules.entries()) tagRuleSource(rule, { file, index });
  for (const [index, rule] of scenario.api.entries()) tagRuleSource(rule, { file, index });
  return scenario;
}

/** A scenario given as text rather than a path: it has a line break, or names no file. */
function isYamlText(yamlOrPath: string): boolean {
  return yamlOrPath.includes('\n') || !existsSync(yamlOrPath);
}

export async function startRailyard(options: StartRailyardOptions = {}): Promise<RailyardSandbox> {
  const tempDir = options.store === 'temp' ? mkdtempSync(join(tmpdir(), 'railyard-test-')) : undefined;
  const overrides = options.config ?? {};
  const config = buildConfig({
    log_requests: false,
    ...overrides,
    db: tempDir ? join(tempDir, 'railyard.db') : ':memory:',
    clock: options.clock ?? 'virtual',
    seed: options.seed ?? (overrides.seed as number | undefined) ?? 1,
    port: options.port ?? 0,
    host: '127.0.0.1',
    rails: { timeout_ms: 1000, ...(overrides.rails as object | undefined) },
  });
  const initial = readScenarios(options.scenarios ?? [SANDBOX_SCENARIOS]);
  const railyard = await createApp(config, { rules: initial.rules, apiRules: initial.apiRules, wallets: initial.wallets, ruleSources: initial.sources });
  const listening = await listenRailyard(railyard, { port: config.port, host: config.host });
  const removeTemp = () => tempDir && rmSync(tempDir, { recursive: true, force: true });
  let connection: RailyardConnection;
  try {
    await listening.recovery;
    connection = await openConnection({
      baseUrl: listening.localUrl,
      key: railyard.sandbox.key,
      signingSecret: railyard.sandbox.signingSecret,
      merchantId: railyard.sandbox.merchantId,
      needs: routeNeedsOfRoutes(railyard.routes),
      webhooks: options.webhooks !== false,
    });
  } catch (err) {
    await listening.stop();
    removeTemp();
    throw err;
  }

  // Rules used on top of the initial ones, newest first.
  let used: { rules: ScenarioRule[]; apiRules: ApiRule[]; wallets: Wallet[]; source: RuleSource }[] = [];
  const apply = () => {
    railyard.scenarios.replace([...used.flatMap((u) => u.rules), ...initial.rules], [...initial.wallets, ...used.flatMap((u) => u.wallets)], [...used.map((u) => u.source), ...initial.sources]);
    // The faults on railyard's own API (a file's api: section) follow the same files.
    railyard.apiFaults.replace([...used.flatMap((u) => u.apiRules), ...initial.apiRules]);
  };

  return {
    ...connection,
    railyard,
    scenarios: {
      use(yamlOrPath) {
        const inline = isYamlText(yamlOrPath);
        const file = inline ? `scenarios.use #${used.length + 1}` : yamlOrPath;
        const scenario = parseTagged(inline ? yamlOrPath : readFileSync(yamlOrPath, 'utf8'), file);
        used = [{ rules: scenario.rules, apiRules: scenario.api, wallets: scenario.wallets, source: { file, rules: scenario.rules.length } }, ...used];
        apply();
      },
      reset() {
        used = [];
        apply();
      },
    },
    async stop() {
      await connection.close();
      await listening.stop();
      removeTemp();
    },
  };
}
