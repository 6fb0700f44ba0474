import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.ts';
import { loadConfig } from '../../src/railyard-config.ts';
import { scratchDir } from '../support/scratch-dir.ts';

function dirWith(yaml: string): string {
  const dir = scratchDir('railyard-config-');
  writeFileSync(join(dir, 'railyard.yaml'), yaml);
  return dir;
}

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({}, scratchDir('railyard-empty-'));
    expect(config).toMatchObject({ port: 4010, clock: 'system', db: './data/railyard.db' });
    expect(config.sandbox.key).toMatch(/^sk_test_/);
    expect(config.providers['mtn-momo'].priority).toBe(1);
  });

  it('reads railyard.yaml and lets the environment override it', () => {
    const dir = dirWith('port: 5000\nclock: virtual\nrails:\n  timeout_ms: 900\nfees:\n  payout:\n    bank: { fixed: 300 }\n');
    const config = loadConfig({ PORT: '6000', RAILYARD_SANDBOX_KEY: 'sk_test_from_the_environment_1234' }, dir);
    expect(config.port).toBe(6000);
    expect(config.clock).toBe('virtual');
    expect(config.rails.timeout_ms).toBe(900);
    expect(config.fees.payout.bank.fixed).toBe(300);
    expect(config.sandbox.key).toBe('sk_test_from_the_environment_1234');
  });

  it('reports file errors with file:line:column', () => {
    const dir = dirWith('port: 5000\nrails:\n  timeout_ms: fast\n  colour: blue\n');
    expect(() => loadConfig({}, dir)).toThrow(ConfigError);
    try {
      loadConfig({}, dir);
    } catch (err) {
      expect((err as Error).message).toContain(`${join(dir, 'railyard.yaml')}:3:15: rails.timeout_ms:`);
      expect((err as Error).message).toContain(`${join(dir, 'railyard.yaml')}:4:3: rails.colour: unknown field "colour"`);
    }
  });

  it('reports bad environment values precisely', () => {
    const dir = scratchDir('railyard-empty-');
    expect(() => loadConfig({ PORT: 'eighty' }, dir)).toThrow('PORT must be a whole number, got "eighty"');
    expect(() => loadConfig({ RAILYARD_CLOCK: 'sundial' }, dir)).toThrow(/clock/);
    expect(() => loadConfig({ RAILYARD_SANDBOX_KEY: 'sk_live_nope_nope_nope_nope' }, dir)).toThrow(/sandbox\.key/);
  });

  it('runs jobs side by side by default; serial only when asked (scheduler.concurrency or RAILYARD_JOB_CONCURRENCY)', () => {
    const empty = scratchDir('railyard-empty-');
    expect(loadConfig({}, empty).scheduler.concurrency).toBe(64);
    expect(loadConfig({ RAILYARD_JOB_CONCURRENCY: '1' }, empty).scheduler.concurrency).toBe(1);
    expect(loadConfig({}, dirWith('scheduler:\n  concurrency: 4\n')).scheduler.concurrency).toBe(4);
    expect(() => loadConfig({ RAILYARD_JOB_CONCURRENCY: '0' }, empty)).toThrow(/scheduler\.concurrency/);
    expect(() => loadConfig({ RAILYARD_JOB_CONCURRENCY: 'many' }, empty)).toThrow('RAILYARD_JOB_CONCURRENCY must be a whole number, got "many"');
  });

  it("runs a served sandbox's jobs on a thread of their own by default; on the request thread when asked (scheduler.thread or RAILYARD_JOB_THREAD)", () => {
    const empty = scratchDir('railyard-empty-');
    expect(loadConfig({}, empty).scheduler.thread).toBe(true);
    expect(loadConfig({ RAILYARD_JOB_THREAD: 'false' }, empty).scheduler.thread).toBe(false);
    expect(loadConfig({ RAILYARD_JOB_THREAD: '0' }, empty).scheduler.thread).toBe(false);
    expect(loadConfig({ RAILYARD_JOB_THREAD: 'true' }, dirWith('scheduler:\n  thread: false\n')).scheduler.thread).toBe(true);
    expect(loadConfig({}, dirWith('scheduler:\n  thread: false\n')).scheduler.thread).toBe(false);
    expect(() => loadConfig({ RAILYARD_JOB_THREAD: 'maybe' }, empty)).toThrow('RAILYARD_JOB_THREAD must be true or false, got "maybe"');
  });
});
