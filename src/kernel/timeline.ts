import { iso, type Clock } from './clock.ts';
import { currentJob } from './job-scope.ts';

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

/**
 * Keeps every entry, stamped with the business clock, in the order they happen; what jobs running
 * side by side record sorts into the order of their round (round, rank, then each job's own
 * order), so a concurrent run reads exactly as a serial one.
 */
export class RecordingTimeline implements Timeline {
  readonly entries: TimelineEntry[] = [];
  /** Each entry's place in its round, or null outside jobs (those stay where they happen). */
  private readonly places: ([number, number, number] | null)[] = [];
  constructor(private readonly clock: Clock) {}
  record(from: string, to: string, what: string): void {
    const entry = { at: iso(this.clock.now()), from, to, what };
    const job = currentJob();
    if (!job) {
      this.entries.push(entry);
      this.places.push(null);
      return;
    }
    const place: [number, number, number] = [job.round, job.rank, job.entries++];
    let at = this.entries.length;
    for (; at > 0; at--) {
      const before = this.places[at - 1];
      if (!before || !after(before, place)) break;
    }
    this.entries.splice(at, 0, entry);
    this.places.splice(at, 0, place);
  }
}

function after(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return false;
}
