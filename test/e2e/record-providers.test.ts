import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMock, type MockProvider } from '../../src/cli/mock-command.ts';
import { startRecording } from '../../src/cli/record-command.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import type { ScenarioFile } from '../../src/scenarios/scenario-schema.ts';
import { merchant, secondOnBothClocks, settled, type Merchant } from '../support/recording-merchant.ts';
import { SANDBOX_SCENARIOS, startTestSandbox } from '../support/test-sandbox.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

// Recording the two other wires: Hubtel (five hosts behind one proxy, the callback URL in the
// body) and the bank rail (a signed body, re-signed after the callback URL is rewritten, and a
// signed callback passed on unchanged). Each recording, replayed, gives the recorded outcomes.
// The mocks and railyard run on virtual clocks the test moves: callback delays cost no real time.

const rules = loadScenarios([SANDBOX_SCENARIOS]).rules;
const dir = mkdtempSync(join(tmpdir(), 'railyard-record-providers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = buildConfig({
  port: 0,
  host: '127.0.0.1',
  db: ':memory:',
  log_requests: false,
  clock: 'virtual',
  rails: { timeout_ms: 1_000, max_hold_ms: 3_000 },
  providers: {
    hubtel: { client_id: 'rec-hubtel-client-4e1a', client_secret: 'rec-hubtel-secret-8c2f9b' },
    'bank-rail': { client_id: 'rec-bank-participant-77d0', client_secret: 'rec-bank-secret-a93e51' },
  },
});

/** Records `drive` against a standalone mock of the provider; the scenario written and the file's text. */
async function record<T>(provider: MockProvider, drive: (client: Merchant) => Promise<T>): Promise<{ observed: T; scenario: ScenarioFile; text: string }> {
  // The upstream's time; the recorder measures its callback delays on it too.
  const upstreamClock = new VirtualClock(VIRTUAL_EPOCH);
  const upstream = await startMock(provider, { config, rules, clock: upstreamClock });
  try {
    const out = join(dir, `recorded-${provider}.yaml`);
    const recording = await startRecording({ provider, upstream: upstream.url, out, config, rules, clock: upstreamClock });
    const { sandbox } = recording.railyard;
    const observed = await drive(merchant(recording.railyardUrl, sandbox.key, sandbox.signingSecret, secondOnBothClocks(upstream, recording.railyard)));
    const { scenario } = await recording.stop();
    return { observed, scenario, text: readFileSync(out, 'utf8') };
  } finally {
    await upstream.close();
  }
}

const GCB = '040100';
const bankTransfers = async (client: Merchant) => {
  expect((await client.post('/api/v1/sandbox/wallet/fund', { amount: 1_000_000 })).status).toBe(200);
  const outcomes: Record<string, unknown> = {};
  for (const account of ['1000000001', '1000000002']) {
    const created = await client.post('/api/v1/transfers', { amount: 10_000, currency: 'GHS', channel: 'bank', account_number: account, bank_code: GCB, bank_account_name: 'Recorded Payee' }, true);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    outcomes[account] = created.body.data.id;
  }
  const resolved = await client.post('/api/v1/resolve/bank-name', { account_number: '1000000003', bank_code: GCB });
  return {
    transfers: Object.fromEntries(await Promise.all(Object.entries(outcomes).map(async ([account, id]) => [account, await settled(client, `/api/v1/transfers/${id}`)]))),
    unresolved: resolved.status,
  };
};

const hubtelCharges = async (client: Merchant) => {
  const ids: [string, string][] = [];
  for (const msisdn of ['0551234987', '0551234988']) {
    const created = await client.post('/api/v1/charges', { amount: 2_500, currency: 'GHS', channel: 'momo', msisdn });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ids.push([msisdn, created.body.data.id]);
  }
  return Object.fromEntries(await Promise.all(ids.map(async ([msisdn, id]) => [msisdn, await settled(client, `/api/v1/charges/${id}`)])));
};

describe('railyard record against a standalone bank-rail mock', () => {
  it('passes the signed traffic through, and the recording replays to the same outcomes', async () => {
    const { observed, scenario, text } = await record('bank-rail', bankTransfers);
    expect(observed.transfers['1000000001']).toMatchObject({ status: 'success', provider: 'bank-rail' });
    expect(observed.transfers['1000000002']).toMatchObject({ status: 'failed', provider: 'bank-rail' });
    expect(observed.unresolved).toBe(404);

    const rule = (account: string) => scenario.rules.find((r) => (r.match?.account_number as { equals?: string } | undefined)?.equals === account);
    expect(rule('1000000001')?.match).toEqual({ bank_code: { equals: GCB }, account_number: { equals: '1000000001' } });
    expect(rule('1000000001')?.payout?.['bank-rail']?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'success' } });
    expect(rule('1000000002')?.payout?.['bank-rail']?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: '51' } });
    expect(rule('1000000003')?.resolve?.['bank-rail']?.[0]).toMatchObject({ resolves: false });
    for (const secret of [config.providers['bank-rail'].client_id, config.providers['bank-rail'].client_secret]) expect(text).not.toContain(secret);

    const sb = await startTestSandbox({}, scenario.rules);
    try {
      // The replay sandbox runs on a virtual clock: waiting moves it.
      const client = merchant(sb.baseUrl, sb.key, sb.signingSecret, () => sb.advance(1));
      expect(await bankTransfers(client)).toEqual(observed);
    } finally {
      await sb.close();
    }
  }, 60_000);
});

describe('railyard record against a standalone Hubtel mock', () => {
  it('serves the five hosts through one proxy, and the recording replays to the same outcomes', async () => {
    const { observed, scenario, text } = await record('hubtel', hubtelCharges);
    expect(observed['0551234987']).toMatchObject({ status: 'success', provider: 'hubtel' });
    expect(observed['0551234988']).toMatchObject({ status: 'failed', provider: 'hubtel' });
    const rule = (msisdn: string) => scenario.rules.find((r) => (r.match?.msisdn as { equals?: string } | undefined)?.equals === msisdn);
    expect(rule('0551234987')?.collect?.hubtel?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'success' } });
    expect(rule('0551234988')?.collect?.hubtel?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: '2001' } });
    for (const secret of [config.providers.hubtel.client_id, config.providers.hubtel.client_secret]) expect(text).not.toContain(secret);

    // Replayed with hubtel first in line, as it was while recording.
    const sb = await startTestSandbox({ providers: { hubtel: { priority: 1 }, 'mtn-momo': { priority: 2 } } }, scenario.rules);
    try {
      const client = merchant(sb.baseUrl, sb.key, sb.signingSecret, () => sb.advance(1));
      expect(await hubtelCharges(client)).toEqual(observed);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
