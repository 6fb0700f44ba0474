import type { AuthContext } from '../auth/api-key-service.ts';
import type { Stage } from '../auth/service-ladder.ts';
import type { TradingConfig } from '../config/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { LimitExceededError } from '../kernel/errors.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Db } from '../store/db.ts';
import { TradeRepository } from '../store/repositories/trade-repository.ts';

/**
 * Per-merchant per-trade, daily and monthly limits (GHS, UTC calendar days and months), and the
 * treasury exposure cap on buys: min(exposure_cap[asset], exposure_cap[asset] × inventory_now /
 * inventory_at_start) for the quote's network, rounded down. The cap shrinks in step with the
 * inventory and never grows past its configured value.
 */
/** A trade as the limits see it. */
interface Trade {
  side: 'buy' | 'sell';
  asset: string;
  network: string;
  /** Its cedis, in pesewas. */
  fiat: number;
}

/** What a trade is judged by (TradingLimits.usage). */
export interface LimitUsage {
  /** Cedis of today's counted trades, in pesewas. */
  day: number;
  /** Cedis of this month's. */
  month: number;
  /** For a buy: the largest one the treasury takes now. */
  exposureCap: number | undefined;
}

export class TradingLimits {
  private readonly trades = new TradeRepository();

  constructor(private readonly deps: { clock: Clock; config: Pick<TradingConfig, 'limits' | 'inventory' | 'exposure_cap'> }) {}

  /** Reads what the limits need (usage), then judges the trade by them. */
  async check(db: Db, auth: AuthContext, trade: Trade): Promise<void> {
    // Over the per-trade limit, it is refused without a read.
    if (trade.fiat > this.deps.config.limits.per_trade) this.judge({ day: 0, month: 0, exposureCap: undefined }, trade);
    this.judge(await this.usage(db, auth, trade), trade);
  }

  /**
   * What the limits judge a trade of this side, asset and network by: the cedis of the merchant's
   * trades that count toward them (everything not failed or reversed) today and this month, and for
   * a buy the exposure cap. With them, the merchant's stage on the service ladder (`none` when not on
   * record), which gates trading (Compliance.judgeStage). All in one read.
   */
  async standing(db: Db, auth: AuthContext, trade: Pick<Trade, 'side' | 'asset' | 'network'>): Promise<{ stage: Stage; usage: LimitUsage }> {
    const now = new Date(this.deps.clock.now());
    const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const cap = trade.side === 'buy' ? this.capBase(trade.asset, trade.network) : undefined;
    const inventory = cap ? { account: accounts.treasuryInventory(trade.asset, trade.network), currency: trade.asset } : undefined;
    const read = await this.trades.standing(db, auth.environment, auth.merchantId, { dayStart, monthStart }, inventory);
    const exposureCap = trade.side !== 'buy' ? undefined : cap ? capWith(cap, read.inventory) : 0;
    return { stage: (read.stage ?? 'none') as Stage, usage: { day: read.day, month: read.month, exposureCap } };
  }

  async usage(db: Db, auth: AuthContext, trade: Pick<Trade, 'side' | 'asset' | 'network'>): Promise<LimitUsage> {
    return (await this.standing(db, auth, trade)).usage;
  }

  /** Refuses the trade by the first limit it exceeds, in order: per trade, daily, monthly, exposure cap. */
  judge(usage: LimitUsage, trade: Pick<Trade, 'side' | 'fiat'>): void {
    const { limits } = this.deps.config;
    const refuse = (limit: string, limitAmount: number, usedAmount: number) => {
      const remaining = Math.max(0, limitAmount - usedAmount);
      throw new LimitExceededError(`This trade of ${trade.fiat} pesewas exceeds the ${limit.replace('_', ' ')} limit; ${remaining} pesewas remain`, {
        limit,
        limit_amount: limitAmount,
        used: usedAmount,
        requested: trade.fiat,
        remaining,
        currency: 'GHS',
      });
    };
    if (trade.fiat > limits.per_trade) refuse('per_trade', limits.per_trade, 0);
    if (usage.day + trade.fiat > limits.daily) refuse('daily', limits.daily, usage.day);
    if (usage.month + trade.fiat > limits.monthly) refuse('monthly', limits.monthly, usage.month);
    if (trade.side === 'buy' && trade.fiat > (usage.exposureCap ?? 0)) refuse('exposure_cap', usage.exposureCap ?? 0, 0);
  }

  /** The configured cap and the inventory it started from, when both are positive: else no buy is taken. */
  private capBase(asset: string, network: string): { base: number; initial: number } | undefined {
    const base = this.deps.config.exposure_cap[asset] ?? 0;
    const initial = this.deps.config.inventory[asset]?.[network] ?? 0;
    return initial > 0 && base > 0 ? { base, initial } : undefined;
  }
}

/** The largest buy the treasury takes with `inventory` on hand, in pesewas, under its configured cap. */
function capWith({ base, initial }: { base: number; initial: number }, inventory: number): number {
  // Sells can lift inventory above its start; the cap never rises above its configured value.
  return Math.min(base, Number((BigInt(base) * BigInt(Math.max(0, inventory))) / BigInt(initial)));
}
