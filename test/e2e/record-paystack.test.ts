import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type RunningMock } from '../../src/cli/mock-command.ts';
import { startRecording } from '../../src/cli/record-command.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { PAYSTACK_WEBHOOK_PATH } from '../../src/providers/paystack/recorder.ts';
import type { ScenarioFile } from '../../src/scenarios/scenario-schema.ts';
import { merchant, secondOnBothClocks, settled, type Merchant } from '../support/recording-merchant.ts';
import { freePort } from '../support/serve-process.ts';
import { SANDBOX_SCENARIOS, startTestSandbox } from '../support/test-sandbox.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import { loadScenarios, parseScenario } from '../../src/railyard-scenarios.ts';

// Recording Paystack: no callback URL travels with its calls; its signed webhooks go to the one
// URL its dashboard holds, here the standalone mock's providers.paystack.webhook_url, set to the
// recorder's webhook endpoint. The proxy passes each webhook on byte for byte, so railyard's
// x-paystack-signature check still holds. The recording, replayed in a fresh sandbox with
// Paystack first in line, gives the recorded outcomes. The mock and railyard each run on a
// virtual clock the test moves: webhook delays and railyard's status poll cost no real time.

const SECRET_KEY = 'sk_test_rec_paystack_6f0d2b9c41e8';
const SUCCESS = '0551234987';
const NO_FUNDS = '0551234988';
const HELD = '0551234991';
const GCB = '040100';

// The sandbox numbers and accounts, and one number Paystack holds past railyard's timeout.
const rules = [
  ...loadScenarios([SANDBOX_SCENARIOS]).rules,
  ...parseScenario(
    ['version: 1', 'name: paystack-holds', 'rules:', `  - name: Paystack holds ${HELD} open`, `    match: { msisdn: "${HELD}" }`, '    collect:', '      paystack: { respond: timeout }', ''].join(
      '\n',
    ),
    'paystack-holds.yaml',
  ).rules,
];

// Paystack sends no webhook for a failed charge: railyard's status poll finds it, 8 s in.
const RAILS = { timeout_ms: 1_000, max_hold_ms: 3_000, poll_after_seconds: 8, poll_interval_seconds: 2 };

function configWithWebhooksTo(webhookUrl: string) {
  return buildConfig({
    port: 0,
    host: '127.0.0.1',
    db: ':memory:',
    log_requests: false,
    clock: 'virtual',
    rails: RAILS,
    providers: { paystack: { secret_key: SECRET_KEY, webhook_url: webhookUrl } },
  });
}

const drive = async (client: Merchant) => {
  expect((await client.post('/api/v1/sandbox/wallet/fund', { amount: 1_000_000 })).status).toBe(200);
  const charges: [string, string][] = [];
  for (const msisdn of [SUCCESS, NO_FUNDS, HELD]) {
    const created = await client.post('/api/v1/charges', { amount: 2_500, currency: 'GHS', channel: 'momo', msisdn });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    charges.push([msisdn, created.body.data.id]);
  }
  const transfers: [string, string][] = [];
  for (const account of ['1000000001', '1000000002']) {
    const created = await client.post('/api/v1/transfers', { amount: 10_000, currency: 'GHS', channel: 'bank', account_number: account, bank_code: GCB, bank_account_name: 'Recorded Payee' }, true);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    transfers.push([account, created.body.data.id]);
  }
  const resolved = await client.post('/api/v1/resolve/bank-name', { account_number: '1000000003', bank_code: GCB });
  return {
    charges: Object.fromEntries(await Promise.all(charges.map(async ([msisdn, id]) => [msisdn, await settled(client, `/api/v1/charges/${id}`)]))),
    transfers: Object.fromEntries(await Promise.all(transfers.map(async ([account, id]) => [account, await settled(client, `/api/v1/transfers/${id}`)]))),
    unresolved: resolved.status,
  };
};

describe('railyard record against a standalone Paystack mock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'railyard-record-paystack-'));
  const out = join(dir, 'recorded-paystack.yaml');
  let upstream: RunningMock | undefined;
  let webhookUrl: string | undefined;
  let expectedWebhookUrl: string;
  let observed: Awaited<ReturnType<typeof drive>>;
  let scenario: ScenarioFile;
  let text: string;

  beforeAll(async () => {
    // The webhook URL is set on the upstream before recording starts, as in Paystack's dashboard.
    const proxyPort = await freePort();
    expectedWebhookUrl = `http://127.0.0.1:${proxyPort}${PAYSTACK_WEBHOOK_PATH}`;
    const config = configWithWebhooksTo(expectedWebhookUrl);
    // The upstream's time; the recorder measures its webhook delays on it too.
    const upstreamClock = new VirtualClock(VIRTUAL_EPOCH);
    upstream = await startMock('paystack', { config, rules, clock: upstreamClock });
    const recording = await startRecording({ provider: 'paystack', upstream: upstream.url, out, config, rules, proxyPort, clock: upstreamClock });
    webhookUrl = recording.webhookUrl;
    const { sandbox } = recording.railyard;
    observed = await drive(merchant(recording.railyardUrl, sandbox.key, sandbox.signingSecret, secondOnBothClocks(upstream, recording.railyard)));
    scenario = (await recording.stop()).scenario;
    text = readFileSync(out, 'utf8');
  }, 60_000);

  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the webhook URL the upstream must be given: the proxy, on railyard own receiver path', () => {
    expect(webhookUrl).toBe(expectedWebhookUrl);
  });

  it('drives a success, a failure and a timeout through Paystack', () => {
    expect(observed.charges[SUCCESS]).toEqual({ status: 'success', provider: 'paystack', failure_reason: null });
    expect(observed.charges[NO_FUNDS]).toMatchObject({ status: 'failed', provider: 'paystack' });
    expect(observed.charges[NO_FUNDS]!.failure_reason).not.toBeNull();
    // Paystack held it past railyard's timeout: the charge failed over to the next provider.
    expect(observed.charges[HELD]).toMatchObject({ status: 'success', failure_reason: null });
    expect(observed.charges[HELD]!.provider).not.toBe('paystack');
    expect(observed.transfers['1000000001']).toEqual({ status: 'success', provider: 'paystack', failure_reason: null });
    expect(observed.transfers['1000000002']).toMatchObject({ status: 'failed', provider: 'paystack' });
    expect(observed.unresolved).toBe(404);
  });

  it('passes the signed webhooks on intact: railyard accepted each one', () => {
    // charge.success for one charge, transfer.success and transfer.failed for the transfers.
    expect(text.match(/callback POST: success -> railyard answered 200/g)).toHaveLength(2);
    expect(text.match(/callback POST: failed -> railyard answered 200/g)).toHaveLength(1);
  });

  it('writes one rule per number or account, with outcomes and webhook delays as observed', () => {
    const byNumber = (msisdn: string) => scenario.rules.find((r) => (r.match?.msisdn as { equals?: string } | undefined)?.equals === msisdn);
    const byAccount = (account: string) => scenario.rules.find((r) => (r.match?.account_number as { equals?: string } | undefined)?.equals === account);
    const success = byNumber(SUCCESS)?.collect?.paystack?.[0];
    expect(success).toMatchObject({ respond: 'accept', callback: { status: 'success', drop: false } });
    // The sandbox rule the mock played sends the webhook 5 s after accepting.
    expect(success!.callback!.after_seconds).toBe(5);
    // No webhook for a failed charge: the poll found it, so the replay drops the callback too.
    expect(byNumber(NO_FUNDS)?.collect?.paystack?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: 'Insufficient Funds', drop: true } });
    expect(byNumber(HELD)?.collect?.paystack?.[0]).toEqual({ respond: 'timeout' });
    // A transfer names only its recipient code: the rule is keyed on the recipient's account.
    expect(byAccount('1000000001')?.match).toEqual({ bank_code: { equals: GCB }, account_number: { equals: '1000000001' } });
    expect(byAccount('1000000001')?.payout?.paystack?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'success' } });
    expect(byAccount('1000000002')?.payout?.paystack?.[0]).toMatchObject({ respond: 'accept', callback: { status: 'failed', reason: 'Insufficient Funds' } });
    expect(byAccount('1000000003')?.resolve?.paystack?.[0]).toMatchObject({ resolves: false });
    expect(scenario.rules).toHaveLength(6);
  });

  it('carries no secret key, in the clear or encoded', () => {
    expect(text).not.toContain(SECRET_KEY);
    expect(text).not.toContain(Buffer.from(SECRET_KEY).toString('base64').replace(/=+$/, ''));
    expect(text).not.toMatch(/Bearer|x-paystack-signature/i);
  });

  it('replays, with Paystack first in line, to the same outcomes', async () => {
    const sb = await startTestSandbox(
      {
        providers: { paystack: { enabled: true, priority: 1 }, 'mtn-momo': { priority: 2 }, 'bank-rail': { priority: 2 } },
        rails: { poll_after_seconds: RAILS.poll_after_seconds, poll_interval_seconds: RAILS.poll_interval_seconds },
      },
      scenario.rules,
    );
    try {
      // The replay sandbox runs on a virtual clock: waiting moves it.
      expect(await drive(merchant(sb.baseUrl, sb.key, sb.signingSecret, () => sb.advance(1)))).toEqual(observed);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
