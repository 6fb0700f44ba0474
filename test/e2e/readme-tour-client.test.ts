import { afterAll, beforeAll, describe, it } from 'vitest';
import { clientTour } from '../../examples/client/tour.ts';
import { createRailyardClient } from '../../src/client/index.ts';
import { startRailyard, type RailyardSandbox } from '../../src/testing/index.ts';
import { tourExpectations } from '../support/readme-tour.ts';

// The TypeScript twin of the README's curl tour (examples/client/tour.ts, with railyard/client),
// held to the same expectations as the curl tour that test/e2e/readme-tour.test.ts runs
// verbatim. It runs on railyard/testing's virtual clock: the tour's sleeps become clock advances.

let sandbox: RailyardSandbox;
let outputs: string[] = [];

beforeAll(async () => {
  sandbox = await startRailyard({ webhooks: false });
  const client = createRailyardClient({ baseUrl: sandbox.baseUrl, key: sandbox.key, signingSecret: sandbox.signingSecret });
  outputs = await clientTour(client, (seconds) => sandbox.clock.advance(seconds));
}, 60_000);

afterAll(() => sandbox?.stop());

describe('the README tour with the typed client', () => {
  for (const [step, check] of tourExpectations) it(step, () => check(outputs));
});
