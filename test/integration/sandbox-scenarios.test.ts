// GET /api/v1/sandbox/scenarios: the scenario files loaded, their rules, and how many provider
// calls each rule answered, moving as charges reach the mocks.
import { resolve } from 'node:path';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ruleSources } from '../../src/scenarios/scenario-loader.ts';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

let sb: TestSandbox;

beforeAll(async () => {
  sb = await startTestSandbox();
  // As `railyard serve` loads (and reloads) them: the rules with the file each came from.
  const loaded = loadScenarios([SANDBOX_SCENARIOS]);
  sb.ry.scenarios.replace(loaded.rules, loaded.wallets, ruleSources(loaded));
});
afterAll(async () => {
  await sb?.close();
});

type RuleView = { index: number; name: string; provider: string; operations: string[]; match: Record<string, unknown> | null; default: boolean; matched_count: number };
const scenarios = async (key = sb.key) => (await sb.get('/api/v1/sandbox/scenarios', key)).body.data as { file: string; rules: RuleView[] }[];
const rule = async (name: RegExp) => (await scenarios()).flatMap((f) => f.rules).find((r) => name.test(r.name))!;

describe('GET /api/v1/sandbox/scenarios', () => {
  it('lists each loaded file with its rules in order, what they match, and counts from zero', async () => {
    const files = await scenarios();
    expect(files.map((f) => f.file)).toEqual(['scenarios/sandbox.yaml']);
    const rules = files[0]!.rules;
    expect(rules.map((r) => r.index)).toEqual(rules.map((_, i) => i));
    expect(rules[0]).toMatchObject({ index: 0, name: 'momo number 0551234987 succeeds', match: { msisdn: { equals: '0551234987' } }, default: false, matched_count: 0 });
    expect(rules[0]!.provider).toMatch(/any|mtn-momo/);
    expect(rules.every((r) => r.matched_count === 0)).toBe(true);
  });

  it("counts a rule's matches as charges reach the mocks, and leaves the other rules alone", async () => {
    const charge = (msisdn: string) => sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn });
    expect((await charge('0551234987')).status).toBe(201);
    expect((await rule(/0551234987 succeeds/)).matched_count).toBe(1);
    expect((await charge('0551234987')).status).toBe(201);
    expect((await rule(/0551234987 succeeds/)).matched_count).toBe(2);
    expect((await rule(/0551234988/)).matched_count).toBe(0);

    await charge('0551234988');
    expect((await rule(/0551234988/)).matched_count).toBe(1);
  });

  it('counts each provider call: a failover number matches at the primary and again at the fallback', async () => {
    const before = (await rule(/0551234989/)).matched_count;
    await sb.charge({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' });
    expect((await rule(/0551234989/)).matched_count).toBe(before + 2);
  });

  it('is for test keys only', async () => {
    const live = (await sb.post('/api/v1/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    const res = await sb.get('/api/v1/sandbox/scenarios', live);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('groups rules passed in code, not from a file, as inline rules', async () => {
    const other = await startTestSandbox();
    try {
      const files = (await other.get('/api/v1/sandbox/scenarios')).body.data;
      expect(files).toHaveLength(1);
      expect(files[0].file).toBe('(inline rules)');
      expect(files[0].rules.length).toBe(other.ry.scenarios.size);
    } finally {
      await other.close();
    }
  });
});

describe('lint warnings at load time (issue 20, defect 6)', () => {
  const ROOT = resolve(import.meta.dirname, '../..');
  const files = ['unmatchable.yaml', 'warnings.yaml'].map((f) => resolve(ROOT, 'test/fixtures/lint', f));

  it('lists each file with the warnings lint found, per rule and line, documented in the OpenAPI', async () => {
    const loaded = loadScenarios(files, ROOT);
    const other = await startTestSandbox({}, loaded.rules);
    try {
      other.ry.scenarios.replace(loaded.rules, loaded.wallets, ruleSources(loaded, ROOT));
      const listed = (await other.get('/api/v1/sandbox/scenarios')).body.data;
      expect(listed.map((f: { file: string; warnings: unknown[] }) => [f.file, f.warnings.length])).toEqual([
        ['test/fixtures/lint/unmatchable.yaml', 1],
        ['test/fixtures/lint/warnings.yaml', 1],
      ]);
      expect(listed[0].warnings[0]).toEqual({
        line: 6,
        column: 22,
        severity: 'error',
        code: 'unmatchable',
        message: expect.stringMatching(/^rule "the customer who always fails": msisdn 024999000 has 8 digits/),
        rule_index: 0,
      });
      expect(listed[1].warnings[0]).toMatchObject({ line: 8, severity: 'warning', code: 'shadowed', rule_index: 1 });

      const openapi = (await other.http.get('/openapi.json')).body;
      const schema = JSON.stringify(openapi.paths['/api/v1/sandbox/scenarios'].get.responses['200']);
      expect(schema).toMatch(/"warnings"/);
      expect(schema).toMatch(/railyard scenarios lint/);

      // The dashboard's Sandbox page shows them above each file's rules.
      const agent = supertest.agent(other.baseUrl);
      const csrf = /name="csrf" value="([^"]+)"/.exec((await agent.get('/dashboard/sign-in')).text)?.[1] ?? '';
      expect((await agent.post('/dashboard/sign-in').type('form').send({ csrf, api_key: other.key, signing_secret: '' })).status).toBe(303);
      const page = (await agent.get('/dashboard/sandbox')).text;
      expect(page).toMatch(/Never matches<\/strong> line 6: rule &quot;the customer who always fails&quot;: msisdn 024999000/);
      expect(page).toMatch(/Warning<\/strong> line 8: rule &quot;0551234988 fails&quot;: never answers/);
    } finally {
      await other.close();
    }
  });
});
