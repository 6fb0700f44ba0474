// GET and POST /api/v1/sandbox/replays: the loaded scenario files with a script, and running one
// as `railyard replay <file>` does, in a sandbox of its own (the serving one is left alone).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxReplays } from '../../src/replay/sandbox-replays.ts';
import { ruleSource } from '../../src/scenarios/rule-source.ts';
import { ruleSources } from '../../src/scenarios/scenario-loader.ts';
import type { ReplayRun, ScenarioReplays } from '../../src/sandbox/scenario-replays.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = ['pass/charge-success.yaml', 'pass/no-script.yaml', 'fail/wrong-expectation.yaml'].map((f) => resolve(ROOT, 'test/fixtures/replay', f));
const PASSING = 'test/fixtures/replay/pass/charge-success.yaml';
const FAILING = 'test/fixtures/replay/fail/wrong-expectation.yaml';

let sb: TestSandbox;

beforeAll(async () => {
  const loaded = loadScenarios(FIXTURES, ROOT);
  sb = await startTestSandbox({}, undefined, [], { replays: new SandboxReplays(() => loaded.files, { cwd: ROOT }) });
});
afterAll(async () => {
  await sb?.close();
});

const run = (file: unknown, key = sb.key) => sb.post('/api/v1/sandbox/replays', { file }, { key });

describe('GET /api/v1/sandbox/replays', () => {
  it('lists the loaded files that have a script, with their step counts, and not those without', async () => {
    const res = await sb.get('/api/v1/sandbox/replays');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { file: PASSING, name: 'charge-success', description: expect.toBeOneOf([null, expect.any(String)]), steps: 5 },
      { file: FAILING, name: 'wrong-expectation', description: null, steps: 4 },
    ]);
  });
});

describe('POST /api/v1/sandbox/replays', () => {
  it('runs a passing script: every step passed, and its timeline, in a sandbox of its own', async () => {
    const clockBefore = (await sb.get('/api/v1/sandbox/clock')).body.data.now;
    const res = await run(PASSING);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ file: PASSING, status: 'passed', passed: true, failures: [], not_run: 0 });
    expect(data.steps.map((s: { index: number; kind: string; passed: boolean }) => [s.index, s.kind, s.passed])).toEqual([
      [1, 'request', true],
      [2, 'advance', true],
      [3, 'expect_webhook', true],
      [4, 'expect_ledger', true],
      [5, 'expect_provider_calls', true],
    ]);
    expect(data.timeline[0]).toEqual({ at: '+00:00.000', from: 'merchant', to: 'railyard', what: 'POST /api/v1/charges' });
    expect(data.timeline.some((e: { what: string }) => /callback chg_\w+: success -> settled/.test(e.what))).toBe(true);
    // The serving sandbox saw nothing: its clock did not move and it holds no charge.
    expect((await sb.get('/api/v1/sandbox/clock')).body.data.now).toBe(clockBefore);
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });

  it('answers a failing script 422 replay_failed (so curl -f fails), the report in the error details: the step, why, and the steps not run', async () => {
    const res = await run(FAILING);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ status: false, error: { code: 'replay_failed' } });
    expect(res.body.message).toBe(`The replay of ${FAILING} failed at step 3: expect_webhook charge.success`);
    expect(res.body.data).toBeUndefined();
    const data = res.body.error.details;
    expect(data).toMatchObject({ file: FAILING, status: 'failed', passed: false, not_run: 1 });
    expect(data.failures).toHaveLength(1);
    expect(data.failures[0].index).toBe(3);
    expect(data.failures[0].label).toMatch(/^step 3/);
    const third = data.steps.find((s: { index: number }) => s.index === 3);
    expect(third).toMatchObject({ passed: false, kind: 'expect_webhook' });
    expect(third.error).toMatch(/status/);
    expect(data.timeline[0]).toEqual({ at: '+00:00.000', from: 'merchant', to: 'railyard', what: 'POST /api/v1/charges' });
  });

  it('documents the 422 replay_failed answer in the OpenAPI document', async () => {
    const op = (await sb.http.get('/openapi.json')).body.paths['/api/v1/sandbox/replays'].post;
    expect(op.responses['422'].description).toContain('replay_failed');
    expect(op.description).toContain('422 replay_failed');
  });

  it('answers 404 not_found for a file that is not loaded, or loaded without a script', async () => {
    for (const file of ['scenarios/nope.yaml', 'test/fixtures/replay/pass/no-script.yaml']) {
      const res = await run(file);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', details: { file } });
    }
  });

  it('refuses a body without a file with validation_error', async () => {
    for (const body of [{}, { file: '' }, { file: 7 }, { file: PASSING, seed: 1 }]) {
      const res = await sb.post('/api/v1/sandbox/replays', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
  });

  it('refuses live keys on both routes (403 forbidden), and runs nothing', async () => {
    const live = (await sb.post('/api/v1/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    for (const res of [await sb.get('/api/v1/sandbox/replays', live), await run(PASSING, live)]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
  });

  it('is refused to a finance key (an engineering action)', async () => {
    const finance = (await sb.post('/api/v1/keys', { environment: 'test', scopes: ['read'], role: 'finance' })).body.data.key;
    const res = await run(PASSING, finance);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('role_forbidden');
  });
});

describe('one replay at a time', () => {
  it('answers 429 rate_limited while another replay runs, then runs again once it is done', async () => {
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    const slow: ScenarioReplays = {
      timeoutMs: 1_000,
      list: () => [{ file: 'slow.yaml', name: 'slow', description: null, steps: 1 }],
      find: (file) => (file === 'slow.yaml' ? file : undefined),
      run: async (file): Promise<ReplayRun> => {
        await gate;
        return { file, name: 'slow', status: 'passed', passed: true, seed: 1, steps: [], failures: [], notRun: 0, timeline: [] };
      },
    };
    const other = await startTestSandbox({}, undefined, [], { replays: slow });
    try {
      const first = other.post('/api/v1/sandbox/replays', { file: 'slow.yaml' }).then((r) => r);
      // The first request is in flight once the gate holds it; poll until the second is refused.
      let second = await other.post('/api/v1/sandbox/replays', { file: 'slow.yaml' });
      for (let i = 0; i < 50 && second.status !== 429; i++) second = await other.post('/api/v1/sandbox/replays', { file: 'slow.yaml' });
      expect(second.status).toBe(429);
      expect(second.body.error).toMatchObject({ code: 'rate_limited', details: { running: 'slow.yaml' } });
      release();
      expect((await first).status).toBe(200);
      expect((await other.post('/api/v1/sandbox/replays', { file: 'slow.yaml' })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('a scenario file outside the working directory (issue 20, defect 9c)', () => {
  it('is shown in one form, absolute, by the scenarios and replays routes and the inspector, and runs by that form or any path to it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'railyard-outside-'));
    const outside = join(dir, 'charge-success.yaml');
    copyFileSync(resolve(ROOT, PASSING), outside);
    const loaded = loadScenarios([outside], ROOT);
    const own = await startTestSandbox({}, loaded.rules, [], { replays: new SandboxReplays(() => loaded.files, { cwd: ROOT }) });
    try {
      own.ry.scenarios.replace(loaded.rules, loaded.wallets, ruleSources(loaded, ROOT));
      expect((await own.get('/api/v1/sandbox/scenarios')).body.data.map((f: { file: string }) => f.file)).toEqual([outside]);
      expect((await own.get('/api/v1/sandbox/replays')).body.data.map((f: { file: string }) => f.file)).toEqual([outside]);
      expect(ruleSource(loaded.rules[0]!)?.file).toBe(outside);

      const shown = await own.post('/api/v1/sandbox/replays', { file: outside });
      expect([shown.status, shown.body.data?.file, shown.body.data?.status]).toEqual([200, outside, 'passed']);
      // The relative form other versions showed (../../tmp/…) names the same file.
      const dotted = relative(ROOT, outside);
      expect(dotted.startsWith('..')).toBe(true);
      const byRelative = await own.post('/api/v1/sandbox/replays', { file: dotted });
      expect([byRelative.status, byRelative.body.data?.file]).toEqual([200, outside]);
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
