import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { runTour, TOUR_SERVER_ENV, tourExpectations } from '../support/readme-tour.ts';
import { freePort, untilServing } from '../support/serve-process.ts';

// Runs the README's curl tour verbatim (the sh blocks between the tour markers) against a real
// `railyard serve` process on the system clock, as a reader would after `npm start`.
// (test/container/ runs the same tour against the container image.)
const ROOT = resolve(import.meta.dirname, '../..');

// A port the system hands out, not a guess: other servers (a chaos run, other suites) listen meanwhile.
let port: number;
let server: ChildProcess;
let outputs: string[] = [];

beforeAll(async () => {
  port = await freePort();
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    // Only the port, a throwaway store and a shorter network timeout differ from plain `npm start`.
    env: { ...process.env, ...TOUR_SERVER_ENV, PORT: String(port), RAILYARD_DB: ':memory:', RAILYARD_LOG_REQUESTS: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await untilServing(server);
  outputs = runTour(`http://127.0.0.1:${port}`);
}, 100_000);

afterAll(() => {
  server?.kill('SIGTERM');
});

describe('the README tour', () => {
  for (const [step, check] of tourExpectations) it(step, () => check(outputs));
});
