import { startRailyard } from 'railyard/testing';

// Runs once, before any test file, in Jest's own process: the sandbox lives here, on a free port,
// with an in-memory store and the virtual clock. Test files run in worker processes started after
// this, so they inherit RAILYARD_BASE_URL, RAILYARD_KEY and RAILYARD_SIGNING_SECRET, and reach the
// sandbox with connectRailyard().
export default async function globalSetup() {
  const sandbox = await startRailyard();
  Object.assign(process.env, sandbox.env);
  // Only globalTeardown, in this same process, sees this.
  globalThis.__RAILYARD__ = sandbox;
}
