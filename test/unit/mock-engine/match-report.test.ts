import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { MockEngine } from '../../../src/mocks/engine/mock-engine.ts';
import { MOCK_MATCH_LOCAL, type RuleMatchReport } from '../../../src/scenarios/rule-explanation.ts';
import type { Decision, RailQuery } from '../../../src/scenarios/scenario-types.ts';
import { engineWorld, serve } from './engine-fixture.ts';

// The engine leaves, on the response's locals, how the rules decided each call it asked them
// about (the requests inspector reads it when the exchange ends).

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function world(rule: (query: RailQuery) => Decision | undefined) {
  const w = await engineWorld({ rule });
  const explained: { query: RailQuery; decision: Decision | undefined }[] = [];
  w.ctx.explainMatch = (query, decision): RuleMatchReport => {
    explained.push({ query, decision });
    return decision ? { matched: true, file: 'acme.yaml', rule_index: 0, rule_name: decision.rule } : { matched: false, nearest: null, failed: 'no rule' };
  };
  const engine = new MockEngine(w.ctx, {
    provider: 'acme',
    refusals: { reject: (res) => void res.status(422).end(), serverError: (res) => void res.status(500).end() },
  });
  engine.book('orders', { pending: () => true, settle: (o) => o, callback: () => null as never });
  const reports: (RuleMatchReport | undefined)[] = [];
  const app = express();
  app.use((_req, res, next) => {
    res.on('finish', () => reports.push(res.locals[MOCK_MATCH_LOCAL] as RuleMatchReport | undefined));
    next();
  });
  app.get('/holders/:msisdn', async (req, res) => {
    const looked = await engine.lookup({ req, res, successStatus: 200 }, { operation: 'resolve', channel: 'momo', msisdn: req.params.msisdn });
    if (looked) res.json({ ok: true });
  });
  app.get('/token', (_req, res) => void res.json({ token: 't' }));
  const server = await serve(app);
  closers.push(server.close);
  return { base: server.base, reports, explained };
}

describe('the mock engine explaining its rule decisions', () => {
  it('leaves the rule that decided a call on the response', async () => {
    const w = await world(() => ({ rule: 'every holder', index: 0, behaviour: { respond: 'accept', name: 'Ama' } }));
    await fetch(`${w.base}/holders/233240000009`);
    expect(w.reports).toEqual([{ matched: true, file: 'acme.yaml', rule_index: 0, rule_name: 'every holder' }]);
    expect(w.explained[0]!.query).toEqual({ provider: 'acme', operation: 'resolve', channel: 'momo', msisdn: '233240000009' });
  });

  it('leaves why no rule decided, and nothing on a call the rules were never asked about', async () => {
    const w = await world(() => undefined);
    await fetch(`${w.base}/holders/233240000009`);
    await fetch(`${w.base}/token`);
    expect(w.reports).toEqual([{ matched: false, nearest: null, failed: 'no rule' }, undefined]);
  });
});
