// How often each scenario rule answered, grouped by the file it came from (GET /api/v1/sandbox/scenarios).
import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/scenarios/rule-engine.ts';
import type { RailQuery } from '../../src/scenarios/scenario-types.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

const accept = { respond: 'accept' as const, callback: { after_seconds: 1, status: 'success' as const } };
const rule = (name: string, msisdn: string) => parseRule({ name, match: { msisdn }, collect: { any: accept } });
const call = (msisdn: string): RailQuery => ({ provider: 'mtn-momo', operation: 'collect', channel: 'momo', msisdn, amount: 100 });
const counts = (engine: RuleEngine) => engine.describe().map((g) => [g.file, g.rules.map((r) => [r.index, r.rule.name, r.matchedCount])]);

describe('RuleEngine.describe', () => {
  const rules = [rule('a', '0551111111'), rule('b', '0552222222'), rule('c', '0553333333')];
  const sources = [
    { file: 'scenarios/one.yaml', rules: 2 },
    { file: 'scenarios/two.yaml', rules: 1 },
  ];

  it('groups rules by file, indexed within the file, counting the calls each answered', () => {
    const engine = new RuleEngine(rules, [], sources);
    engine.decide(call('0551111111'));
    engine.decide(call('0553333333'));
    engine.decide(call('0553333333'));
    engine.decide(call('0559999999')); // no rule: nothing counted
    expect(counts(engine)).toEqual([
      [
        'scenarios/one.yaml',
        [
          [0, 'a', 1],
          [1, 'b', 0],
        ],
      ],
      ['scenarios/two.yaml', [[0, 'c', 2]]],
    ]);
  });

  it('keeps a file with no rules, and puts rules from no file last as inline rules', () => {
    const engine = new RuleEngine(
      rules,
      [],
      [
        { file: 'empty.yaml', rules: 0 },
        { file: 'one.yaml', rules: 1 },
      ],
    );
    expect(counts(engine)).toEqual([
      ['empty.yaml', []],
      ['one.yaml', [[0, 'a', 0]]],
      [
        '(inline rules)',
        [
          [0, 'b', 0],
          [1, 'c', 0],
        ],
      ],
    ]);
  });

  it('starts counting afresh when the rules are replaced or reset', () => {
    const engine = new RuleEngine(rules, [], sources);
    engine.decide(call('0551111111'));
    engine.reset();
    expect(engine.describe()[0]!.rules[0]!.matchedCount).toBe(0);
    engine.decide(call('0551111111'));
    engine.replace(rules, [], sources);
    expect(engine.describe()[0]!.rules[0]!.matchedCount).toBe(0);
  });
});

describe('RuleEngine.decideElsewhere (the job thread hands its decisions to the request thread)', () => {
  const rules = [rule('a', '0551111111')];
  const sources = [{ file: 'scenarios/one.yaml', rules: 1 }];

  it('takes every shared decision from the other engine, which counts it; this one counts nothing', async () => {
    const requests = new RuleEngine(rules, [], sources);
    const jobs = new RuleEngine([], [], []);
    jobs.decideElsewhere((query) => requests.decideShared(query));
    const decision = await jobs.decideShared(call('0551111111'));
    expect(decision).toMatchObject({ rule: 'a', behaviour: accept });
    expect(await jobs.decideShared(call('0559999999'))).toBeUndefined();
    expect(requests.describe()[0]!.rules[0]!.matchedCount).toBe(1);
    expect(jobs.describe()).toEqual([]);
  });
});
