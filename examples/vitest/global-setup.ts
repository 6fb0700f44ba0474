import type { TestProject } from 'vitest/node';
import { startRailyard } from 'railyard/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    railyard: { RAILYARD_BASE_URL: string; RAILYARD_KEY: string; RAILYARD_SIGNING_SECRET: string };
  }
}

// Runs once, before any test file: the sandbox lives in this process, on a free port, with an
// in-memory store and the virtual clock. Test files reach it with connectRailyard(inject('railyard')).
export default async function setup(project: TestProject) {
  const sandbox = await startRailyard();
  project.provide('railyard', sandbox.env);
  return () => sandbox.stop();
}
