import type { Db } from '../store/db.ts';
import type { RailOutcome, StatusQuery } from './provider-port.ts';

export type SettlementSource = 'callback' | 'poll';
export type SettlementResult = 'settled' | 'ignored' | 'reversed';

/** The job kind of the status poll that RailSettlement runs. */
export const RAIL_POLL = 'rail.poll';

/** The payload of a rail.poll job: which target, which record, how many polls so far. */
export interface PollPayload {
  object: string;
  id: string;
  polls: number;
}

/** A record as the rails see it: who serves it, under which upstream reference, and whether it still waits. */
export interface SettlementView {
  provider: string | null;
  providerReference: string | null;
  pending: boolean;
}

/**
 * What a feature offers the rails for one kind of record that providers settle (charges,
 * transfers). The rails own this interface and the feature implements it, so rails never
 * import a feature.
 */
export interface SettlementTarget {
  /** The record's kind, as rail.poll payloads name it (`charge`). */
  readonly object: string;
  /** The prefix of its ids (`chg`): a callback's reference `chg_...` belongs here. */
  readonly idPrefix: string;
  /** What to ask a provider the status of. */
  readonly operation: StatusQuery['operation'];
  view(db: Db, id: string): Promise<SettlementView | undefined>;
  /** Applies a provider's final word; a pending outcome changes nothing. */
  settle(id: string, provider: string, outcome: RailOutcome, source: SettlementSource): Promise<SettlementResult>;
  /** Fails a record no provider ever accepted, and answers its Idempotency-Key. */
  abandon(tx: Db, id: string): Promise<void>;
}
