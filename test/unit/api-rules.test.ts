import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/kernel/clock.ts';
import { parseYamlSource, YamlSourceError } from '../../src/kernel/yaml-source.ts';
import type { ApiRequestFacts } from '../../src/kernel/api-fault.ts';
import { ApiFaultEngine } from '../../src/scenarios/api-fault-engine.ts';
import { lintScenario, parseScenario } from '../../src/railyard-scenarios.ts';
import { formatLintProblem } from '../../src/scenarios/scenario-lint.ts';

// A scenario file's `api:` section: faults on railyard's own merchant API. The language (match
// with the provider rules' predicates, the actions, when a rule fires) and its lint.

const file = (...lines: string[]) => ['version: 1', 'name: qa', 'api:', ...lines].join('\n');

function problems(text: string): string[] {
  try {
    parseScenario(text, 'qa.yaml');
  } catch (err) {
    if (err instanceof YamlSourceError) return err.problems;
    throw err;
  }
  throw new Error('expected the scenario to be rejected');
}

function lint(...lines: string[]): string[] {
  const text = file(...lines);
  const source = parseYamlSource(text, 'qa.yaml');
  return lintScenario(parseScenario(text, 'qa.yaml'), 'qa.yaml', (path) => source.locate(path)).map(formatLintProblem);
}

function facts(over: Partial<Omit<ApiRequestFacts, 'header'>> & { headers?: Record<string, string> } = {}): ApiRequestFacts {
  const headers = Object.fromEntries(Object.entries(over.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: over.method ?? 'POST',
    route: over.route ?? '/api/v1/transfers',
    path: over.path ?? over.route ?? '/api/v1/transfers',
    keyId: over.keyId ?? 'key_sandbox_test',
    header: (name) => headers[name.toLowerCase()],
    body: over.body ?? { amount: 2000, msisdn: '0551234987' },
  };
}

function engine(text: string, seed = 1, clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'))) {
  return { faults: new ApiFaultEngine({ clock, seed }, parseScenario(text, 'qa.yaml').api), clock };
}

describe('the api: section loads', () => {
  it('normalises the shorthands: a bare status, a bare latency', () => {
    const { api } = parseScenario(file('  - { name: a, default: true, respond: 500, latency_ms: 20 }', '  - { name: b, default: true, rate_limit: { requests: 3 } }'), 'qa.yaml');
    expect(api[0]).toMatchObject({ respond: { status: 500, before_commit: false }, latency_ms: { before_commit: 20 } });
    expect(api[1]!.rate_limit).toEqual({ requests: 3, per_seconds: 1 });
  });

  it('defaults to no api rules', () => {
    expect(parseScenario('version: 1\nname: x\n', 'x.yaml').api).toEqual([]);
  });

  it('refuses a rule with no action, two actions, a rate limit with another action, or a 404', () => {
    expect(problems(file('  - { name: a, default: true }'))[0]).toMatch(/^qa\.yaml:4:\d+: .*give an action: rate_limit, respond, drop or latency_ms/);
    expect(problems(file('  - { name: a, default: true, respond: 503, drop: after_commit }'))[0]).toMatch(/give respond or drop, not both/);
    expect(problems(file('  - { name: a, default: true, rate_limit: { requests: 1 }, latency_ms: 5 }'))[0]).toMatch(/rate_limit stands alone/);
    expect(problems(file('  - { name: a, default: true, respond: 404 }'))[0]).toMatch(/^qa\.yaml:4:\d+: api\[0\]\.respond\.status/);
    expect(problems(file('  - { name: a, match: { verb: POST }, drop: after_commit }'))[0]).toMatch(/verb/);
  });
});

describe('matching: the provider rules predicates over a merchant request', () => {
  it('by method, route, path, key, header (any case) and body field (dotted, numbers as msisdn)', () => {
    const { faults } = engine(
      file(
        '  - name: one',
        '    match:',
        '      method: POST',
        '      route: { prefix: /api/v1/trans }',
        '      key: key_sandbox_test',
        '      header: { x-test-run: { regex: "^qa-" } }',
        '      body: { amount: { range: { min: 1000 } }, customer.msisdn: "233551234987" }',
        '    respond: 503',
      ),
    );
    const body = { amount: 2000, customer: { msisdn: '0551234987' } };
    expect(faults.decide(facts({ body, headers: { 'X-Test-Run': 'qa-7' } }))?.fault?.fired.rule).toBe('one');
    expect(faults.decide(facts({ body, headers: { 'X-Test-Run': 'prod' } }))).toBeUndefined();
    expect(faults.decide(facts({ body: { ...body, amount: 10 }, headers: { 'X-Test-Run': 'qa-7' } }))).toBeUndefined();
    expect(faults.decide(facts({ body, keyId: 'key_other', headers: { 'X-Test-Run': 'qa-7' } }))).toBeUndefined();
  });

  it('all, any and not combine blocks', () => {
    const { faults } = engine(file('  - { name: not reads, match: { not: { method: GET }, any: [{ route: /api/v1/charges }, { route: /api/v1/transfers }] }, respond: 503 }'));
    expect(faults.decide(facts())?.fault).toBeDefined();
    expect(faults.decide(facts({ method: 'GET' }))).toBeUndefined();
    expect(faults.decide(facts({ route: '/api/v1/trades' }))).toBeUndefined();
  });
});

describe('when a rule fires', () => {
  it('times, then the next rule speaks', () => {
    const { faults } = engine(file('  - { name: twice, default: true, respond: 503, times: 2 }', '  - { name: then slow, default: true, latency_ms: 5 }'));
    expect([1, 2, 3, 4].map(() => faults.decide(facts())?.fault?.fired.rule)).toEqual(['twice', 'twice', 'then slow', 'then slow']);
  });

  it('every Nth request the rule matched', () => {
    const { faults } = engine(file('  - { name: third, default: true, drop: after_commit, every: 3 }'));
    expect([1, 2, 3, 4, 5, 6].map(() => faults.decide(facts())?.fault?.drop ?? null)).toEqual([null, null, 'after_commit', null, null, 'after_commit']);
  });

  it('probability draws from the seed: the same seed gives the same faults, another seed others', () => {
    const text = file('  - { name: coin, default: true, respond: 503, probability: 0.3 }');
    const run = (seed: number) => {
      const { faults } = engine(text, seed);
      return Array.from({ length: 40 }, () => (faults.decide(facts()) ? 1 : 0)).join('');
    };
    expect(run(5)).toBe(run(5));
    expect(run(5)).not.toBe(run(6));
    const fired = [...run(5)].filter((c) => c === '1').length;
    expect(fired).toBeGreaterThan(2);
    expect(fired).toBeLessThan(25);
  });

  it('named state: requires and sets, as provider rules', () => {
    const { faults } = engine(
      file(
        '  - { name: first, default: true, state: { scenario: s, requires: Started, sets: one }, drop: before_commit }',
        '  - { name: second, default: true, state: { scenario: s, requires: one, sets: two }, respond: 500 }',
      ),
    );
    expect([1, 2, 3].map(() => faults.decide(facts())?.fault?.fired.rule ?? null)).toEqual(['first', 'second', null]);
    expect(faults.stateOf('s')).toBe('two');
    faults.restart();
    expect(faults.stateOf('s')).toBe('Started');
  });

  it('a rate limit counts per key in fixed windows of the business clock, and lets later rules speak while under it', () => {
    const { faults, clock } = engine(file('  - { name: limit, default: true, rate_limit: { requests: 2, per_seconds: 10 } }', '  - { name: slow, default: true, latency_ms: 1 }'));
    clock.set(clock.now() + 3_000);
    const a = faults.decide(facts());
    expect(a).toMatchObject({ headers: { 'RateLimit-Limit': '2', 'RateLimit-Remaining': '1', 'RateLimit-Reset': '7' }, fault: { fired: { rule: 'slow' } } });
    faults.decide(facts());
    const limited = faults.decide(facts());
    expect(limited?.fault).toMatchObject({ fired: { rule: 'limit', action: 'rate_limit' }, rateLimited: { retryAfterSeconds: 7, limit: 2, windowSeconds: 10 } });
    expect(faults.decide(facts({ keyId: 'key_other' }))?.fault?.fired.rule).toBe('slow');
    clock.set(clock.now() + 7_000);
    expect(faults.decide(facts())?.headers['RateLimit-Remaining']).toBe('1');
  });

  it('faults switched on by hand come first, and go again by id or all at once', () => {
    const { faults } = engine(file('  - { name: file rule, default: true, latency_ms: 1 }'));
    const added = faults.add(parseScenario(file('  - { name: by hand, default: true, respond: 503 }'), 'x').api[0]!);
    expect(faults.decide(facts())?.fault?.fired).toMatchObject({ rule: 'by hand', file: 'sandbox control' });
    expect(faults.list().map((r) => [r.id, r.rule.name, r.matched, r.fired])).toEqual([
      [added.id, 'by hand', 1, 1],
      [null, 'file rule', 0, 0],
    ]);
    expect(faults.remove(added.id)).toBe(1);
    expect(faults.decide(facts())?.fault?.fired.rule).toBe('file rule');
    faults.add(parseScenario(file('  - { name: again, default: true, respond: 503 }'), 'x').api[0]!);
    expect(faults.remove()).toBe(1);
  });
});

describe('lint', () => {
  it('a route with its method, a lower-case method, a sandbox route and a secret key never fire', () => {
    expect(
      lint(
        '  - name: wrong',
        '    match: { route: "POST /api/v1/transfers", method: post }',
        '    drop: after_commit',
        '  - name: sandbox',
        '    match: { route: /api/v1/sandbox/faults, key: sk_test_abc }',
        '    respond: 503',
      ),
    ).toEqual([
      'qa.yaml:5:21: error: api rule "wrong": route POST /api/v1/transfers names a method: write method: POST and route: /api/v1/transfers, so the rule never fires [unmatchable]',
      'qa.yaml:5:55: error: api rule "wrong": method post is compared in upper case: write POST, so the rule never fires [unmatchable]',
      'qa.yaml:8:21: error: api rule "sandbox": route /api/v1/sandbox/faults is a sandbox control, which faults never touch (so the sandbox can always switch them off), so the rule never fires [unmatchable]',
      'qa.yaml:8:50: error: api rule "sandbox": key names a key by its id (key_..., as GET /api/v1/keys lists it), never by the secret key itself, so the rule never fires [unmatchable]',
    ]);
  });

  it('fields that change nothing are warnings', () => {
    const found = lint(
      '  - { name: a, default: true, rate_limit: { requests: 1 }, times: 2 }',
      '  - { name: b, default: true, drop: before_commit, latency_ms: { after_commit: 5 } }',
      '  - { name: c, default: true, respond: 503, probability: 0 }',
    );
    expect(found.map((line) => line.replace(/^qa\.yaml:\d+:\d+: /, ''))).toEqual([
      'warning: api rule "a": times does nothing on a rate_limit: the window decides [no-effect]',
      'warning: api rule "b": after_commit latency on a rule that answers before any work: nothing commits [no-effect]',
      'warning: api rule "c": probability 0 never fires [no-effect]',
    ]);
  });
});
