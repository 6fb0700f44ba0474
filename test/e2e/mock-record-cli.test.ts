import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/run-cli.ts';
import { freePort, startServe } from '../support/serve-process.ts';
import { parseScenario } from '../../src/railyard-scenarios.ts';

// `railyard mock` and `railyard record` as processes: what a developer types.

const dir = mkdtempSync(join(tmpdir(), 'railyard-mock-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `railyard <args>` and resolves with its output once `ready` appears in it. */
function startCli(args: string[], ready: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_NO_WARNINGS: '1', RAILYARD_LOG_REQUESTS: 'false', RAILYARD_DB: ':memory:', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const started = new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no "${ready}" within 30 s:\n${out}`)), 30_000);
    const check = () => {
      if (out.includes(ready)) {
        clearTimeout(timer);
        done();
      }
    };
    child.stdout.on('data', check);
    void exited.then(() => fail(new Error(`exited before "${ready}":\n${out}`)));
  });
  return { started, exited, output: () => out, stop: () => child.kill('SIGTERM') };
}

describe('railyard mock', () => {
  it('serves one mock on its own port, and its banner names the credentials it accepts', async () => {
    const port = await freePort();
    const mock = startCli(['mock', 'mtn-momo', '--port', String(port)], 'listening on');
    try {
      await mock.started;
      const banner = mock.output();
      expect(banner).toContain(`http://127.0.0.1:${port}`);
      for (const shown of ['railyard-mtn-collection-key', 'railyard-mtn-disbursement-key', 'railyard-mtn-api-user', 'railyard-mtn-api-key', 'POST /v1_0/apiuser']) expect(banner).toContain(shown);

      const basic = Buffer.from('railyard-mtn-api-user:railyard-mtn-api-key').toString('base64');
      const token = await fetch(`http://127.0.0.1:${port}/collection/token/`, {
        method: 'POST',
        headers: { Authorization: `Basic ${basic}`, 'Ocp-Apim-Subscription-Key': 'railyard-mtn-collection-key' },
      });
      expect(token.status).toBe(200);
      expect(await token.json()).toMatchObject({ token_type: 'access_token' });
    } finally {
      mock.stop();
      expect(await mock.exited).toBe(0);
    }
  }, 60_000);

  it("--as-real-sandbox: the MTN mock refuses what MTN's real sandbox refuses, and says so in its banner", async () => {
    const port = await freePort();
    const mock = startCli(['mock', 'mtn-momo', '--as-real-sandbox', '--port', String(port)], 'listening on');
    try {
      await mock.started;
      expect(mock.output()).toContain('as the real sandbox');
      expect(mock.output()).toContain('a currency other than EUR: 500 INVALID_CURRENCY');
      const base = `http://127.0.0.1:${port}`;
      const key = { 'Ocp-Apim-Subscription-Key': 'railyard-mtn-collection-key' };
      const basic = Buffer.from('railyard-mtn-api-user:railyard-mtn-api-key').toString('base64');
      const { access_token: token } = (await (await fetch(`${base}/collection/token/`, { method: 'POST', headers: { ...key, Authorization: `Basic ${basic}` } })).json()) as { access_token: string };
      const pay = await fetch(`${base}/collection/v1_0/requesttopay`, {
        method: 'POST',
        headers: { ...key, Authorization: `Bearer ${token}`, 'X-Target-Environment': 'sandbox', 'X-Reference-Id': crypto.randomUUID(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ amount: '25.00', currency: 'GHS', externalId: 'x', payer: { partyIdType: 'MSISDN', partyId: '233551234987' } }),
      });
      expect(pay.status).toBe(500);
      expect(await pay.json()).toEqual({ code: 'INVALID_CURRENCY', message: 'Currency not supported.' });
    } finally {
      mock.stop();
      expect(await mock.exited).toBe(0);
    }
  }, 60_000);

  it('--as-real-sandbox is refused, exit code 2, for a mock without that mode', async () => {
    const run = await runCli(['mock', 'hubtel', '--as-real-sandbox']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--as-real-sandbox is for mtn-momo, not hubtel');
  });

  it('refuses a provider it does not know, with exit code 2', async () => {
    const run = await runCli(['mock', 'western-union']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('mtn-momo, hubtel, bank-rail');
  });
});

describe('railyard record', () => {
  it('records for --duration, then writes a scenario file the loader accepts', async () => {
    const mockPort = await freePort();
    const mock = startCli(['mock', 'bank-rail', '--port', String(mockPort)], 'listening on');
    const out = join(dir, 'recorded-bank-rail.yaml');
    try {
      await mock.started;
      const port = await freePort();
      const record = startCli(['record', '--provider', 'bank-rail', '--upstream', `http://127.0.0.1:${mockPort}`, '--out', out, '--duration', '3'], 'is recording', {
        PORT: String(port),
        HOST: '127.0.0.1',
      });
      await record.started;
      // A name enquiry through railyard crosses the proxy to the standalone mock.
      const resolved = await fetch(`http://127.0.0.1:${port}/api/v1/resolve/bank-name`, {
        method: 'POST',
        headers: { Authorization: 'Bearer sk_test_railyard_sandbox_0000000000000000', 'Content-Type': 'application/json' },
        body: JSON.stringify({ account_number: '1000000001', bank_code: '040100' }),
      });
      expect(resolved.status).toBe(200);
      expect(await record.exited).toBe(0);
      expect(record.output()).toContain(`wrote 1 rule(s) to ${out}`);
      const scenario = parseScenario(readFileSync(out, 'utf8'), out);
      expect(scenario.rules[0]!.resolve!['bank-rail']![0]).toMatchObject({ name: 'Ama Owusu' });
    } finally {
      mock.stop();
      await mock.exited;
    }
  }, 60_000);

  it('the MTN walkthrough as processes: the strict mock, the recorder and serve, with the documented railyard.yaml', async () => {
    // Step 3's railyard.yaml from docs/configuration.md, its placeholders filled in.
    const walkthrough = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8').split("**Recording MTN's real sandbox.**")[1]!;
    const yaml = /3\. Put them in `railyard.yaml`[^`]*```yaml\n([\s\S]*?)```/
      .exec(walkthrough)![1]!
      .replace(/^ {3}/gm, '')
      .replace(/<[^>]+>/g, (placeholder) => `walkthrough-${placeholder.replace(/\W+/g, '-').toLowerCase()}`);
    const configFile = join(dir, 'railyard.yaml');
    writeFileSync(configFile, yaml);
    const env = { RAILYARD_CONFIG: configFile };
    const key = 'sk_test_railyard_sandbox_0000000000000000';
    const charge = async (base: string, msisdn: string) => {
      const res = await fetch(`${base}/api/v1/charges`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `walkthrough-${msisdn}` },
        body: JSON.stringify({ amount: 2_500, currency: 'GHS', channel: 'momo', msisdn }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { data: { id: string } }).data.id;
    };
    const settled = async (base: string, id: string) => {
      for (let i = 0; i < 60; i++) {
        const { data } = (await (await fetch(`${base}/api/v1/charges/${id}`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
          data: { status: string; failure_reason: string | null; currency: string };
        };
        if (data.status !== 'pending_provider') return data;
        await new Promise((done) => setTimeout(done, 250));
      }
      throw new Error(`charge ${id} did not settle`);
    };
    const mockPort = await freePort();
    const mock = startCli(['mock', 'mtn-momo', '--as-real-sandbox', '--port', String(mockPort)], 'listening on', env);
    const out = join(dir, 'recorded-mtn-momo.yaml');
    try {
      await mock.started;
      const [port, proxyPort] = [await freePort(), await freePort()];
      const record = startCli(
        [
          'record',
          '--provider',
          'mtn-momo',
          '--upstream',
          `http://127.0.0.1:${mockPort}`,
          '--out',
          out,
          '--duration',
          '10',
          '--proxy-port',
          String(proxyPort),
          '--callback-origin',
          `http://localhost:${proxyPort}`,
        ],
        'is recording',
        { ...env, PORT: String(port), HOST: '127.0.0.1' },
      );
      await record.started;
      const base = `http://127.0.0.1:${port}`;
      const [success, noFunds] = [await charge(base, '0551234987'), await charge(base, '0551234988')];
      expect(await settled(base, success)).toMatchObject({ status: 'success', currency: 'GHS' });
      expect(await settled(base, noFunds)).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds', currency: 'GHS' });
      expect(await record.exited).toBe(0);
      const text = readFileSync(out, 'utf8');
      expect(text).toContain('(0551234987 as 46733123400, 2.00 EUR)');
      const scenario = parseScenario(text, out);
      expect(scenario.rules.map((r) => (r.match?.msisdn as { equals?: string } | undefined)?.equals).sort()).toEqual(['0551234987', '0551234988']);

      const serve = await startServe({ ...env, RAILYARD_DB: ':memory:', RAILYARD_SCENARIOS: out }, await freePort());
      try {
        const [again, againNoFunds] = [await charge(serve.baseUrl, '0551234987'), await charge(serve.baseUrl, '0551234988')];
        expect(await settled(serve.baseUrl, again)).toMatchObject({ status: 'success', currency: 'GHS' });
        expect(await settled(serve.baseUrl, againNoFunds)).toMatchObject({ status: 'failed', failure_reason: 'insufficient_funds' });
      } finally {
        await serve.stop('SIGTERM');
      }
    } finally {
      mock.stop();
      await mock.exited;
    }
  }, 90_000);

  it('says what is wrong with its arguments, with exit code 2', async () => {
    const run = await runCli(['record', '--provider', 'western-union', '--upstream', 'ftp://x']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--provider is one of mtn-momo, hubtel, bank-rail');
    expect(run.stderr).toContain('--upstream must be an http(s) URL');
  });
});
