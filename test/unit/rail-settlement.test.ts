import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { IdempotencyService } from '../../src/idempotency/idempotency-service.ts';
import { VIRTUAL_EPOCH, VirtualClock } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { silentLogger } from '../../src/kernel/logger.ts';
import { ProviderHealth } from '../../src/rails/provider-health.ts';
import { RailError, type InboundCallback, type RailOutcome, type RailProvider, type StatusQuery } from '../../src/rails/provider-port.ts';
import { RailRouter } from '../../src/rails/rail-router.ts';
import { RailSettlement } from '../../src/rails/rail-settlement.ts';
import { RAIL_POLL, type SettlementResult, type SettlementSource, type SettlementTarget, type SettlementView } from '../../src/rails/settlement-target.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

const POLL_INTERVAL_S = 5;
const noTimeline = { record() {} };

/** A provider that calls back with `{reference, status}` and answers status polls from a script. */
class ScriptedProvider implements RailProvider {
  readonly name = 'acme';
  readonly channels = ['momo', 'bank'] as const;
  readonly networks = ['MTN'] as const;
  readonly asked: StatusQuery[] = [];
  constructor(private readonly answers: RailOutcome[]) {}
  baseUrl = () => 'http://acme.invalid';
  collect = () => Promise.reject(new Error('not used'));
  payout = () => Promise.reject(new Error('not used'));
  resolveName = () => Promise.reject(new Error('not used'));
  async status(query: StatusQuery): Promise<RailOutcome> {
    this.asked.push(query);
    return this.answers.shift() ?? { status: 'pending' };
  }
  verifyCallback = (callback: InboundCallback) => callback.headers['x-acme-token'] === 'good';
  parseCallback(callback: InboundCallback) {
    const body = callback.body as { reference: string; status: 'success' } | undefined;
    if (!body?.reference) throw new RailError('protocol', 'callback without a reference');
    return { reference: body.reference, outcome: { status: body.status } };
  }
}

/** A kind of record kept in memory: what a feature implementing SettlementTarget would offer. */
class RecordBook implements SettlementTarget {
  readonly records = new Map<string, SettlementView>();
  readonly settled: [string, string, RailOutcome['status'], SettlementSource][] = [];
  readonly abandoned: string[] = [];
  constructor(
    readonly object: string,
    readonly idPrefix: string,
    readonly operation: 'collect' | 'payout',
  ) {}
  async view(_db: unknown, id: string) {
    return this.records.get(id);
  }
  async settle(id: string, provider: string, outcome: RailOutcome, source: SettlementSource): Promise<SettlementResult> {
    const record = this.records.get(id);
    if (!record?.pending || outcome.status === 'pending') return 'ignored';
    this.settled.push([id, provider, outcome.status, source]);
    record.pending = false;
    return 'settled';
  }
  async abandon(_tx: unknown, id: string) {
    this.abandoned.push(id);
    this.records.get(id)!.pending = false;
  }
}

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

function railSettlement(answers: RailOutcome[] = []) {
  const store = new SqliteStore(':memory:');
  stores.push(store);
  const clock = new VirtualClock(VIRTUAL_EPOCH);
  const ids = new IdGenerator(clock, new SeededRandom(1));
  const scheduler = new Scheduler({ store, clock, ids, logger: silentLogger, wallClock: clock, boot: 1 });
  const provider = new ScriptedProvider(answers);
  const router = new RailRouter([{ provider, priority: 1, enabled: true }], {
    health: new ProviderHealth(),
    store,
    clock,
    logger: silentLogger,
    timeline: noTimeline,
  });
  const charges = new RecordBook('charge', 'chg', 'collect');
  const widgets = new RecordBook('widget', 'wdg', 'payout');
  const settlement = new RailSettlement({
    router,
    targets: [charges, widgets],
    idempotency: new IdempotencyService({ clock, boot: 1 }),
    scheduler,
    store,
    clock,
    logger: silentLogger,
    config: { rails: { poll_interval_seconds: POLL_INTERVAL_S, max_polls: 3 } },
    timeline: noTimeline,
  });
  const app = express().use('/internal/callbacks', settlement.callbackRouter());
  const poll = (object: string, id: string) => scheduler.schedule(store, { kind: RAIL_POLL, runAt: clock.now(), payload: { object, id, polls: 0 } });
  return { app, settlement, scheduler, provider, charges, widgets, poll };
}

describe('RailSettlement settles through the SettlementTarget of each kind of record', () => {
  it('a callback settles through the target whose id prefix its reference carries', async () => {
    const { app, charges, widgets } = railSettlement();
    widgets.records.set('wdg_1', { provider: 'acme', providerReference: 'up-1', pending: true });

    const res = await request(app).post('/internal/callbacks/acme').set('x-acme-token', 'good').send({ reference: 'wdg_1', status: 'success' });

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ result: 'settled' });
    expect(widgets.settled).toEqual([['wdg_1', 'acme', 'success', 'callback']]);
    expect(charges.settled).toEqual([]);
  });

  it('a callback for a reference no target owns is acknowledged and settles nothing', async () => {
    const { app, charges, widgets } = railSettlement();

    const res = await request(app).post('/internal/callbacks/acme').set('x-acme-token', 'good').send({ reference: 'zzz_1', status: 'success' });

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ result: 'ignored' });
    expect([...charges.settled, ...widgets.settled]).toEqual([]);
  });

  it("the status poll asks the serving provider with the target's operation, again while pending, and settles through the target", async () => {
    const { scheduler, provider, widgets, poll } = railSettlement([{ status: 'pending' }, { status: 'success' }]);
    widgets.records.set('wdg_2', { provider: 'acme', providerReference: 'up-2', pending: true });
    await poll('widget', 'wdg_2');

    await scheduler.advanceBy(0);
    expect(widgets.settled).toEqual([]);
    await scheduler.advanceBy(POLL_INTERVAL_S * 1000);

    expect(provider.asked).toEqual([
      { operation: 'payout', reference: 'wdg_2', providerReference: 'up-2' },
      { operation: 'payout', reference: 'wdg_2', providerReference: 'up-2' },
    ]);
    expect(widgets.settled).toEqual([['wdg_2', 'acme', 'success', 'poll']]);
  });

  it('the status poll abandons, through its target, a record no provider accepted and no request is still routing', async () => {
    const { scheduler, provider, charges, poll } = railSettlement();
    charges.records.set('chg_3', { provider: null, providerReference: null, pending: true });
    await poll('charge', 'chg_3');

    await scheduler.advanceBy(0);

    expect(charges.abandoned).toEqual(['chg_3']);
    expect(provider.asked).toEqual([]);
  });
});

describe("the callback receiver's answers, over its route and handed over in process", () => {
  const good = { 'x-acme-token': 'good', 'content-type': 'application/json' };
  const answers = {
    unknown: { status: 404, body: { status: false, message: 'Unknown callback receiver', error: { code: 'not_found' } } },
    forged: { status: 401, body: { status: false, message: 'Callback not authentic', error: { code: 'unauthorized' } } },
    unreadable: { status: 400, body: { status: false, message: 'callback without a reference', error: { code: 'validation_error' } } },
    received: { status: 200, body: { status: true, message: 'received', data: { result: 'settled' } } },
  };

  it('answers 404 to a provider it does not know or a method other than POST and PUT, 401 to a forged one, 400 to an unreadable one, 200 otherwise', async () => {
    const { app, widgets } = railSettlement();
    widgets.records.set('wdg_4', { provider: 'acme', providerReference: 'up-4', pending: true });
    const route = async (test: request.Test) => {
      const res = await test;
      return { status: res.status, body: res.body };
    };

    expect(await route(request(app).post('/internal/callbacks/nobody/tok').set(good).send({ reference: 'wdg_4', status: 'success' }))).toEqual(answers.unknown);
    expect(await route(request(app).get('/internal/callbacks/acme').set(good))).toEqual(answers.unknown);
    expect(
      await route(
        request(app)
          .post('/internal/callbacks/acme')
          .set({ ...good, 'x-acme-token': 'bad' })
          .send({ reference: 'wdg_4', status: 'success' }),
      ),
    ).toEqual(answers.forged);
    expect(await route(request(app).post('/internal/callbacks/acme').set(good).send('not json'))).toEqual(answers.unreadable);
    expect(await route(request(app).put('/internal/callbacks/acme/tok').set(good).send({ reference: 'wdg_4', status: 'success' }))).toEqual(answers.received);
    expect(widgets.settled).toEqual([['wdg_4', 'acme', 'success', 'callback']]);
  });

  it('gives the same answers to a callback handed over in process', async () => {
    const { settlement, widgets } = railSettlement();
    widgets.records.set('wdg_5', { provider: 'acme', providerReference: 'up-5', pending: true });
    const rawBody = JSON.stringify({ reference: 'wdg_5', status: 'success' });
    const callback = { provider: 'acme', method: 'POST', subpath: '/', headers: good, rawBody };

    expect(await settlement.receive({ ...callback, provider: 'nobody' })).toEqual(answers.unknown);
    expect(await settlement.receive({ ...callback, method: 'GET' })).toEqual(answers.unknown);
    expect(await settlement.receive({ ...callback, headers: { 'x-acme-token': 'bad' } })).toEqual(answers.forged);
    expect(await settlement.receive({ ...callback, rawBody: 'not json' })).toEqual(answers.unreadable);
    expect(await settlement.receive(callback)).toEqual(answers.received);
    expect(widgets.settled).toEqual([['wdg_5', 'acme', 'success', 'callback']]);
  });
});
