import { iso, type Clock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db } from '../store/db.ts';
import { EventOutboxRepository, type OutboxEventRow } from '../store/repositories/event-outbox-repository.ts';

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
  private readonly repo: EventOutboxRepository;

  /** `postgres`: the store is PostgreSQL's, where an event and its queue entry are one statement. */
  constructor(private readonly deps: { clock: Clock; ids: IdGenerator; postgres?: boolean }) {
    this.repo = new EventOutboxRepository(deps.postgres);
  }

  async emit(tx: Db, input: EventInput): Promise<RailyardEvent> {
    const { event, row } = this.prepare(input);
    await this.repo.insert(tx, row);
    return event;
  }

  /** An event and its row, for a statement that writes it with more (emit writes it alone). */
  prepare(input: EventInput): { event: RailyardEvent; row: OutboxEventRow } {
    const now = this.deps.clock.now();
    const event: RailyardEvent = {
      id: this.deps.ids.next('evt'),
      type: input.type,
      created_at: iso(now),
      livemode: input.environment === 'live',
      data: { object: input.object },
    };
    const row: OutboxEventRow = {
      id: event.id,
      environment: input.environment,
      merchantId: input.merchantId,
      type: input.type,
      objectType: input.objectType,
      objectId: String(input.object.id ?? input.object.reference),
      payload: JSON.stringify(event),
      createdAt: now,
    };
    return { event, row };
  }

  async forObject(db: Db, objectId: string): Promise<RailyardEvent[]> {
    return (await this.repo.payloadsForObject(db, objectId)).map((p) => JSON.parse(p) as RailyardEvent);
  }
}
