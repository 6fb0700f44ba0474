import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { formatVerification } from '../../src/cli/contracts-command.ts';
import { verifyContracts, type PactVerification } from '../../src/contracts/contract-verifier.ts';
import { loadScenarioSource } from '../../src/contracts/scenario-recording.ts';
import { configSchema } from '../../src/railyard-config.ts';

// The Pact verifier itself runs here, against in-process railyard, on the committed contracts.
// It prints its own report to stdout as it goes.

const tmp = mkdtempSync(join(tmpdir(), 'railyard-pact-verify-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder holding the merchant contract's interactions of one scenario only: quicker to verify. */
function subset(scenario: string): string {
  const pact = JSON.parse(readFileSync('contracts/merchant-railyard.json', 'utf8')) as { interactions: { description: string }[] };
  pact.interactions = pact.interactions.filter((i) => i.description.startsWith(`${scenario} step `));
  const dir = join(tmp, `${scenario}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'merchant-railyard.json'), JSON.stringify(pact, null, 2));
  return dir;
}

/** A provider that rewrites the JSON it answers to one route: a breaking change, simulated. */
function rewriting(route: RegExp, change: (body: { data: Record<string, unknown> }) => void) {
  return (handler: RequestListener): RequestListener =>
    (req, res) => {
      if (req.method === 'GET' && route.test(req.url ?? '')) {
        const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => ServerResponse;
        (res as { end: unknown }).end = (chunk?: unknown, ...rest: unknown[]) => {
          if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
            const body = JSON.parse(Buffer.from(chunk as string).toString('utf8')) as { data: Record<string, unknown> };
            change(body);
            const text = JSON.stringify(body);
            res.setHeader('content-length', Buffer.byteLength(text));
            return end(text, ...rest.filter((r) => typeof r === 'function'));
          }
          return end(chunk, ...rest);
        };
      }
      handler(req, res);
    };
}

function failing(results: PactVerification[]) {
  return results.flatMap((r) => r.interactions.filter((i) => !i.passed));
}

describe('railyard contracts verify, in process', () => {
  it('verifies every committed contract green: merchant -> railyard with its messages, and railyard -> each provider', async () => {
    const results = await verifyContracts({ dir: 'contracts', logLevel: 'error' });
    expect(results.map((r) => `${r.consumer}-${r.provider}`)).toEqual([
      'merchant-railyard',
      'railyard-bank-rail',
      'railyard-bills',
      'railyard-card-processor',
      'railyard-direct-debit',
      'railyard-hubtel',
      'railyard-mtn-momo',
      'railyard-paystack',
    ]);
    for (const r of results) {
      const pact = JSON.parse(readFileSync(r.file, 'utf8')) as { interactions: { type: string }[] };
      expect(r.interactions.length, r.file).toBe(pact.interactions.length);
      expect(failing([r]), r.file).toEqual([]);
      expect(r.passed, r.error).toBe(true);
    }
    const merchant = JSON.parse(readFileSync('contracts/merchant-railyard.json', 'utf8')) as { interactions: { type: string }[] };
    expect(merchant.interactions.some((i) => i.type === 'Asynchronous/Messages')).toBe(true);
  }, 120_000);

  it('fails when a response field changes type, naming the field', async () => {
    const results = await verifyContracts({
      dir: subset('failover'),
      logLevel: 'error',
      wrapProvider: rewriting(/^\/api\/v1\/charges\/chg_/, (body) => {
        body.data.amount = String(body.data.amount);
      }),
    });
    expect(results[0]!.passed).toBe(false);
    const bad = failing(results);
    expect(bad.map((i) => i.description)).toEqual(['failover step 3: the charge is settled by hubtel']);
    expect(bad[0]!.mismatches).toContainEqual({
      path: '$.data.amount',
      message: expect.stringMatching(/Expected '10000' \(String\) to be .*10000 \(Integer\)|Expected '10000' \(String\) to be an integer/),
    });
    const report = formatVerification(results);
    expect(report).toMatch(/FAIL {2}merchant -> railyard/);
    expect(report).toMatch(/\$\.data\.amount: Expected '10000' \(String\)/);
  }, 60_000);

  it('fails when a response field is removed, naming the field', async () => {
    const results = await verifyContracts({
      dir: subset('failover'),
      logLevel: 'error',
      wrapProvider: rewriting(/^\/api\/v1\/charges\/chg_/, (body) => {
        delete body.data.fees;
      }),
    });
    const bad = failing(results);
    expect(bad).toHaveLength(1);
    expect(bad[0]!.mismatches).toContainEqual({ path: '$.data', message: expect.stringMatching(/missing the following keys: fees/) });
    expect(formatVerification(results)).toMatch(/\$\.data: Actual map is missing the following keys: fees/);
  }, 60_000);

  it('passes the same subset unchanged (the failures above come from the changes)', async () => {
    const results = await verifyContracts({ dir: subset('failover'), logLevel: 'error', wrapProvider: (h) => h });
    expect(failing(results)).toEqual([]);
    expect(results[0]!.passed).toBe(true);
  }, 60_000);
});

describe('railyard contracts verify --provider-base-url', () => {
  it('verifies the merchant contract against a running railyard, building states over HTTP and reading messages from its events', async () => {
    const source = loadScenarioSource('scenarios/failover.yaml');
    const config = configSchema.parse({ db: ':memory:', clock: 'virtual', log_requests: false, rails: { timeout_ms: 500 } });
    const ry = await createApp(config, { rules: source.scenario.rules, wallets: source.scenario.wallets });
    const server = createServer(ry.app);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ry.setBaseUrl(baseUrl);
    try {
      const results = await verifyContracts({ dir: subset('failover'), providerBaseUrl: baseUrl, logLevel: 'error' });
      expect(results).toHaveLength(1);
      expect(failing(results)).toEqual([]);
      expect(results[0]!.interactions.length).toBeGreaterThanOrEqual(4);
      expect(results[0]!.passed).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await ry.close();
    }
  }, 60_000);

  it('verifies only the merchant contract there: upstream contracts need the in-process mocks', async () => {
    const results = await verifyContracts({ dir: 'contracts', providerBaseUrl: 'http://127.0.0.1:9', providers: ['mtn-momo'] });
    expect(results).toEqual([]);
  });
});
