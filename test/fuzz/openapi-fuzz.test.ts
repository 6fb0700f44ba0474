// Thousands of hostile (and some valid-looking) requests derived from /openapi.json, against an
// in-process sandbox: none may answer 5xx (but 502 provider_unavailable), every error is the
// spec envelope with a known code and its decided status, a documented operation answers only
// documented statuses and schemas, and a refused request leaves every table as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFinding } from '../../chaos/openapi-fuzzer/format-finding.ts';
import { runFuzz, type FuzzReport } from '../../chaos/openapi-fuzzer/run-fuzz.ts';
import { storeDigest } from '../../chaos/openapi-fuzzer/store-digest.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_101);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 3_000);

let sb: TestSandbox;
let report: FuzzReport;

beforeAll(async () => {
  sb = await startTestSandbox();
  // Enough in the wallet that valid-looking transfers and buys go through.
  await sb.fund(1_000_000_000);
}, 60_000);

afterAll(async () => {
  await sb?.close();
});

describe(`the OpenAPI fuzzer (seed ${SEED}, FUZZ_SEED to change it)`, () => {
  it(`finds nothing wrong in ${REQUESTS} requests`, async () => {
    report = await runFuzz({
      baseUrl: sb.baseUrl,
      key: sb.key,
      secret: sb.signingSecret,
      requests: REQUESTS,
      seed: SEED,
      digest: storeDigest(sb.ry.store),
      // Nothing runs between requests here (the scheduler runs only when the clock is
      // advanced), so any change across a refused request is a finding at once.
      quiet: true,
      now: () => sb.ry.wallClock.now(),
    });
    const findings = report.findings.map(formatFinding).join('\n\n');
    expect(report.findings, `seed ${SEED}: ${report.findings.length} finding(s)\n\n${findings}`).toEqual([]);
    expect(report.sent).toBe(REQUESTS);
  }, 120_000);

  it('reached every documented operation, and got past validation on most of them', () => {
    for (const { operationId } of sb.ry.routes) expect(Object.keys(report.byOperation[operationId] ?? {}), operationId).not.toEqual([]);
    // Valid-looking requests succeed often enough that later ones find real objects to poke at.
    const successes = Object.entries(report.byStatus)
      .filter(([status]) => status.startsWith('2'))
      .reduce((n, [, count]) => n + count, 0);
    expect(successes).toBeGreaterThan(REQUESTS / 10);
    expect(report.byStatus['400'] ?? 0).toBeGreaterThan(REQUESTS / 4);
  });
});
