// docs/retries.md, run as it stands: each fault's curl example against railyard on the system
// clock (as after `npm start`), and the client loop through every fault at once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const guide = readFileSync(resolve(import.meta.dirname, '../../docs/retries.md'), 'utf8');

/** The one fenced block of `lang` between `<!-- retries:name:start -->` and `<!-- retries:name:end -->`. */
function block(name: string, lang: string): string {
  const start = guide.indexOf(`<!-- retries:${name}:start -->`);
  const end = guide.indexOf(`<!-- retries:${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`docs/retries.md has no <!-- retries:${name}:start/end --> block`);
  const found = [...guide.slice(start, end).matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
  if (found.length !== 1) throw new Error(`expected one ${lang} block for retries:${name}, found ${found.length}`);
  return found[0]!;
}

/** The first sh block: the variables and the funded wallet every example starts from. */
const setup = /```sh\n([\s\S]*?)```/.exec(guide)![1]!;

let sb: TestSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startTestSandbox({ clock: 'system' });
  dir = mkdtempSync(join(tmpdir(), 'retries-guide-'));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs a program without blocking this process's event loop: the server it talks to lives here. */
function run(command: string, args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

async function sh(name: string): Promise<string> {
  const result = await run('bash', ['-c', `set -e\n${setup}\n${block(name, 'sh')}`], { BASE: sb.baseUrl, KEY: sb.key, SECRET: sb.signingSecret });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

const charges = async () => (await sb.ry.store.all<{ id: string }>('SELECT id FROM charges')).map((r) => r.id);
const transfers = async () => (await sb.ry.store.all<{ id: string }>('SELECT id FROM transfers')).map((r) => r.id);

describe('docs/retries.md', () => {
  it('a lost answer: no answer, then the stored answer for the same bytes, one transfer', async () => {
    const before = (await transfers()).length;
    const out = await sh('lost');
    expect(out).toContain('"name":"lost-responses on POST /api/v1/transfers"');
    expect(out).toContain('no answer (curl exit 52)');
    expect(out).toMatch(/^HTTP\/1\.1 201 Created\r?$/m);
    expect(out).toMatch(/^idempotent-replayed: true\r?$/im);
    expect((await transfers()).length).toBe(before + 1);
  });

  it('a 503 before any work: the retry with the same key does the work, once', async () => {
    const before = (await charges()).length;
    const out = await sh('server-errors');
    expect(out).toMatch(/"code":"service_unavailable"\}\} HTTP 503/);
    expect(out).toMatch(/"status":"pending_provider".* HTTP 201/);
    expect((await charges()).length).toBe(before + 1);
  });

  it('a 429 with Retry-After: honoured, the next request passes', async () => {
    const out = await sh('rate-limit');
    const statuses = [...out.matchAll(/^HTTP (\d+)$/gm)].map((m) => m[1]);
    expect(statuses.slice(0, 2)).toEqual(['200', '200']);
    expect(['200', '429']).toContain(statuses[2]);
    expect(out).toMatch(/^ratelimit-limit: 2\r?$/im);
    expect(out).toContain('after Retry-After: HTTP 200');
  });

  it('an answer slower than the timeout: give up, retry, get the stored answer', async () => {
    const before = (await charges()).length;
    const out = await sh('slow');
    expect(out).toContain('gave up after 1 s (curl exit 28)');
    expect(out).toMatch(/^HTTP\/1\.1 201 Created\r?$/m);
    expect(out).toMatch(/^idempotent-replayed: true\r?$/im);
    expect((await charges()).length).toBe(before + 1);
    expect(out).toMatch(/"removed":\d+/);
    expect((await sb.get('/api/v1/sandbox/faults')).body.data).toEqual([]);
  });

  it('the client loop makes each charge exactly once through every fault at once', async () => {
    const on = (fault: Record<string, unknown>) => sb.post('/api/v1/sandbox/faults', fault).expect(201);
    await on({ profile: 'rate-limit', requests: 5, per_seconds: 1 });
    await on({ profile: 'lost-responses', route: 'POST /api/v1/charges', every: 3 });
    await on({ profile: 'server-errors', route: 'POST /api/v1/charges', probability: 0.3 });
    await on({ profile: 'slow-responses', route: 'POST /api/v1/charges', after_commit: true, latency_ms: 800, every: 3 });
    const before = new Set(await charges());
    const script = join(dir, 'client.mjs');
    writeFileSync(
      script,
      `${block('client', 'js')}
const made = [];
for (let i = 0; i < 6; i++) made.push(await createCharge(process.env.BASE, process.env.KEY, { amount: 1000 + i, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { timeoutMs: 500 }));
console.log(JSON.stringify(made.map((m) => [m.data.id, m.data.amount])));
`,
    );
    const client = await run(process.execPath, [script], { BASE: sb.baseUrl, KEY: sb.key });
    expect(client.status, client.stderr).toBe(0);
    const made = JSON.parse(client.stdout) as [string, number][];
    expect(made.map(([, amount]) => amount)).toEqual([1000, 1001, 1002, 1003, 1004, 1005]);
    const created = (await charges()).filter((id) => !before.has(id));
    expect(created.sort()).toEqual(made.map(([id]) => id).sort());
    // Every kind of fault was met on the way.
    const fired = (await sb.get('/api/v1/sandbox/faults')).body.data.map((f: { action: string; fired: number }) => [f.action, f.fired > 0]);
    expect(fired).toEqual([
      ['rate_limit', expect.any(Boolean)],
      ['drop', true],
      ['respond', true],
      ['latency', true],
    ]);
  }, 90_000);
});
