// Business time. Nothing else in src/ reads the wall clock.
export interface Clock {
  readonly kind: 'system' | 'virtual';
  now(): number; // epoch milliseconds
}

export class SystemClock implements Clock {
  readonly kind = 'system' as const;
  now(): number {
    return Date.now();
  }
}

/** Moves only when told. Time never goes backwards. */
export class VirtualClock implements Clock {
  readonly kind = 'virtual' as const;
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  set(epochMs: number): void {
    if (epochMs < this.current) throw new RangeError('the virtual clock never moves backwards');
    this.current = epochMs;
  }
}

/** The last instant formatted: the objects one job or request presents share their timestamps. */
let lastIso = { at: Number.NaN, text: '' };

export function iso(epochMs: number): string {
  if (epochMs !== lastIso.at) lastIso = { at: epochMs, text: new Date(epochMs).toISOString() };
  return lastIso.text;
}

/** 2026-01-01T00:00:00Z: where a virtual clock starts unless told otherwise. */
export const VIRTUAL_EPOCH = Date.UTC(2026, 0, 1);
