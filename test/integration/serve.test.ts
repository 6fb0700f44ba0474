import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../support/scratch-dir.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function run(env: Record<string, string>, until: (out: string) => boolean): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: { ...process.env, RAILYARD_DB: ':memory:', RAILYARD_LOG_REQUESTS: 'false', ...env },
    });
    let out = '';
    let err = '';
    let checked = false;
    child.stdout.on('data', async (d) => {
      out += d;
      if (!checked && until(out)) {
        checked = true;
        const health = await fetch(`http://127.0.0.1:${env.PORT}/healthz`).then((r) => r.json());
        out += `\nHEALTH ${JSON.stringify(health)}\n`;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => done({ code, out, err }));
  });
}

describe('railyard serve', () => {
  it('prints the banner, serves /healthz and stops cleanly on SIGTERM', async () => {
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    const result = await run({ PORT: port, RAILYARD_SANDBOX_KEY: 'sk_test_from_env_for_the_banner_01' }, (out) => out.includes('openapi'));
    expect(result.out).toContain(`listening on http://localhost:${port}`);
    expect(result.out).toContain('sandbox key      sk_test_from_env_for_the_banner_01');
    expect(result.out).toContain('signing secret');
    expect(result.out).toMatch(/scenarios\s[\s\S]*sandbox \(.*sandbox\.yaml, 8 rules\)/);
    // Each mock's base URL and the credentials it accepts, for a provider's own SDK.
    expect(result.out).toMatch(new RegExp(`mtn-momo\\s+http://127\\.0\\.0\\.1:${port}/mocks/mtn-momo`));
    expect(result.out).toMatch(/collection subscription key\s+railyard-mtn-collection-key\s+\(Ocp-Apim-Subscription-Key header/);
    expect(result.out).toContain('POST /v1_0/apiuser');
    expect(result.out).toMatch(/client secret\s+railyard-hubtel-secret/);
    expect(result.out).toMatch(/participant id\s+railyard-bank-participant/);
    expect(result.out).toContain('HEALTH {"status":"ok"');
    expect(result.out).toContain('railyard stopped');
    expect(result.code).toBe(0);
  });

  it('refuses to start on a broken scenario file, citing file:line:column', async () => {
    const dir = scratchDir('railyard-bad-');
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'version: 1\nname: broken\nrules:\n  - name: a\n    match: { msisdn: "0551234987" }\n    collect:\n      any: { respond: sometimes }\n');
    const result = await run({ PORT: '0', RAILYARD_SCENARIOS: file }, () => false);
    expect(result.code).toBe(2);
    expect(result.err).toContain(`${file}:7:23: rules[0].collect.any.respond:`);
  });

  it('refuses to start on a bad environment value', async () => {
    const result = await run({ PORT: '0', RAILYARD_CLOCK: 'sundial' }, () => false);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/clock/);
  });
});
