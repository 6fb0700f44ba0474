import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WIRE_RESPONSE_LOG_ENV } from '../../src/mocks/engine/wire-response-log.ts';
import { checkWireResponses, describeWireCheck, readWireResponseLog } from './wire-schema-check.ts';

// vitest globalSetup: every mock answer of the whole run (rail, contract, replay and every other
// suite; the test workers inherit the variable) is written down, then checked against the
// providers' published descriptions (test/fixtures/wire-schemas). A violation fails the run.
export default function setup(): () => void {
  const given = process.env[WIRE_RESPONSE_LOG_ENV];
  const dir = given ?? mkdtempSync(join(tmpdir(), 'railyard-wire-run-'));
  process.env[WIRE_RESPONSE_LOG_ENV] = dir;
  return () => {
    const report = checkWireResponses(readWireResponseLog(dir));
    if (!given) rmSync(dir, { recursive: true, force: true });
    if (report.violations.length > 0) throw new Error(describeWireCheck(report));
    if (report.checked > 0) console.log(describeWireCheck(report));
  };
}
