import { afterAll, afterEach } from 'vitest';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.ts';

/**
 * What a fleet test file shares: one throwaway PostgreSQL cluster, started at its first use and
 * stopped after the file, and the test's cleanups (instances, directories), run after each test,
 * newest first. Called at a file's top level: it registers the hooks.
 */
export function fleetHarness(): { postgres: () => Promise<PostgresCluster>; freshDatabase: () => Promise<string>; cleanups: (() => Promise<void>)[] } {
  let cluster: Promise<PostgresCluster> | undefined;
  const postgres = () => (cluster ??= startPostgresCluster());
  afterAll(async () => {
    if (cluster) await (await cluster).stop();
  }, 60_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return { postgres, freshDatabase: async () => (await postgres()).createDatabase(), cleanups };
}
