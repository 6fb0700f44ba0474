import { iso, type Clock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Environment } from '../ledger/ledger.ts';
import type { Db } from '../store/db.ts';

export interface EventInput {
  environment: Environment;
  merchantId: string;
  type: string; // e.g. charge.success
  objectType: string; // charge | transfer | quote | trade
  /** The snapshot; charges and transfers carry `id`, quotes and trades `reference`. */
  object: ({ id: string } | { reference: string }) & Record<string, unknown>;
}

export interface RailyardEvent {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: { object: Record<string, unknown> };
}

/**
 * The transactional outbox: an event is written in the same transaction as the state change it
 * describes, with a snapshot of the object, so a crash can neither lose nor invent one.
 * Delivery reads from here after commit.
 */
export class EventOutbox {
  constructor(private readonly deps: { clock: Clock; ids: IdGenerator }) {}

  async emit(tx: Db, input: EventInput): Promise<RailyardEvent> {
    const now = this.deps.clock.now();
    const event: RailyardEvent = {
      id: this.deps.ids.next('evt'),
      type: input.type,
      created_at: iso(now),
      livemode: input.environment === 'live',
      data: { object: input.object },
    };
    await tx.run(
      'INSERT INTO outbox_events (id, environment, merchant_id, type, object_type, object_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [event.id, input.environment, input.merchantId, input.type, input.objectType, String(input.object.id ?? input.object.reference), JSON.stringify(event), now],
    );
    return event;
  }

  async forObject(db: Db, objectId: string): Promise<RailyardEvent[]> {
    const rows = await db.all<{ payload: string }>('SELECT payload FROM outbox_events WHERE object_id = ? ORDER BY seq', [objectId]);
    return rows.map((r) => JSON.parse(r.payload) as RailyardEvent);
  }
}
