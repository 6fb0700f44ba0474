// `railyard clock advance <duration>` against a served railyard: it starts the advance in the
// background, follows it to the end printing its progress, and the jobs it waited for have run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.ts';
import { freePort, startServe, type ServeProcess } from '../support/serve-process.ts';

const KEY = 'sk_test_clock_cli_000000000000000001';
let served: ServeProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-clock-cli-'));
  served = await startServe({ RAILYARD_CLOCK: 'virtual', RAILYARD_SEED: '3', RAILYARD_SANDBOX_KEY: KEY, RAILYARD_DB: join(dir, 'railyard.db') }, await freePort());
}, 60_000);
afterAll(async () => {
  await served?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string) {
  const res = await fetch(`${served.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
}

describe('railyard clock advance', () => {
  it('advances the served clock by a duration, printing plain progress lines off a terminal, and the due jobs ran', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await api('POST', '/api/v1/charges', { amount: 1000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, `clock-cli-${i}`);
      expect(res.status).toBe(201);
      ids.push(String(res.body.data.id));
    }
    const run = await runCli(['clock', 'advance', '2m', '--base', served.baseUrl, '--key', KEY]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Advancing 120 s: 2026-01-01T00:00:00\.000Z -> 2026-01-01T00:02:00\.000Z \(adv_\S+\)$/);
    expect(lines.slice(1, -1).every((l) => /^(advancing|succeeded): \d+\/\d+ job\(s\) \(\d+%\)$/.test(l))).toBe(true);
    // One callback per charge, and more should a slow machine make a provider call time out (failover).
    const ran = Number(/^Advanced 120 s to 2026-01-01T00:02:00\.000Z; ran (\d+) job\(s\)$/.exec(lines.at(-1)!)?.[1]);
    expect(ran).toBeGreaterThanOrEqual(40);
    expect(run.stdout).not.toMatch(/\x1b\[/);

    expect((await api('GET', '/api/v1/sandbox/clock')).body.data).toMatchObject({ now: '2026-01-01T00:02:00.000Z' });
    for (const id of ids) expect((await api('GET', `/api/v1/charges/${id}`)).body.data.status).toBe('success');
  }, 120_000);

  it('refuses a duration it cannot read with exit 2, and a live key', async () => {
    const bad = await runCli(['clock', 'advance', 'soon', '--api', served.baseUrl, '--key', KEY]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('give a duration such as 90s, 15m, 24h or 1d, got "soon"');
    const live = await runCli(['clock', 'advance', '1h', '--api', served.baseUrl, '--key', 'sk_live_nope_000000000000']);
    expect(live.code).toBe(2);
    expect(live.stderr).toContain('--key must be a test key');
  }, 60_000);
});
