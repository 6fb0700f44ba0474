import type { Db } from './db.ts';

/** Answers once the store answers a trivial query (GET /healthz); throws if it cannot. */
export async function probeStore(db: Db): Promise<void> {
  await db.get('SELECT 1 AS ok');
}
