import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/scenarios/rule-engine.ts';
import { describePredicateFailure, explainMiss, reportMatch } from '../../src/scenarios/rule-explanation.ts';
import { tagRuleSource } from '../../src/scenarios/rule-source.ts';
import type { ScenarioRule } from '../../src/scenarios/scenario-schema.ts';
import type { RailQuery } from '../../src/scenarios/scenario-types.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

// Why a provider call matched no scenario rule: the nearest rule (most conditions satisfied, the
// earliest on a tie) and the first condition it failed, in words.

const q = (over: Partial<RailQuery> = {}): RailQuery => ({ provider: 'mtn-momo', operation: 'collect', channel: 'momo', msisdn: '233551234987', network: 'MTN', amount: 5_000, ...over });
const accept = { respond: 'accept' as const, callback: { after_seconds: 1, status: 'success' as const } };
const rule = (name: string, fields: Record<string, unknown>): ScenarioRule => parseRule({ name, collect: { any: accept }, ...fields } as never);

describe('describePredicateFailure', () => {
  it('equals compares numbers in their 233 form', () => {
    expect(describePredicateFailure('msisdn', { equals: '0551234989' }, '233551234987')).toBe('msisdn 233551234987 is not 233551234989');
  });

  it('one_of, prefix, regex and range say what was expected', () => {
    expect(describePredicateFailure('network', { one_of: ['AT', 'TELECEL'] }, 'MTN')).toBe('network MTN is not one of AT, TELECEL');
    expect(describePredicateFailure('msisdn', { prefix: '024' }, '233551234987')).toBe('msisdn 0551234987 does not start with 024');
    expect(describePredicateFailure('account_number', { regex: '^9' }, '1000000001')).toBe('account_number 1000000001 does not match /^9/');
    expect(describePredicateFailure('amount', { range: { min: 10_000 } }, 5_000)).toBe('amount 5000 is below 10000');
    expect(describePredicateFailure('amount', { range: { max: 1_000 } }, 5_000)).toBe('amount 5000 is above 1000');
  });

  it('names a field the call does not carry', () => {
    expect(describePredicateFailure('bank_code', { equals: '040100' }, undefined)).toBe('the call has no bank_code');
  });

  it('never spells out a card number: its last four digits stand for it', () => {
    const text = describePredicateFailure('card', { equals: '4000000000000002' }, '4111111111111111');
    expect(text).toBe('card ending 1111 is not ending 0002');
    expect(text).not.toMatch(/\d{6,}/);
  });
});

describe('explainMiss', () => {
  const rules = [
    rule('0551234989 fails over', { match: { msisdn: '0551234989' } }),
    rule('large MTN amounts', { match: { network: 'MTN', amount: { range: { min: 100_000 } } } }),
    rule('GCB account', { match: { bank_code: '040100', account_number: '1000000001' } }),
  ];

  it('picks the rule with the most conditions satisfied and names its first failed one', () => {
    expect(explainMiss(rules, q())).toEqual({
      nearest: { file: null, rule_index: 1, rule_name: 'large MTN amounts' },
      failed: 'amount 5000 is below 100000',
    });
  });

  it('on a tie, picks the earliest rule', () => {
    expect(explainMiss(rules, q({ network: 'TELECEL' }))).toEqual({
      nearest: { file: null, rule_index: 0, rule_name: '0551234989 fails over' },
      failed: 'msisdn 233551234987 is not 233551234989',
    });
  });

  it('a rule about a field the call carries is nearer than one about a field it lacks', () => {
    const cardRule = rule('declined card', { match: { card: '4000000000000002' } });
    const call = q({ provider: 'card-processor', channel: 'card', msisdn: undefined, network: undefined, card: '4111111111111111' });
    expect(explainMiss([rules[0]!, cardRule], call)).toEqual({
      nearest: { file: null, rule_index: 1, rule_name: 'declined card' },
      failed: 'card ending 1111 is not ending 0002',
    });
  });

  it('a rule whose match holds but that says nothing for this operation and provider is the nearest, and says so', () => {
    const onlyPayouts = parseRule({ name: 'payouts only', match: { msisdn: '0551234987' }, payout: { any: accept } });
    expect(explainMiss([rules[0]!, onlyPayouts], q())).toEqual({
      nearest: { file: null, rule_index: 1, rule_name: 'payouts only' },
      failed: 'the rule says nothing for collect on mtn-momo',
    });
  });

  it('a rule that waits for another state says which', () => {
    const later = parseRule({ name: 'second call', match: { msisdn: '0551234987' }, state: { scenario: 'retry', requires: 'Failed once' }, collect: { any: accept } });
    expect(explainMiss([later], q())!.failed).toBe('the rule needs scenario "retry" in state "Failed once", which is in "Started"');
    expect(explainMiss([later], q(), () => 'Other')!.failed).toBe('the rule needs scenario "retry" in state "Failed once", which is in "Other"');
  });

  it('counts all members one by one, and any and not as one condition each', () => {
    const combined = rule('combined', { match: { all: [{ network: 'MTN' }, { channel: 'momo' }], any: [{ amount: 1 }, { amount: 2 }] } });
    expect(explainMiss([rules[0]!, combined], q())).toEqual({
      nearest: { file: null, rule_index: 1, rule_name: 'combined' },
      failed: 'none of the 2 "any" alternatives holds (the first: amount 5000 is not 1)',
    });
    const excluded = rule('not MTN', { match: { not: { network: 'MTN' } } });
    expect(explainMiss([excluded], q())!.failed).toBe('the "not" block holds for this call');
  });

  it('is null when no rules are loaded', () => {
    expect(explainMiss([], q())).toBeNull();
  });

  it('names the rule by its file and place in it when the loader tagged it', () => {
    const tagged = rule('tagged', { match: { msisdn: '0551234000' } });
    tagRuleSource(tagged, { file: 'scenarios/qa.yaml', index: 4 });
    expect(explainMiss([tagged], q())!.nearest).toEqual({ file: 'scenarios/qa.yaml', rule_index: 4, rule_name: 'tagged' });
  });
});

describe('reportMatch', () => {
  const rules = [rule('first', { match: { msisdn: '0551234000' } }), rule('second', { match: { msisdn: '0551234987' } })];

  it('names the rule the engine decided by', () => {
    const engine = new RuleEngine(rules);
    const decision = engine.decide(q());
    expect(reportMatch(engine.loaded, q(), decision)).toEqual({ matched: true, file: null, rule_index: 1, rule_name: 'second' });
  });

  it('a simulated wallet that decided is named, with no file', () => {
    const engine = new RuleEngine([], [{ msisdn: '0551234987', balance: 10_000 }]);
    expect(reportMatch(engine.loaded, q(), engine.decide(q()))).toEqual({ matched: true, file: null, rule_index: null, rule_name: 'wallet 0551234987' });
  });

  it('explains a miss', () => {
    const engine = new RuleEngine(rules);
    const call = q({ msisdn: '233551234999' });
    expect(reportMatch(engine.loaded, call, engine.decide(call))).toEqual({
      matched: false,
      nearest: { file: null, rule_index: 0, rule_name: 'first' },
      failed: 'msisdn 233551234999 is not 233551234000',
    });
    expect(reportMatch([], call, undefined)).toEqual({ matched: false, nearest: null, failed: 'no scenario rules are loaded' });
  });
});
