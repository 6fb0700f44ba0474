import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startMock, type RunningMock } from '../../src/cli/mock-command.ts';
import { startRecording } from '../../src/cli/record-command.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { mtnReferenceId } from '../../src/providers/mtn-momo/adapter.ts';
import { buildConfig } from '../../src/railyard-config.ts';
import type { ScenarioFile } from '../../src/scenarios/scenario-schema.ts';
import { ROOT } from '../support/run-cli.ts';
import { merchant, secondOnBothClocks, settled, type Merchant, type SettledObject } from '../support/recording-merchant.ts';
import { startTestSandbox } from '../support/test-sandbox.ts';

// docs/configuration.md, "Recording MTN's real sandbox", run against `railyard mock mtn-momo
// --as-real-sandbox` in place of MTN (the tunnel aside: the callback origin is a hostname,
// localhost). The merchant charges the sandbox's Ghana test numbers in GHS; the adapter sends
// MTN's test numbers in EUR, which the strict mock takes; the callbacks settle the charges in
// GHS; the recorded scenario names the Ghana numbers and plays the same outcomes back.

// The documented default map (providers.mtn-momo.sandbox_identities: {}); failure reasons are the
// merchant API's words for MTN's (INTERNAL_PROCESSING_ERROR, APPROVAL_REJECTED).
const NUMBERS = {
  '0551234987': { mtn: '46733123400', outcome: { status: 'success', failure_reason: null } },
  '0551234988': { mtn: '46733123450', outcome: { status: 'failed', failure_reason: 'insufficient_funds' } },
  '0241234551': { mtn: '46733123451', outcome: { status: 'failed', failure_reason: 'declined_by_customer' } },
  '0241234554': { mtn: '46733123454', outcome: { status: 'success', failure_reason: null } }, // PayerDelayed: 25 s
} as const;
const GHANA = Object.keys(NUMBERS) as (keyof typeof NUMBERS)[];
const AMOUNT = 2_500; // 25.00 GHS: 2.00 EUR at the default 0.08 EUR per GHS

// The walkthrough as docs/configuration.md writes it: step 3's railyard.yaml (its placeholders
// filled with the credentials the strict mock is started with) and step 4's numbers.
const WALKTHROUGH = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8').split("**Recording MTN's real sandbox.**")[1]!;
const STEP_3_YAML = parseYaml(/3\. Put them in `railyard.yaml`[^`]*```yaml\n([\s\S]*?)```/.exec(WALKTHROUGH)![1]!.replace(/^ {3}/gm, '')) as { providers: { 'mtn-momo': Record<string, unknown> } };
const STEP_4_NUMBERS = /for n in ([\d ]+);/.exec(WALKTHROUGH)![1]!.trim().split(' ');
const CREDENTIALS = {
  api_user: 'walkthrough-api-user-0c4f',
  api_key: 'walkthrough-api-key-7d21e9',
  collection_subscription_key: 'walkthrough-collection-key-5a0b',
  disbursement_subscription_key: 'walkthrough-disbursement-key-93fe',
};
const config = buildConfig({
  port: 0,
  host: '127.0.0.1',
  db: ':memory:',
  log_requests: false,
  clock: 'virtual',
  rails: { timeout_ms: 2_000 },
  providers: { 'mtn-momo': { ...STEP_3_YAML.providers['mtn-momo'], ...CREDENTIALS } },
});

interface Charge {
  id: string;
  status: string;
  amount: number;
  currency: string;
  msisdn: string;
  provider: string | null;
  failure_reason: string | null;
}

async function charge(baseUrl: string, key: string, msisdn: string): Promise<{ status: number; body: { data: Charge } }> {
  const res = await fetch(`${baseUrl}/api/v1/charges`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `walkthrough-${msisdn}` },
    body: JSON.stringify({ amount: AMOUNT, currency: 'GHS', channel: 'momo', msisdn }),
  });
  return { status: res.status, body: (await res.json()) as { data: Charge } };
}

async function read(baseUrl: string, key: string, id: string): Promise<Charge> {
  const res = await fetch(`${baseUrl}/api/v1/charges/${id}`, { headers: { Authorization: `Bearer ${key}` } });
  return ((await res.json()) as { data: Charge }).data;
}

/** What MTN holds for one request to pay or transfer, as a client of the strict mock reads it. */
async function upstreamTransaction(mock: RunningMock, referenceId: string, product: 'collection' | 'disbursement' = 'collection'): Promise<Record<string, unknown>> {
  const subscription = { 'Ocp-Apim-Subscription-Key': product === 'collection' ? CREDENTIALS.collection_subscription_key : CREDENTIALS.disbursement_subscription_key };
  const basic = Buffer.from(`${CREDENTIALS.api_user}:${CREDENTIALS.api_key}`).toString('base64');
  const token = (await (await fetch(`${mock.url}/${product}/token/`, { method: 'POST', headers: { ...subscription, Authorization: `Basic ${basic}` } })).json()) as { access_token: string };
  const res = await fetch(`${mock.url}/${product}/v1_0/${product === 'collection' ? 'requesttopay' : 'transfer'}/${referenceId}`, {
    headers: { ...subscription, Authorization: `Bearer ${token.access_token}`, 'X-Target-Environment': 'sandbox' },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

const matchedNumber = (rule: ScenarioFile['rules'][number]) => (rule.match?.msisdn as { equals?: string } | undefined)?.equals;
const PAYEES = ['0551234987', '0241234555'] as const;
const TRANSFER_AMOUNT = 1_000; // 10.00 GHS: 0.80 EUR

async function transfer(client: Merchant): Promise<Record<string, string>> {
  expect((await client.post('/api/v1/sandbox/wallet/fund', { amount: 100_000 })).status).toBe(200);
  const ids: Record<string, string> = {};
  for (const msisdn of PAYEES) {
    const created = await client.post('/api/v1/transfers', { amount: TRANSFER_AMOUNT, currency: 'GHS', channel: 'momo', msisdn }, true);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    ids[msisdn] = created.body.data.id;
  }
  return ids;
}

async function transfersSettled(client: Merchant, ids: Record<string, string>): Promise<Record<string, SettledObject>> {
  return Object.fromEntries(await Promise.all(PAYEES.map(async (n) => [n, await settled(client, `/api/v1/transfers/${ids[n]}`)] as const)));
}

const outcomeOf = (c: Charge) => ({ status: c.status, failure_reason: c.failure_reason });

describe("the MTN walkthrough against the strict mock (MTN's real sandbox rules)", () => {
  it('is the walkthrough the docs give: step 3 maps identities, step 4 charges these numbers', () => {
    expect(STEP_3_YAML.providers['mtn-momo']).toMatchObject({ target_environment: 'sandbox', sandbox_identities: {} });
    expect(STEP_4_NUMBERS).toEqual(GHANA);
  });

  const dir = mkdtempSync(join(tmpdir(), 'railyard-mtn-walkthrough-'));
  const out = join(dir, 'recorded-mtn-momo.yaml');
  let mock: RunningMock;
  let recorded: Record<string, Charge>;
  let upstream: Record<string, Record<string, unknown>>;
  let transferUpstream: Record<string, Record<string, unknown>>;
  let transfers: Record<string, SettledObject>;
  let text: string;
  let scenario: ScenarioFile;

  beforeAll(async () => {
    const clock = new VirtualClock(VIRTUAL_EPOCH);
    // `railyard mock mtn-momo --as-real-sandbox`; its scenario rules are not played.
    mock = await startMock('mtn-momo', { config, rules: [], clock, asRealSandbox: true });
    // Step 3: `railyard record --provider mtn-momo --upstream <mock> --callback-origin http://localhost:<proxy port>`.
    // MTN refuses a callback host that is an IP address: the proxy is reached by name.
    const proxyPort = await freePort();
    const recording = await startRecording({ provider: 'mtn-momo', upstream: mock.url, out, config, rules: [], clock, proxyPort, callbackOrigin: `http://localhost:${proxyPort}` });
    const key = recording.railyard.sandbox.key;
    // Step 4: charge the Ghana test numbers through railyard.
    const ids: Record<string, string> = {};
    for (const msisdn of GHANA) {
      const created = await charge(recording.railyardUrl, key, msisdn);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      ids[msisdn] = created.body.data.id;
    }
    upstream = Object.fromEntries(await Promise.all(GHANA.map(async (n) => [n, await upstreamTransaction(mock, mtnReferenceId(ids[n]!))] as const)));
    let charges = await Promise.all(GHANA.map((n) => read(recording.railyardUrl, key, ids[n]!)));
    for (let second = 0; second < 40 && charges.some((c) => c.status === 'pending_provider'); second++) {
      await mock.advance(1);
      await recording.railyard.scheduler.advanceBy(1_000);
      charges = await Promise.all(GHANA.map((n) => read(recording.railyardUrl, key, ids[n]!)));
    }
    recorded = Object.fromEntries(GHANA.map((n, i) => [n, charges[i]!]));
    // Transfers go out the same way: MTN's Transfer column (…455 is NOT_ENOUGH_FUNDS there).
    const client = merchant(recording.railyardUrl, key, recording.railyard.sandbox.signingSecret, secondOnBothClocks(mock, recording.railyard));
    const transferIds = await transfer(client);
    transferUpstream = Object.fromEntries(await Promise.all(PAYEES.map(async (n) => [n, await upstreamTransaction(mock, mtnReferenceId(transferIds[n]!), 'disbursement')] as const)));
    transfers = await transfersSettled(client, transferIds);
    scenario = (await recording.stop()).scenario;
    text = readFileSync(out, 'utf8');
  }, 60_000);

  afterAll(async () => {
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the mock as the mapped MTN test number, in EUR', () => {
    for (const msisdn of GHANA) {
      expect(upstream[msisdn]).toMatchObject({ payer: { partyIdType: 'MSISDN', partyId: NUMBERS[msisdn].mtn }, amount: '2.00', currency: 'EUR' });
    }
  });

  it("pays out to the mapped MTN test number in EUR, with MTN's Transfer outcomes", () => {
    expect(transferUpstream['0551234987']).toMatchObject({ payee: { partyId: '46733123400' }, amount: '0.80', currency: 'EUR' });
    expect(transferUpstream['0241234555']).toMatchObject({ payee: { partyId: '46733123455' }, amount: '0.80', currency: 'EUR' });
    expect(transfers['0551234987']).toMatchObject({ status: 'success', provider: 'mtn-momo' });
    expect(transfers['0241234555']).toMatchObject({ status: 'failed', provider: 'mtn-momo', failure_reason: 'insufficient_funds' });
  });

  it("settles each charge with MTN's documented outcome, in GHS, for the Ghana number", () => {
    for (const msisdn of GHANA) {
      expect(recorded[msisdn]).toMatchObject({ ...NUMBERS[msisdn].outcome, amount: AMOUNT, currency: 'GHS', provider: 'mtn-momo' });
      expect(recorded[msisdn]!.msisdn).toMatch(new RegExp(`${msisdn.slice(1)}$`));
    }
  });

  it("names the Ghana numbers in its rules, never MTN's test numbers; the log shows both", () => {
    const matched = scenario.rules.map(matchedNumber).sort();
    expect(matched).toEqual([...new Set([...GHANA, ...PAYEES])].sort());
    const [header, rules] = [text.slice(0, text.indexOf('\nversion:')), text.slice(text.indexOf('\nversion:'))];
    for (const msisdn of GHANA) {
      expect(rules).not.toContain(NUMBERS[msisdn].mtn);
      expect(header).toContain(`(${msisdn} as ${NUMBERS[msisdn].mtn}, 2.00 EUR)`);
    }
    expect(scenario.rules.find((r) => matchedNumber(r) === '0241234554')?.collect?.['mtn-momo']?.[0]?.callback).toMatchObject({
      status: 'success',
      after_seconds: 25,
    });
  });

  it('loaded into a fresh serve, plays the same outcomes back for the Ghana numbers', async () => {
    const sb = await startTestSandbox({}, scenario.rules);
    try {
      const ids: string[] = [];
      for (const msisdn of GHANA) ids.push((await charge(sb.baseUrl, sb.key, msisdn)).body.data.id);
      await sb.advance(30);
      const replayed = await Promise.all(ids.map((id) => read(sb.baseUrl, sb.key, id)));
      expect(replayed.map(outcomeOf)).toEqual(GHANA.map((n) => outcomeOf(recorded[n]!)));
      for (const c of replayed) expect(c).toMatchObject({ amount: AMOUNT, currency: 'GHS', provider: 'mtn-momo' });
      const client = merchant(sb.baseUrl, sb.key, sb.signingSecret, () => sb.advance(1));
      expect(await transfersSettled(client, await transfer(client))).toEqual(transfers);
    } finally {
      await sb.close();
    }
  });
});
