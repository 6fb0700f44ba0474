import { describe, expect, it } from 'vitest';
import { matchHolds, RuleEngine } from '../../src/scenarios/rule-engine.ts';
import type { RailQuery } from '../../src/scenarios/scenario-types.ts';
import { parseRule } from '../../src/railyard-scenarios.ts';

const q = (over: Partial<RailQuery> = {}): RailQuery => ({ provider: 'mtn-momo', operation: 'collect', channel: 'momo', msisdn: '233241234567', network: 'MTN', amount: 5_000, ...over });
const accept = { respond: 'accept' as const, callback: { after_seconds: 1, status: 'success' as const } };
const m = (match: unknown) => parseRule({ name: 'r', match: match as never, collect: { any: accept } }).match!;

describe('predicates', () => {
  it('equals a number in any form', () => {
    expect(matchHolds(m({ msisdn: '+233241234567' }), q())).toBe(true);
    expect(matchHolds(m({ msisdn: { equals: '0241234567' } }), q())).toBe(true);
    expect(matchHolds(m({ msisdn: '0241234568' }), q())).toBe(false);
  });

  it('prefix and regex read a Ghana number as 0XXXXXXXXX', () => {
    expect(matchHolds(m({ msisdn: { prefix: '024' } }), q())).toBe(true);
    expect(matchHolds(m({ msisdn: { regex: '^02[0-9]{8}$' } }), q())).toBe(true);
    expect(matchHolds(m({ msisdn: { regex: '^055' } }), q())).toBe(false);
  });

  it('one_of and range', () => {
    expect(matchHolds(m({ network: { one_of: ['AT', 'MTN'] } }), q())).toBe(true);
    expect(matchHolds(m({ amount: { range: { min: 1_000, max: 5_000 } } }), q())).toBe(true);
    expect(matchHolds(m({ amount: { range: { min: 5_001 } } }), q())).toBe(false);
  });

  it('all, any and not combine blocks', () => {
    expect(matchHolds(m({ all: [{ network: 'MTN' }, { amount: { range: { max: 9_999 } } }] }), q())).toBe(true);
    expect(matchHolds(m({ any: [{ network: 'AT' }, { provider: 'mtn-momo' }] }), q())).toBe(true);
    expect(matchHolds(m({ not: { provider: 'mtn-momo' } }), q())).toBe(false);
  });

  it('card matches the card number or token a card processor was asked to charge', () => {
    const card = q({ provider: 'card-processor', channel: 'card', msisdn: undefined, network: undefined, card: '4084084084084081' });
    expect(matchHolds(m({ card: '4084084084084081' }), card)).toBe(true);
    expect(matchHolds(m({ card: { prefix: '4084' }, channel: 'card' }), card)).toBe(true);
    expect(matchHolds(m({ card: 'tok_success' }), card)).toBe(false);
    expect(matchHolds(m({ card: '4084084084084081' }), q())).toBe(false);
  });

  it('refuses a regex that does not compile, and a predicate with two tests', () => {
    expect(() => m({ msisdn: { regex: '([' } })).toThrow(/regex does not compile/);
    expect(() => m({ msisdn: { prefix: '02', regex: '^02' } })).toThrow(/exactly one/);
  });
});

describe('the rule engine', () => {
  it('walks a sequence call by call, repeating the last', () => {
    const engine = new RuleEngine([parseRule({ name: 'flaky', match: { msisdn: '0241234567' }, collect: { 'mtn-momo': [{ respond: 'timeout' }, { respond: 'server_error' }, accept] } })]);
    const responds = Array.from({ length: 4 }, () => engine.decide(q())?.behaviour.respond);
    expect(responds).toEqual(['timeout', 'server_error', 'accept', 'accept']);
    expect(engine.decide(q({ provider: 'hubtel' }))).toBeUndefined(); // counted per provider, and not named for hubtel
  });

  it('moves named state as calls come in, WireMock style', () => {
    const engine = new RuleEngine([
      parseRule({ name: 'first: down', match: { provider: 'mtn-momo' }, state: { scenario: 'mtn', requires: 'Started', sets: 'recovered' }, collect: { any: { respond: 'server_error' } } }),
      parseRule({ name: 'then: up', match: { provider: 'mtn-momo' }, state: { scenario: 'mtn', requires: 'recovered' }, collect: { any: accept } }),
    ]);
    expect(engine.decide(q())?.rule).toBe('first: down');
    expect(engine.decide(q())?.rule).toBe('then: up');
    expect(engine.decide(q())?.rule).toBe('then: up');
    engine.reset();
    expect(engine.decide(q())?.rule).toBe('first: down');
  });

  it('a default rule catches the rest', () => {
    const engine = new RuleEngine([
      parseRule({ name: 'special', match: { msisdn: '0551234987' }, collect: { any: accept } }),
      parseRule({ name: 'everything else', default: true, collect: { any: { respond: 'reject', reason: 'NOT_ALLOWED' } } }),
    ]);
    expect(engine.decide(q())?.rule).toBe('everything else');
    expect(() => parseRule({ name: 'both', default: true, match: { msisdn: '1' }, collect: { any: accept } } as never)).toThrow(/give match, or default: true/);
  });

  it('simulated wallets: collections debit the balance and fail when it is short; payouts credit it', () => {
    const engine = new RuleEngine([], [{ msisdn: '0241234567', balance: 8_000 }]);
    expect(engine.decide(q({ amount: 5_000 }))?.behaviour.callback?.status).toBe('success');
    expect(engine.walletBalance('233241234567')).toBe(3_000);
    const short = engine.decide(q({ amount: 5_000 }))?.behaviour.callback;
    expect(short).toMatchObject({ status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
    expect(engine.walletBalance('0241234567')).toBe(3_000);
    engine.decide(q({ operation: 'payout', amount: 2_000 }));
    expect(engine.walletBalance('0241234567')).toBe(5_000);
    expect(engine.decide(q({ amount: 5_000 }))?.behaviour.callback?.status).toBe('success');
  });

  it('a rule that succeeds still checks the wallet', () => {
    const engine = new RuleEngine([parseRule({ name: 'ok', match: { msisdn: '0241234567' }, collect: { any: accept } })], [{ msisdn: '0241234567', balance: 100 }]);
    expect(engine.decide(q({ amount: 5_000 }))?.behaviour.callback).toMatchObject({ status: 'failed', reason: 'NOT_ENOUGH_FUNDS' });
  });
});
