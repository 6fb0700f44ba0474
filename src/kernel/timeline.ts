import { iso, type Clock } from './clock.ts';

/** One line of a replay: who talked to whom, at what business time, and what happened. */
export interface TimelineEntry {
  at: string; // ISO, business time
  from: string; // merchant | railyard | mtn-momo | hubtel | bank-rail | clock
  to: string;
  what: string;
}

/** Where the app reports what crosses its edges. The default records nothing. */
export interface Timeline {
  record(from: string, to: string, what: string): void;
}

export const silentTimeline: Timeline = { record() {} };

/** Keeps every entry, stamped with the business clock, in the order they happen. */
export class RecordingTimeline implements Timeline {
  readonly entries: TimelineEntry[] = [];
  constructor(private readonly clock: Clock) {}
  record(from: string, to: string, what: string): void {
    this.entries.push({ at: iso(this.clock.now()), from, to, what });
  }
}
