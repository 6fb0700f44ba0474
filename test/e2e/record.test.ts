import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startMock, type RunningMock } from '../../src/cli/mock-command.ts';
import { startRecording } from '../../src/cli/record-command.ts';
import { callbackToken } from '../../src/config/config.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { mtnReferenceId } from '../../src/providers/mtn-momo/adapter.ts';
import { SCENARIO_SCHEMA_PATH } from '../../src/scenarios/scenario-json-schema.ts';
import type { ScenarioFile } from '../../src/scenarios/scenario-schema.ts';
import { SANDBOX_SCENARIOS, startTestSandbox } from '../support/test-sandbox.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

type Ajv2020Class = typeof import('ajv/dist/2020.js').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;

// railyard record, end to end: a railyard MTN mock served standalone on its own port plays the
// real upstream; railyard records three charges through it (the sandbox's success, insufficient
// funds and timeout numbers); the written scenario, loaded into a fresh sandbox, gives the same
// outcomes, and carries none of the credentials the recording used. The mock and railyard each
// run on a virtual clock that the test moves, so a 5 s callback delay costs no real time and is
// recorded as exactly what the mock was told.

const SUCCESS = '0551234987';
const NO_FUNDS = '0551234988';
const TIMEOUT = '0551234989';
const NUMBERS = [SUCCESS, NO_FUNDS, TIMEOUT];

// Distinctive credentials, shared by the "upstream" and the recording railyard, so the file can
// be searched for them.
const CREDENTIALS = {
  api_user: 'rec-api-user-5b1f0c9e',
  api_key: 'rec-api-key-9d2c4e7a1f',
  collection_subscription_key: 'rec-collection-key-3a8e61',
  disbursement_subscription_key: 'rec-disbursement-key-c47b02',
  callback_token: 'rec-callback-token-e19f3d7b',
};
const SANDBOX = { key: 'sk_test_recorder_secret_key_71c3a9e4', signing_secret: 'sig_recorder_signing_secret_0f5b' };

const rules = loadScenarios([SANDBOX_SCENARIOS]).rules;
const config = buildConfig({
  port: 0,
  host: '127.0.0.1',
  db: ':memory:',
  log_requests: false,
  clock: 'virtual',
  sandbox: SANDBOX,
  rails: { timeout_ms: 1_000, max_hold_ms: 3_000 },
  providers: { 'mtn-momo': CREDENTIALS },
});

interface Outcome {
  status: string;
  provider: string | null;
  failure_reason: string | null;
}

async function charge(baseUrl: string, key: string, msisdn: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/charges`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `record-${msisdn}` },
    body: JSON.stringify({ amount: 2_500, currency: 'GHS', channel: 'momo', msisdn }),
  });
  const body = (await res.json()) as { data: { id: string } };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data.id;
}

async function chargeOutcome(baseUrl: string, key: string, id: string): Promise<Outcome & { status: string }> {
  const res = await fetch(`${baseUrl}/api/v1/charges/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  const { data } = (await res.json()) as { data: Outcome };
  return { status: data.status, provider: data.provider, failure_reason: data.failure_reason };
}

describe('railyard record against a standalone MTN mock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-record-'));
  const out = join(dir, 'recorded-mtn-momo.yaml');
  let upstream: RunningMock;
  let recordedOutcomes: Record<string, Outcome>;
  let chargeIds: string[];
  let text: string;
  let scenario: ScenarioFile;

  beforeAll(async () => {
    // The upstream's time; the recorder measures its callback delays on it too.
    const upstreamClock = new VirtualClock(VIRTUAL_EPOCH);
    upstream = await startMock('mtn-momo', { config, rules, clock: upstreamClock });
    const recording = await startRecording({ provider: 'mtn-momo', upstream: upstream.url, out, config, rules, clock: upstreamClock });
    const key = recording.railyard.sandbox.key;
    chargeIds = await Promise.all(NUMBERS.map((n) => charge(recording.railyardUrl, key, n)));
    // Business time passes on both sides a second at a time until no charge is pending.
    let outcomes = await Promise.all(chargeIds.map((id) => chargeOutcome(recording.railyardUrl, key, id)));
    for (let second = 0; second < 60 && outcomes.some((o) => o.status === 'pending_provider'); second++) {
      await upstream.advance(1);
      await recording.railyard.scheduler.advanceBy(1_000);
      outcomes = await Promise.all(chargeIds.map((id) => chargeOutcome(recording.railyardUrl, key, id)));
    }
    recordedOutcomes = Object.fromEntries(NUMBERS.map((n, i) => [n, outcomes[i]!]));
    const written = await recording.stop();
    text = readFileSync(out, 'utf8');
    scenario = written.scenario;
  }, 60_000);

  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drives the three sandbox outcomes through the recorded provider', () => {
    expect(recordedOutcomes[SUCCESS]).toEqual({ status: 'success', provider: 'mtn-momo', failure_reason: null });
    expect(recordedOutcomes[NO_FUNDS]).toMatchObject({ status: 'failed', provider: 'mtn-momo' });
    expect(recordedOutcomes[NO_FUNDS]!.failure_reason).not.toBeNull();
    // MTN held it past railyard's timeout: the charge failed over to hubtel.
    expect(recordedOutcomes[TIMEOUT]).toEqual({ status: 'success', provider: 'hubtel', failure_reason: null });
  });

  it('writes one rule per number, with outcomes and callback delays as observed', () => {
    const byNumber = (msisdn: string) => scenario.rules.find((r) => (r.match?.msisdn as { equals?: string } | undefined)?.equals === msisdn);
    const success = byNumber(SUCCESS)?.collect?.['mtn-momo']?.[0];
    expect(success).toMatchObject({ respond: 'accept', callback: { status: 'success' } });
    // The sandbox rule the mock played calls back 5 s after accepting.
    expect(success!.callback!.after_seconds).toBe(5);
    expect(byNumber(NO_FUNDS)?.collect?.['mtn-momo']?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: 'NOT_ENOUGH_FUNDS' } });
    expect(byNumber(TIMEOUT)?.collect?.['mtn-momo']?.[0]).toMatchObject({ respond: 'timeout' });
    expect(byNumber(TIMEOUT)?.collect?.['mtn-momo']?.[0]?.callback).toBeUndefined();
    expect(scenario.rules).toHaveLength(3);
  });

  it('is valid against scenarios/scenario.schema.json', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, 'utf8')));
    expect(validate(parseYaml(text)), JSON.stringify(validate.errors)).toBe(true);
  });

  it('carries none of the credentials it used', () => {
    const secrets = [
      ...Object.values(CREDENTIALS),
      callbackToken(config, 'mtn-momo'),
      SANDBOX.key,
      SANDBOX.signing_secret,
      Buffer.from(`${CREDENTIALS.api_user}:${CREDENTIALS.api_key}`).toString('base64'),
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/Bearer|Basic /);
  });

  it('freezes no reference: charge ids and MTN reference ids are left to the mocks', () => {
    for (const id of chargeIds) {
      expect(text).not.toContain(id);
      expect(text).not.toContain(mtnReferenceId(id));
    }
  });

  it('replayed in a fresh sandbox, gives the recorded outcomes', async () => {
    const sb = await startTestSandbox({}, scenario.rules);
    try {
      const ids = await Promise.all(NUMBERS.map((n) => charge(sb.baseUrl, sb.key, n)));
      await sb.advance(30);
      const replayed = await Promise.all(ids.map((id) => chargeOutcome(sb.baseUrl, sb.key, id)));
      expect(Object.fromEntries(NUMBERS.map((n, i) => [n, replayed[i]]))).toEqual(recordedOutcomes);
    } finally {
      await sb.close();
    }
  });
});
