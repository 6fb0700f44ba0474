import type { z } from 'zod';
import { buildConfigWith, type ConfigInput, configSchemaFor, loadConfigWith } from './config/config.ts';
import { PROVIDERS } from './providers/index.ts';

// railyard's configuration: config/'s schema with one block per provider of src/providers/index.ts.
// The composition root hands the providers down here, so config/, below them, imports none.

/** The configuration schema: every setting, and `providers.<id>` for each provider of the list. */
export const configSchema = configSchemaFor(PROVIDERS.map((p) => p.options));

/** railyard's configuration: a Config whose `providers` holds each provider's own block, typed. */
export type RailyardConfig = z.infer<typeof configSchema>;

/** Validates a config object (tests and the replay engine build configs in code). */
export function buildConfig(input: ConfigInput | Record<string, unknown> = {}): RailyardConfig {
  return buildConfigWith(configSchema, input);
}

/** Defaults, then railyard.yaml, then environment variables. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RailyardConfig {
  return loadConfigWith(configSchema, env, cwd);
}
