import { describe, expect, it } from 'vitest';
import { decide } from '../../src/scenarios/rule-engine.ts';
import { YamlSourceError } from '../../src/kernel/yaml-source.ts';
import { SANDBOX_SCENARIOS } from '../support/test-sandbox.ts';
import { loadScenarios, parseScenario, parseRule } from '../../src/railyard-scenarios.ts';

function problems(text: string): string[] {
  try {
    parseScenario(text, 'qa.yaml');
  } catch (err) {
    if (err instanceof YamlSourceError) return err.problems;
    throw err;
  }
  throw new Error('expected the scenario to be rejected');
}

describe('scenario files', () => {
  it('loads the shipped sandbox scenarios', () => {
    const loaded = loadScenarios([SANDBOX_SCENARIOS]);
    expect(loaded.files[0]!.scenario.name).toBe('sandbox');
    expect(loaded.rules.map((r) => r.match)).toContainEqual({ msisdn: { equals: '0551234989' } });
  });

  it('reports a bad indent with file:line:column', () => {
    const text = ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: { msisdn: "0551234987" }', '   collect: {}'].join('\n');
    expect(problems(text)[0]).toMatch(/^qa\.yaml:6:\d+: /);
  });

  it('reports an unknown field with file:line:column, naming it', () => {
    const text = ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: { msisdn: "0551234987" }', '    colect:', '      any: { respond: accept }'].join('\n');
    expect(problems(text)).toEqual(['qa.yaml:6:5: rules[0].colect: unknown field "colect"']);
  });

  it('reports a wrong type with file:line:column and the path', () => {
    const text = ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: { msisdn: "0551234987" }', '    collect:', '      any: { respond: accept, latency_ms: soon }'].join('\n');
    const [problem] = problems(text);
    expect(problem).toMatch(/^qa\.yaml:7:43: rules\[0\]\.collect\.any\.latency_ms: /);
  });

  it('reports a bad enum value at its position', () => {
    const text = ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: { msisdn: "0551234987" }', '    collect:', '      any: { respond: maybe }'].join('\n');
    expect(problems(text)[0]).toMatch(/^qa\.yaml:7:23: rules\[0\]\.collect\.any\.respond: /);
  });

  describe('identifiers are strings (issue 20, defect 1)', () => {
    const rule = (match: string) => ['version: 1', 'name: x', 'rules:', '  - name: a', `    match: ${match}`, '    collect: { any: { respond: reject } }'].join('\n');

    it('refuses an unquoted msisdn, naming file:line and the fix with the text as written', () => {
      expect(problems(rule('{ msisdn: 0249990004 }'))).toEqual([
        'qa.yaml:5:22: rules[0].match.msisdn: 0249990004 is a number, but a msisdn is an identifier and must be a string (YAML reads 0249990004 as 249990004): quote it: msisdn: "0249990004"',
      ]);
    });

    it('refuses unquoted account numbers, bank codes and cards, under equals, one_of and nested blocks', () => {
      const found = problems(rule('{ account_number: { equals: 1000000001 }, any: [{ bank_code: { one_of: ["040100", 130100] } }], not: { card: 4084084084084081 } }'));
      expect(found).toHaveLength(3);
      expect(found[0]).toMatch(/^qa\.yaml:5:\d+: rules\[0\]\.match\.account_number\.equals: 1000000001 is a number.*quote it: equals: "1000000001"$/);
      expect(found[1]).toMatch(/rules\[0\]\.match\.any\[0\]\.bank_code\.one_of\[1\]: 130100 is a number.*quote it: "130100"$/);
      expect(found[2]).toMatch(/rules\[0\]\.match\.not\.card: 4084084084084081 is a number/);
    });

    it('refuses an unquoted wallet number', () => {
      const text = ['version: 1', 'name: x', 'wallets:', '  - { msisdn: 0241110000, balance: 5000 }'].join('\n');
      expect(problems(text)).toEqual([
        'qa.yaml:4:15: wallets[0].msisdn: 0241110000 is a number, but a msisdn is an identifier and must be a string (YAML reads 0241110000 as 241110000): quote it: msisdn: "0241110000"',
      ]);
    });

    it('takes quoted identifiers, and numbers where a number is meant', () => {
      const scenario = parseScenario(rule(`{ msisdn: "0249990004", bank_code: '040100', amount: { range: { max: 100000 } } }`), 'qa.yaml');
      expect(scenario.rules[0]!.match).toEqual({ msisdn: { equals: '0249990004' }, bank_code: { equals: '040100' }, amount: { range: { max: 100000 } } });
    });

    it('refuses a number for an identifier in a rule built in code too', () => {
      expect(() => parseRule({ name: 'a', match: { msisdn: 249990004 }, collect: { any: { respond: 'accept' } } } as never)).toThrow(/identifier is a string/);
    });
  });

  it('refuses a rule that matches everything by accident', () => {
    const text = ['version: 1', 'name: x', 'rules:', '  - name: a', '    match: {}', '    collect: { any: {} }'].join('\n');
    expect(problems(text)[0]).toMatch(/^qa\.yaml:5:12: rules\[0\]\.match: match needs at least one field/);
  });
});

describe('rule engine', () => {
  const { rules } = loadScenarios([SANDBOX_SCENARIOS]);

  it('matches a number in any of its forms, provider by provider, first match winning', () => {
    const q = { operation: 'collect' as const, channel: 'momo' as const, msisdn: '233551234989' };
    expect(decide(rules, { ...q, provider: 'mtn-momo' })?.behaviour.respond).toBe('timeout');
    expect(decide(rules, { ...q, provider: 'hubtel' })?.behaviour).toMatchObject({ respond: 'accept', callback: { status: 'success', after_seconds: 5 } });
  });

  it('answers undefined when no rule speaks for the call, so the mock uses its upstream default', () => {
    expect(decide(rules, { provider: 'mtn-momo', operation: 'collect', channel: 'momo', msisdn: '233241234567' })).toBeUndefined();
    expect(decide(rules, { provider: 'bank-rail', operation: 'collect', channel: 'bank', account_number: '1000000001', bank_code: '040100' })).toBeUndefined();
  });

  it('needs every match field to agree', () => {
    expect(decide(rules, { provider: 'bank-rail', operation: 'resolve', channel: 'bank', account_number: '1000000001', bank_code: '130100' })).toBeUndefined();
  });
});

describe('the scenario guide (docs/scenarios.md)', () => {
  it('shows a scenario file that loads', async () => {
    const { readFileSync } = await import('node:fs');
    const guide = readFileSync(new URL('../../docs/scenarios.md', import.meta.url), 'utf8');
    const from = guide.indexOf('```yaml', guide.indexOf('## Scenario files'));
    const text = guide.slice(from + '```yaml'.length, guide.indexOf('```', from + 7));
    const scenario = parseScenario(text, 'docs/scenarios.md');
    expect(scenario.rules.map((r) => r.name)).toHaveLength(4);
    expect(scenario.wallets).toEqual([{ msisdn: '0241110000', balance: 5000 }]);
  });
});
