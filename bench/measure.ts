import type { DatabaseCache } from './seed-database.ts';

/** What every measure gets from the CLI. */
export interface BenchContext {
  /** A temp directory for this run: logs, generated configs, databases. */
  runDir: string;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  quick: boolean;
  scale: {
    /** Rows of the small and large list databases (1k and 1M). */
    smallRows: number;
    largeRows: number;
    /** Charges and transfers created before the simulated day. */
    dayObjects: number;
    /** Charges whose callbacks fall due in one advance. */
    dueCallbacks: number;
    coldStarts: number;
    /** Charges of history in the history measure's grown store (1M). */
    historyCharges: number;
    /** Seconds of sustained charges in the webhook lag measure (30). */
    lagSeconds: number;
    /** Operations of the burst the settle rate measure settles. */
    settleOperations: number;
  };
  databases: DatabaseCache;
  log(message: string): void;
}

/** One line of the printed table. */
export interface TableRow {
  measure: string;
  railyard: string;
  baseline: string;
  ratio: string;
  target: string;
  /** null: reported, no target. */
  met: boolean | null;
}

export interface MeasureResult {
  id: string;
  title: string;
  rows: TableRow[];
  /** Every raw round and figure, for bench/results/latest.json. */
  raw: Record<string, unknown>;
  /** What a reader needs to interpret the rows (settings, anomalies, evidence). */
  notes: string[];
}

export interface Measure {
  id: string;
  /** Other names --only accepts (p1, p2, ...). */
  aliases: string[];
  title: string;
  run(ctx: BenchContext): Promise<MeasureResult>;
}

export interface RoundPair<B, R = B> {
  round: number;
  baseline: B;
  railyard: R;
}

/** Interleaved rounds, baseline first: slow drifts of the machine hit both sides alike. */
export async function interleave<B, R = B>(ctx: BenchContext, label: string, runBaseline: () => Promise<B>, runRailyard: () => Promise<R>): Promise<RoundPair<B, R>[]> {
  const pairs: RoundPair<B, R>[] = [];
  for (let round = 1; round <= ctx.rounds; round++) {
    ctx.log(`  ${label}: round ${round}/${ctx.rounds} baseline`);
    const baseline = await runBaseline();
    ctx.log(`  ${label}: round ${round}/${ctx.rounds} railyard`);
    const railyard = await runRailyard();
    pairs.push({ round, baseline, railyard });
  }
  return pairs;
}

export function fmt(value: number, unit = '', digits = 1): string {
  if (!Number.isFinite(value)) return 'n/a';
  const text = Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(digits);
  return unit ? `${text} ${unit}` : text;
}

export function ratioText(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a';
}
