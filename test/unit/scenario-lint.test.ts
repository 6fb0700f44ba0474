import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYamlSource } from '../../src/kernel/yaml-source.ts';
import { runLint } from '../../src/cli/scenarios-command.ts';
import { formatLintProblem, type LintProblem } from '../../src/scenarios/scenario-lint.ts';
import { lintScenario, parseScenario } from '../../src/railyard-scenarios.ts';

// `railyard scenarios lint` (issue 20, defect 6): a rule that can never match, a rule an earlier
// one always answers first, a field that does nothing, each named at file:line.

function lint(...lines: string[]): LintProblem[] {
  const text = ['version: 1', 'name: qa', 'rules:', ...lines].join('\n');
  const source = parseYamlSource(text, 'qa.yaml');
  return lintScenario(parseScenario(text, 'qa.yaml'), 'qa.yaml', (path) => source.locate(path));
}

const shown = (problems: LintProblem[]) => problems.map(formatLintProblem);

describe('unmatchable predicates', () => {
  it('a 9-digit number is an error at its line: railyard refuses it before any provider sees it', () => {
    expect(shown(lint('  - name: nine digits', '    match: { msisdn: "024999000" }', '    collect: { any: { respond: reject } }'))).toEqual([
      'qa.yaml:5:22: error: rule "nine digits": msisdn 024999000 has 8 digits after its 0, where a Ghana mobile number has 9; railyard refuses such a number before any provider sees it, so the rule never matches [unmatchable]',
    ]);
  });

  it('a number with no Ghana mobile prefix, and a prefix no Ghana number has, are errors', () => {
    const problems = lint('  - name: odd', '    match: { msisdn: { one_of: ["0551234987", "0211234567"] }, all: [{ msisdn: { prefix: "021" } }] }', '    collect: { any: { respond: reject } }');
    expect(problems.map((p) => [p.line, p.severity, p.code])).toEqual([
      [5, 'error', 'unmatchable'],
      [5, 'error', 'unmatchable'],
    ]);
    expect(problems[0]!.message).toMatch(/msisdn 0211234567 has no Ghana mobile prefix \(021\)/);
    expect(problems[1]!.message).toMatch(/no Ghana mobile number starts with 021/);
  });

  it('a prefix written in the 233 form never holds: prefix reads 0XXXXXXXXX', () => {
    const [problem] = lint('  - name: intl', '    match: { msisdn: { prefix: "23324" } }', '    collect: { any: { respond: reject } }');
    expect(problem).toMatchObject({ severity: 'error', code: 'unmatchable' });
    expect(problem!.message).toMatch(/write prefix: "024"/);
  });

  it('an unknown bank code is an error; a GhIPSS one is fine', () => {
    expect(lint('  - name: gcb', '    match: { bank_code: "040100" }', '    payout: { any: { respond: reject } }')).toEqual([]);
    const [problem] = lint('  - name: nowhere', '    match: { bank_code: "999100", account_number: "1000000001" }', '    payout: { any: { respond: reject } }');
    expect(problem).toMatchObject({ line: 5, severity: 'error', code: 'unmatchable', rule: 0 });
    expect(problem!.message).toMatch(/bank_code 999100 is no GhIPSS institution code/);
  });

  it('a network, channel or provider that does not exist is an error', () => {
    const problems = lint('  - name: typos', '    match: { network: VODAFONE, channel: mobile, provider: mtn }', '    collect: { any: { respond: reject } }');
    expect(problems.map((p) => [p.code, p.message.replace(/^rule "typos": /, '').split(' is ')[0]])).toEqual([
      ['unmatchable', 'network VODAFONE'],
      ['unmatchable', 'channel mobile'],
      ['unmatchable', 'provider mtn'],
    ]);
  });

  it('an MTN number with network TELECEL is a warning: only a ported number named TELECEL matches it', () => {
    const [problem] = lint('  - name: ported', '    match: { msisdn: "0241110001", network: TELECEL }', '    collect: { any: { respond: accept } }');
    expect(problem).toMatchObject({ line: 5, severity: 'warning', code: 'ported-network' });
    expect(problem!.message).toMatch(/matches only a call that names network TELECEL for a ported number, and never at mtn-momo/);
  });

  it('network TELECEL on a rule that speaks only for mtn-momo is an error: mtn-momo always sees MTN', () => {
    const problems = lint('  - name: never', '    match: { msisdn: "0241110001", network: TELECEL }', '    collect: { mtn-momo: { respond: timeout } }');
    expect(problems.map((p) => [p.severity, p.code])).toEqual([
      ['warning', 'ported-network'],
      ['error', 'unmatchable'],
    ]);
  });

  it('a bad value inside any or not is only a warning: the branch is dead, the rule still matches', () => {
    const problems = lint('  - name: branches', '    match: { any: [{ msisdn: "0551234987" }, { msisdn: "024999000" }], not: { bank_code: "1" } }', '    collect: { any: { respond: reject } }');
    expect(problems.map((p) => [p.severity, p.code])).toEqual([
      ['warning', 'no-effect'],
      ['warning', 'no-effect'],
    ]);
    expect(problems[1]!.message).toMatch(/so this not block excludes nothing/);
  });
});

describe('shadowed rules', () => {
  it('a rule after a default rule never answers', () => {
    const problems = lint(
      '  - name: everything',
      '    default: true',
      '    collect: { any: { respond: accept } }',
      '  - name: too late',
      '    match: { msisdn: "0551234987" }',
      '    collect: { hubtel: { respond: reject } }',
    );
    expect(shown(problems)).toEqual(['qa.yaml:7:5: warning: rule "too late": never answers: rule "everything" (line 4) matches every call it matches, and comes first [shadowed]']);
  });

  it('an earlier rule with the same match (any form of the number) answers first, operation by operation', () => {
    const problems = lint(
      '  - name: first',
      '    match: { msisdn: "0551234987" }',
      '    collect: { any: { respond: accept } }',
      '  - name: second',
      '    match: { msisdn: "+233551234987", amount: { range: { max: 100 } } }',
      '    collect: { mtn-momo: { respond: reject } }',
      '    resolve: { any: { name: Ama } }',
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 9, code: 'shadowed', rule: 1 });
    expect(problems[0]!.message).toMatch(/collect mtn-momo never answers: rule "first" \(line 4\)/);
  });

  it('an earlier rule that waits for a state, or speaks for other providers, shadows nothing', () => {
    expect(
      lint(
        '  - name: in a state',
        '    match: { msisdn: "0551234987" }',
        '    state: { scenario: outage, requires: down }',
        '    collect: { any: { respond: server_error } }',
        '  - name: mtn only',
        '    match: { msisdn: "0551234987" }',
        '    collect: { mtn-momo: { respond: timeout } }',
        '  - name: the rest',
        '    match: { msisdn: "0551234987" }',
        '    collect: { hubtel: { respond: accept } }',
      ),
    ).toEqual([]);
  });
});

describe('fields that do nothing', () => {
  it('names each one at its line', () => {
    const problems = lint(
      '  - name: noise',
      '    match: { msisdn: "0551234987" }',
      '    state: { scenario: lonely }',
      '    collect:',
      '      mtn-momo: { respond: reject, callback: { status: success } }',
      '      hubtel: { respond: accept, http_status: 503, name: Ama, callback: { status: success, reason: LATE, duplicate_after_seconds: 2 } }',
      '    resolve: { any: { callback: { status: success } } }',
    );
    expect(problems.map((p) => [p.line, p.code, p.message.replace(/^rule "noise": /, '').split(/[:,(]/)[0]])).toEqual([
      [6, 'no-effect', 'state without requires or sets does nothing'],
      [8, 'no-effect', 'respond'],
      [9, 'no-effect', 'http_status sets the status of a reject or server_error only'],
      [9, 'no-effect', 'name does nothing in collect'],
      [9, 'no-effect', 'reason explains a failed callback only; this one succeeds'],
      [9, 'no-effect', 'duplicate_after_seconds does nothing without duplicate'],
      [10, 'no-effect', 'a name enquiry is answered at once'],
    ]);
  });
});

describe('wallets', () => {
  it('a wallet no charge can reach does nothing', () => {
    const text = ['version: 1', 'name: qa', 'wallets:', '  - { msisdn: "0241110000", balance: 5000 }', '  - { msisdn: "024111000", balance: 5000 }'].join('\n');
    const source = parseYamlSource(text, 'qa.yaml');
    expect(shown(lintScenario(parseScenario(text, 'qa.yaml'), 'qa.yaml', (path) => source.locate(path)))).toEqual([
      'qa.yaml:5:15: warning: wallet 024111000 is no Ghana mobile number: no charge or payout can reach it [no-effect]',
    ]);
  });
});

describe('railyard scenarios lint', () => {
  const FIXTURES = resolve(import.meta.dirname, '../fixtures/lint');
  const run = (paths: string[], options: { strict?: boolean; reporter?: 'text' | 'json' } = {}) => {
    let stdout = '';
    let stderr = '';
    const code = runLint(
      paths,
      { strict: options.strict ?? false, reporter: options.reporter ?? 'text', cwd: resolve(import.meta.dirname, '../..') },
      {
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
      },
    );
    return { code, stdout, stderr };
  };

  it('every shipped scenario file lints clean, even with --strict', () => {
    const result = run(['scenarios'], { strict: true, reporter: 'json' });
    const report = JSON.parse(result.stdout);
    expect(report.files.length).toBeGreaterThan(10);
    expect(report.files.flatMap((f: { problems: LintProblem[] }) => f.problems.map(formatLintProblem))).toEqual([]);
    expect(result.code).toBe(0);
  });

  it('exits 0 on warnings only, 1 on them with --strict, 1 on errors, and prints file:line per problem', () => {
    const warned = run(['test/fixtures/lint/warnings.yaml']);
    expect([warned.code, warned.stdout.split('\n').at(-2)]).toEqual([0, 'PASS  1 file: 0 errors, 1 warning']);
    expect(warned.stdout).toMatch(/^test\/fixtures\/lint\/warnings\.yaml:\d+:\d+: warning: .*\[shadowed\]$/m);
    expect(run(['test/fixtures/lint/warnings.yaml'], { strict: true }).code).toBe(1);
    const failed = run([FIXTURES]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^test\/fixtures\/lint\/unmatchable\.yaml:\d+:\d+: error: .*024999000.*\[unmatchable\]$/m);
    expect(failed.stdout).toMatch(/^test\/fixtures\/lint\/unquoted\.yaml:\d+:\d+: error: .*quote it: msisdn: "0249990004" \[invalid\]$/m);
  });

  it('reports JSON with --reporter json', () => {
    const report = JSON.parse(run(['test/fixtures/lint/unmatchable.yaml'], { reporter: 'json' }).stdout);
    expect(report).toMatchObject({ passed: false, strict: false, errors: 1, warnings: 0 });
    expect(report.files[0].problems[0]).toMatchObject({ file: 'test/fixtures/lint/unmatchable.yaml', line: 6, severity: 'error', code: 'unmatchable', rule: 0 });
  });

  it('exits 2 when a path does not exist', () => {
    const missing = run(['test/fixtures/lint/nothing-here.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nothing-here\.yaml does not exist/);
  });
});
