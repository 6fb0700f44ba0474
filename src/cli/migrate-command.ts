import { describeStore, openStore, schemaVersion } from '../store/open-store.ts';
import { usageError } from './cli-support.ts';
import { loadConfig } from '../railyard-config.ts';

/**
 * `railyard migrate`: brings the configured store (RAILYARD_DB / db) up to date and exits. serve
 * migrates on start anyway; this is the step to run on its own, before starting processes.
 */
export async function migrateMain(args: string[], usage: string): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) return (void process.stdout.write(usage), 0);
  if (args.length > 0) return usageError('migrate', `takes no arguments (got ${args.join(' ')})`, usage);
  const config = loadConfig();
  const store = await openStore(config.db);
  try {
    process.stdout.write(`railyard migrate: ${describeStore(config.db)} is at schema version ${await schemaVersion(store)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
