import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { interpolate, partialMatch } from '../../src/replay/partial-match.ts';
import { formatJson, formatOffset, formatReport, formatResult } from '../../src/replay/replay-report.ts';
import type { ReplayResult } from '../../src/replay/replay-result.ts';
import { replayFile, runScenario } from '../../src/replay/replay-runner.ts';
import { parseScenario } from '../../src/railyard-scenarios.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = 'test/fixtures/replay';
const fixture = (name: string) => resolve(ROOT, FIXTURES, name);
const replay = (name: string, seed?: number) => replayFile(fixture(name), { cwd: ROOT, ...(seed !== undefined ? { seed } : {}) });

const lines = (r: ReplayResult) => r.timeline.map((e) => `${e.at} ${e.from} → ${e.to} ${e.what}`);

function expectPassed(r: ReplayResult): void {
  if (r.status !== 'passed') throw new Error(`expected ${r.file} to pass:\n${formatResult(r)}`);
}

/** A scenario written inline, run in-process. */
function inline(text: string, seed?: number): Promise<ReplayResult> {
  const scenario = parseScenario(text, 'inline.yaml');
  return runScenario({ path: 'inline.yaml', scenario, text }, seed !== undefined ? { seed } : {});
}

describe('railyard replay: running scripts', () => {
  it('runs every step kind: a charge on 0551234987 settles over mtn-momo 5 s later', async () => {
    const r = await replay('pass/charge-success.yaml');
    expectPassed(r);
    expect(r.file).toBe(`${FIXTURES}/pass/charge-success.yaml`);
    expect(r.steps.map((s) => [s.index, s.kind, s.passed])).toEqual([
      [1, 'request', true],
      [2, 'advance', true],
      [3, 'expect_webhook', true],
      [4, 'expect_ledger', true],
      [5, 'expect_provider_calls', true],
    ]);
    const text = lines(r);
    expect(text[0]).toBe('+00:00.000 merchant → railyard POST /api/v1/charges');
    expect(text[1]).toMatch(/^\+00:00\.000 railyard → mtn-momo collect chg_[0-9a-z]{20}: accepted$/);
    expect(text[2]).toMatch(/^\+00:00\.000 railyard → merchant 201 chg_[0-9a-z]{20} pending_provider$/);
    expect(text).toContain('+00:00.000 clock → railyard advance +5s');
    expect(text.some((l) => /^\+00:05\.000 mtn-momo → railyard callback chg_\w+: success -> settled$/.test(l))).toBe(true);
    expect(text.some((l) => /^\+00:05\.000 railyard → merchant webhook charge\.success evt_\w+: 200$/.test(l))).toBe(true);
  });

  it('formats a readable timeline: relative business time, arrows aligned, ✓ where each check ran, the summary line', async () => {
    const r = await replay('pass/failover.yaml');
    expectPassed(r);
    const out = formatReport([r]);
    const timeline = out.split('\n').filter((l) => l.startsWith('+'));
    expect(new Set(timeline.map((l) => l.indexOf('→'))).size).toBe(1);
    const whatColumn = (l: string) => {
      const m = /→ (\S+ +)/.exec(l)!;
      return m.index + 2 + m[1]!.length;
    };
    expect(new Set(timeline.map(whatColumn)).size).toBe(1);
    expect(out).toMatch(/^\+00:00\.000  railyard → mtn-momo   collect chg_\w+: timeout$/m);
    expect(out).toMatch(/^\+00:00\.000  railyard → hubtel     collect chg_\w+: accepted$/m);
    expect(out).toMatch(/^\+00:05\.000  hubtel   → railyard   callback chg_\w+: success -> settled$/m);
    expect(out).toMatch(/^\+00:05\.000  railyard → merchant   webhook charge\.success evt_\w+: 200$/m);
    expect(out).toContain('  ✓ step 1: charge the failover number\n');
    expect(out).toContain('  ✓ step 2: expect_provider_calls mtn-momo=1 hubtel=1\n');
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed');
    expect(out).toContain(`PASS  ${FIXTURES}/pass/failover.yaml`);
  });

  it('fails over: 0551234989 costs one call to mtn-momo and one to hubtel', async () => {
    const r = await replay('pass/failover.yaml');
    expectPassed(r);
    expect(r.timeline.filter((e) => e.from === 'railyard' && e.to !== 'merchant').map((e) => `${e.to} ${e.what.replace(/chg_\w+/, 'chg')}`)).toEqual([
      'mtn-momo collect chg: timeout',
      'hubtel collect chg: accepted',
    ]);
  });

  it('interpolates ${name.path}: create a charge, then GET it by its id; a whole reference keeps its type', async () => {
    const r = await replay('pass/interpolation.yaml');
    expectPassed(r);
    const id = /chg_[0-9a-z]{20}/.exec(r.timeline[1]!.what)![0];
    expect(lines(r)).toContain(`+00:00.000 merchant → railyard GET /api/v1/charges/${id}`);
    expect(lines(r)).toContain(`+00:02.000 railyard → merchant 200 ${id} success`);
    expect(lines(r)).toContain('+00:02.000 merchant → railyard GET /api/v1/transactions?type=charge&page_size=2500');

    const vars = { c: { status: 201, body: { data: { id: 'chg_1', amount: 2500, tags: ['a'] } } } };
    expect(interpolate({ n: '${c.body.data.amount}', s: 'x-${c.body.data.amount}', t: '${c.body.data.tags[0]}', o: ['${c.status}'] }, vars)).toEqual({
      n: 2500,
      s: 'x-2500',
      t: 'a',
      o: [201],
    });
    expect(() => interpolate('${nope.body}', vars)).toThrow(/no saved response named nope \(saved: c\)/);
    expect(() => interpolate('${c.body.data.missing}', vars)).toThrow(/c\.body\.data has no missing/);
  });

  it('an explicit repeated idempotency_key gets the first response, replayed: one charge, one provider call', async () => {
    const r = await replay('pass/idempotency.yaml');
    expectPassed(r);
    const responses = r.timeline.filter((e) => e.from === 'railyard' && e.to === 'merchant').map((e) => e.what);
    const first = /chg_\w+/.exec(responses[0]!)![0];
    expect(responses[0]).toBe(`201 ${first} pending_provider`);
    expect(responses[1]).toBe(`201 ${first} pending_provider (replayed)`);
    expect(responses[2]).not.toContain(first);
    expect(r.timeline.filter((e) => e.to === 'mtn-momo')).toHaveLength(2);
  });

  it('signs signed routes and keys idempotent ones by itself; replay.seed and replay.config apply', async () => {
    const r = await replay('pass/signed-transfer.yaml');
    expectPassed(r);
    expect(r.seed).toBe(42);
    expect(lines(r).filter((l) => l.includes('merchant 201 trf_'))).toHaveLength(2);
  });

  it('a receiver that fails the first two deliveries: retries after 5 s and 300 s show 500, 500, 200', async () => {
    const r = await replay('pass/webhook-retries.yaml');
    expectPassed(r);
    const webhooks = r.timeline.filter((e) => e.what.startsWith('webhook '));
    expect(webhooks.map((e) => `${e.at} ${e.what.replace(/evt_\w+/, 'evt')}`)).toEqual([
      '+00:00.000 webhook charge.pending evt: 500',
      '+00:05.000 webhook charge.pending evt: 500',
      '+05:05.000 webhook charge.pending evt: 200',
    ]);
    expect(new Set(webhooks.map((e) => /evt_\w+/.exec(e.what)![0])).size).toBe(1);
  });

  it('is deterministic: one file and one seed give byte-identical text and JSON; another seed changes the ids', async () => {
    for (const name of ['pass/charge-success.yaml', 'pass/failover.yaml', 'pass/webhook-retries.yaml']) {
      const a = await replay(name);
      const b = await replay(name);
      expect(formatReport([b])).toBe(formatReport([a]));
      expect(formatJson([b])).toBe(formatJson([a]));
      const c = await replay(name, 99);
      expectPassed(c);
      expect(c.seed).toBe(99);
      const ids = (r: ReplayResult) => r.timeline.flatMap((e) => e.what.match(/\b(chg|evt)_\w+/g) ?? []);
      expect(ids(c)).toHaveLength(ids(a).length);
      expect(ids(c)).not.toEqual(ids(a));
      // Same shape: only the ids differ.
      expect(lines(c).map((l) => l.replace(/\b(chg|evt)_\w+/g, 'ID'))).toEqual(lines(a).map((l) => l.replace(/\b(chg|evt)_\w+/g, 'ID')));
    }
    const json = JSON.parse(formatJson([await replay('pass/charge-success.yaml')]));
    expect(json.summary).toEqual({ passed: 1, failed: 0, skipped: 0, total: 1 });
    expect(json.files[0].timeline[0]).toEqual({ at: '+00:00.000', ms: 0, from: 'merchant', to: 'railyard', what: 'POST /api/v1/charges' });
    expect(JSON.stringify(json)).not.toMatch(/127\.0\.0\.1|whsec_|sig_test|sk_test|latency/);
  });

  it('replays api faults (a lost answer, a 503, a rate limit, a seeded coin) byte for byte', async () => {
    const a = await replay('faults/api-faults.yaml');
    expectPassed(a);
    const text = lines(a);
    expect(text.slice(0, 3)).toEqual([
      '+00:00.000 merchant → railyard POST /api/v1/charges',
      expect.stringMatching(/^\+00:00\.000 railyard → mtn-momo collect chg_\w+: accepted$/),
      '+00:00.000 railyard → merchant no answer: the connection was cut',
    ]);
    expect(text).toContain('+00:00.000 railyard → merchant 503 service_unavailable');
    // The coin (probability 0.5) lands as seed 1 draws it, each run.
    expect(text.slice(-8).filter((l) => l.includes('railyard → merchant'))).toEqual([
      '+00:10.000 railyard → merchant 200 2 items',
      '+00:10.000 railyard → merchant 500 internal_error',
      '+00:10.000 railyard → merchant 500 internal_error',
      '+00:10.000 railyard → merchant 500 internal_error',
    ]);
    const b = await replay('faults/api-faults.yaml');
    expect(formatReport([b])).toBe(formatReport([a]));
    expect(formatJson([b])).toBe(formatJson([a]));
  });

  it('a failing expectation stops the script, names the step and shows expected against actual at the path', async () => {
    const r = await replay('fail/wrong-expectation.yaml');
    expect(r.status).toBe('failed');
    expect(r.passed).toBe(false);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toMatchObject({ index: 3, label: 'step 3: expect_webhook charge.success' });
    expect(r.failures[0]!.message).toMatch(/at data\.object\.status: expected "failed", got "success"/);
    expect(r.steps.map((s) => s.passed)).toEqual([true, true, false]);
    expect(r.notRun).toBe(1);
    const out = formatReport([r]);
    expect(out).toContain('  ✗ step 3: expect_webhook charge.success\n      no charge.success webhook matches among 1; the closest (evt_');
    expect(out).toContain('  … 1 later step not run');
    expect(out).toContain(`FAIL  ${FIXTURES}/fail/wrong-expectation.yaml  step 3: expect_webhook charge.success`);
    expect(out.trimEnd().split('\n').at(-1)).toBe('0 passed, 1 failed');
  });

  it('reports status, body, ledger and provider-call differences readably', async () => {
    const r = await inline(`
version: 1
name: differences
rules:
  - { name: all accepted, default: true, collect: { any: { respond: accept, callback: { after_seconds: 1, status: success } } } }
script:
  - request: { method: POST, path: /api/v1/charges, body: { amount: 1000, currency: GHS, channel: momo, msisdn: "0241234567" } }
    expect: { status: 200, body: { data: { status: success, fees: 10 } } }
`);
    expect(r.status).toBe('failed');
    expect(r.failures[0]!.label).toBe('step 1: POST /api/v1/charges expect 200');
    expect(r.failures[0]!.message).toMatch(/^at status: expected 200, got 201 \(chg_\w+ pending_provider\)\nat body\.data\.status: expected "success", got "pending_provider"$/);

    const ledger = await inline(`
version: 1
name: ledger
script:
  - request: { method: POST, path: /api/v1/sandbox/wallet/fund, body: { amount: 500 } }
  - name: wrong balances
    expect_ledger: { wallet: { available: 400 }, accounts: { "external:sandbox:funding": -400 } }
`);
    expect(ledger.failures[0]!.label).toBe('step 2: wrong balances');
    expect(ledger.failures[0]!.message).toBe('at wallet.available: expected 400, got 500\nat account external:sandbox:funding: expected -400, got -500');

    const calls = await inline(`
version: 1
name: calls
script:
  - expect_provider_calls: { mtn-momo: 1, mtn_momo: 0 }
`);
    expect(calls.failures[0]!.message).toBe('at mtn-momo: expected 1 call, got 0\nall calls so far: none');

    const refs = await inline(`
version: 1
name: refs
script:
  - request: { method: GET, path: "/api/v1/charges/\${charge.body.data.id}" }
`);
    expect(refs.failures[0]!.message).toMatch(/no saved response named charge/);

    expect(partialMatch({ a: [1, { b: 2 }] }, { a: [1, { b: 3, c: 4 }], d: 5 })).toMatchObject({ path: 'a[1].b', message: 'expected 2, got 3' });
    expect(partialMatch({ a: [1] }, { a: [1, 2] })).toMatchObject({ path: 'a', message: 'expected 1 item, got 2: [1,2]' });
    expect(partialMatch({ a: null }, {})).toMatchObject({ path: 'a', message: 'expected null, got (missing)' });
    expect(partialMatch({ a: { b: 1 } }, { a: { b: 1, c: 2 } })).toBeNull();
  });

  it("a script sees only its own file's rules: 0551234989 without the failover rule just succeeds at mtn-momo", async () => {
    const r = await inline(`
version: 1
name: own-rules
script:
  - request: { method: POST, path: /api/v1/charges, body: { amount: 1000, currency: GHS, channel: momo, msisdn: "0551234989" } }
    expect: { status: 201, body: { data: { provider: mtn-momo } } }
  - expect_provider_calls: { mtn-momo: 1, hubtel: 0 }
`);
    expectPassed(r);
  });

  it('lists a file without a script as skipped, which does not fail', async () => {
    const r = await replay('pass/no-script.yaml');
    expect(r).toMatchObject({ status: 'skipped', passed: true, name: 'rules-only' });
    expect(formatReport([r])).toContain('skipped (no script)');
    expect(formatReport([r]).trimEnd().split('\n').at(-1)).toBe('0 passed, 0 failed');
  });

  it.each([
    ['bad-indent.yaml', /broken\/bad-indent\.yaml:6:1: All mapping items must start at the same column/],
    ['unknown-field.yaml', /broken\/unknown-field\.yaml:8:7: script\[0\]\.request\.header: unknown field "header"/],
    ['wrong-type.yaml', /broken\/wrong-type\.yaml:4:9: replay\.seed: .*expected number, received string/],
    ['bad-regex.yaml', /broken\/bad-regex\.yaml:6:24: rules\[0\]\.match\.msisdn\.regex: regex does not compile/],
  ])('reports a broken file (%s) with file:line:column', async (name, problem) => {
    const r = await replay(`broken/${name}`);
    expect(r.status).toBe('invalid');
    expect(r.passed).toBe(false);
    expect(r.failures[0]!.message).toMatch(problem);
    expect(r.failures[0]!.message.startsWith(`${FIXTURES}/broken/${name}:`)).toBe(true);
    const out = formatReport([r]);
    expect(out).toMatch(problem);
    expect(out.trimEnd().split('\n').at(-1)).toBe('0 passed, 1 failed');
  });

  it('reports bad replay.config overrides with file:line:column', async () => {
    const r = await inline(`
version: 1
name: bad-config
replay:
  config:
    rails: { timeout_ms: fast }
script:
  - advance: 1
`);
    expect(r.status).toBe('failed');
    expect(r.failures[0]!.message).toMatch(/^inline\.yaml:6:26: replay\.config\.rails\.timeout_ms: .*expected number/);
  });

  it('formats business time relative to the start', () => {
    expect(formatOffset(0)).toBe('+00:00.000');
    expect(formatOffset(150)).toBe('+00:00.150');
    expect(formatOffset(305_000)).toBe('+05:05.000');
    expect(formatOffset(3_600_000 + 61_001)).toBe('+1:01:01.001');
  });
});
