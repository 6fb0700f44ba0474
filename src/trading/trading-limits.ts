import type { AuthContext } from '../auth/api-key-service.ts';
import type { TradingConfig } from '../config/config.ts';
import type { Clock } from '../kernel/clock.ts';
import { LimitExceededError } from '../kernel/errors.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db } from '../store/db.ts';
import { TradeRepository } from '../store/repositories/trade-repository.ts';

/**
 * Per-merchant per-trade, daily and monthly limits (GHS, UTC calendar days and months), and the
 * treasury exposure cap on buys: min(exposure_cap[asset], exposure_cap[asset] × inventory_now /
 * inventory_at_start) for the quote's network, rounded down. The cap shrinks in step with the
 * inventory and never grows past its configured value.
 */
export class TradingLimits {
  private readonly trades = new TradeRepository();

  constructor(private readonly deps: { clock: Clock; ledger: Ledger; config: Pick<TradingConfig, 'limits' | 'inventory' | 'exposure_cap'> }) {}

  async check(db: Db, auth: AuthContext, trade: { side: 'buy' | 'sell'; asset: string; network: string; fiat: number }): Promise<void> {
    const { limits } = this.deps.config;
    const now = new Date(this.deps.clock.now());
    const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
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
    // Trades that count toward limits (everything not failed or reversed), today and this month, in one read.
    const used = await this.trades.fiatUsedSince(db, auth.environment, auth.merchantId, { dayStart, monthStart });
    if (used.day + trade.fiat > limits.daily) refuse('daily', limits.daily, used.day);
    if (used.month + trade.fiat > limits.monthly) refuse('monthly', limits.monthly, used.month);
    if (trade.side === 'buy') {
      const cap = await this.exposureCap(db, auth.environment, trade.asset, trade.network);
      if (trade.fiat > cap) refuse('exposure_cap', cap, 0);
    }
  }

  /** The largest buy of `asset` on `network` the treasury takes now, in pesewas. */
  async exposureCap(db: Db, environment: Environment, asset: string, network: string): Promise<number> {
    const base = this.deps.config.exposure_cap[asset] ?? 0;
    const initial = this.deps.config.inventory[asset]?.[network] ?? 0;
    if (initial <= 0 || base <= 0) return 0;
    const now = await this.deps.ledger.balance(db, environment, accounts.treasuryInventory(asset, network), asset);
    // Sells can lift inventory above its start; the cap never rises above its configured value.
    return Math.min(base, Number((BigInt(base) * BigInt(Math.max(0, now))) / BigInt(initial)));
  }
}
