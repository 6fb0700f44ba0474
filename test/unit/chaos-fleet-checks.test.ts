// The fleet mode of the chaos harness (chaos/run-fleet-trial.ts) judges what the webhook receiver
// got and what the shared database recorded. These tests pin its judgement on made-up evidence,
// without starting PostgreSQL or any server.
import { describe, expect, it } from 'vitest';
import { checkFleet, RECEIPT_AFTER_KILL_MS, type FleetFigures } from '../../chaos/run-fleet-trial.ts';
import { emptyFindings } from '../../chaos/reconcile.ts';
import type { Db, Row } from '../../src/store/db.ts';

function database(tables: { outbox_events?: Row[]; webhook_deliveries?: Row[]; webhook_attempts?: Row[]; late_settlements?: Row[] }): Db {
  const rows = (sql: string) => {
    if (sql.includes('FROM late_settlements')) return tables.late_settlements ?? [];
    if (sql.includes('FROM outbox_events')) return tables.outbox_events ?? [];
    if (sql.includes('FROM webhook_deliveries')) return tables.webhook_deliveries ?? [];
    if (sql.includes('FROM webhook_attempts')) return tables.webhook_attempts ?? [];
    throw new Error(`unexpected query: ${sql}`);
  };
  return {
    run: async () => ({ changes: 0 }),
    get: async <T>(sql: string) => rows(sql)[0] as T | undefined,
    all: async <T>(sql: string) => rows(sql) as T[],
  };
}

function figures(killsAt: number[]): FleetFigures {
  return {
    instances: 3,
    kills: killsAt.map((at) => ({ instance: 2, signal: 'SIGKILL', at, downMs: 1_000 })),
    sendsPerInstance: [],
    events: 0,
    receipts: 0,
    atLeastOnceRetries: 0,
    lostWebhooks: 0,
    undeliveredEvents: 0,
  };
}

const event = (id: string, objectId = `chg_${id}`, type = 'charge.pending') => ({ id, type, object_id: objectId });
const delivered = (id: string, eventId: string) => ({ id, event_id: eventId, status: 'delivered' });
const attempt = (deliveryId: string, n: number, status: number | null) => ({ delivery_id: deliveryId, attempt: n, http_status: status });

/** One delivered event received at `first` and again at `second`, with an instance killed at `killAt`: the fleet check's findings. */
async function receivedTwice(killAt: number, first: number, second: number) {
  const f = emptyFindings();
  const fleet = figures([killAt]);
  const db = database({ outbox_events: [event('evt_1')], webhook_deliveries: [delivered('whd_1', 'evt_1')], webhook_attempts: [attempt('whd_1', 1, 200)] });
  const receipts = [first, second].map((at) => ({ id: 'evt_1', type: 'charge.pending', at }));
  await checkFleet(db, receipts, fleet, 10_000, f);
  return { f, fleet };
}

describe('the fleet checks of the chaos harness', () => {
  it('a second receipt of a webhook in flight when an instance was killed is an at-least-once retry, not a duplicate', async () => {
    const { f, fleet } = await receivedTwice(5_000, 4_200, 6_500);
    expect(fleet.atLeastOnceRetries).toBe(1);
    expect(f.webhookDuplicates).toEqual([]);
    expect(fleet.receipts).toBe(2);
  });

  it("a receipt a moment after a kill may be the killed instance's own, sent before it died: its second receipt is an at-least-once retry", async () => {
    const { f, fleet } = await receivedTwice(3_330, 3_332, 6_891);
    expect(fleet.atLeastOnceRetries).toBe(1);
    expect(f.webhookDuplicates).toEqual([]);
  });

  it('a first receipt well after a kill is not explained by it', async () => {
    const { f } = await receivedTwice(3_000, 3_000 + RECEIPT_AFTER_KILL_MS + 1, 9_000);
    expect(f.webhookDuplicates).toHaveLength(1);
  });

  it('a second receipt with no kill shortly after the first is a webhook delivered twice', async () => {
    const { f, fleet } = await receivedTwice(50_000, 1_000, 1_050);
    expect(fleet.atLeastOnceRetries).toBe(0);
    expect(f.webhookDuplicates).toHaveLength(1);
    expect(f.webhookDuplicates[0]).toContain('evt_1');
  });

  it('two successful attempts of one delivery, or one attempt number recorded twice, mean its job ran twice', async () => {
    const f = emptyFindings();
    const db = database({
      outbox_events: [event('evt_1'), event('evt_2', 'chg_2')],
      webhook_deliveries: [delivered('whd_1', 'evt_1'), delivered('whd_2', 'evt_2')],
      webhook_attempts: [attempt('whd_1', 1, 200), attempt('whd_1', 2, 200), attempt('whd_2', 1, 500), attempt('whd_2', 1, 500), attempt('whd_2', 2, 200)],
    });
    await checkFleet(
      db,
      [
        { id: 'evt_1', type: 'charge.pending', at: 1 },
        { id: 'evt_2', type: 'charge.pending', at: 2 },
      ],
      figures([]),
      10_000,
      f,
    );
    expect(f.jobsTwice).toEqual(['delivery whd_1 of event evt_1 has 2 successful attempts recorded', 'delivery whd_2 of event evt_2 recorded attempt number(s) 1 more than once']);
  });

  it('an event emitted twice for one object is work run twice', async () => {
    const f = emptyFindings();
    const db = database({ outbox_events: [event('evt_1', 'chg_9'), event('evt_2', 'chg_9'), event('evt_3', 'chg_9', 'charge.success')] });
    await checkFleet(db, [], figures([]), 10_000, f);
    expect(f.jobsTwice).toEqual(['event chg_9 charge.pending was emitted 2 times']);
  });

  it('a late success reversed is once per late settlement of the object (one per abandoned provider), and twice for one is work run twice', async () => {
    const reversed = (id: string, objectId: string) => event(id, objectId, 'charge.late_success_reversed');
    const f = emptyFindings();
    const db = database({
      outbox_events: [reversed('evt_1', 'chg_1'), reversed('evt_2', 'chg_1'), reversed('evt_3', 'chg_2'), reversed('evt_4', 'chg_2')],
      // chg_1: mtn-momo and hubtel both moved the money after it was abandoned; chg_2: one provider only.
      late_settlements: [{ object_id: 'chg_1' }, { object_id: 'chg_1' }, { object_id: 'chg_2' }],
    });
    await checkFleet(db, [], figures([]), 10_000, f);
    expect(f.jobsTwice).toEqual(['event chg_2 charge.late_success_reversed was emitted 2 times']);
  });

  it('a delivery the database calls delivered that never reached the receiver is lost; one not delivered yet is only counted', async () => {
    const f = emptyFindings();
    const fleet = figures([]);
    const db = database({
      outbox_events: [event('evt_1'), event('evt_2', 'chg_2')],
      webhook_deliveries: [delivered('whd_1', 'evt_1'), { id: 'whd_2', event_id: 'evt_2', status: 'pending' }],
      webhook_attempts: [attempt('whd_1', 1, 200)],
    });
    await checkFleet(db, [], fleet, 10_000, f);
    expect(fleet.lostWebhooks).toBe(1);
    expect(f.lost).toHaveLength(1);
    expect(fleet.undeliveredEvents).toBe(1);
    expect(f.warnings).toEqual(['1 of 2 event(s) not delivered after settling']);
  });
});
