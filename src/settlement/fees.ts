import type { FeeRule } from '../config/config.ts';
import { bpsOf } from '../kernel/money.ts';

/** bps of the amount (rounded up) plus the fixed part, clamped to [min, max]. */
export function feeFor(rule: FeeRule, amount: number): number {
  let fee = bpsOf(amount, rule.bps) + rule.fixed;
  if (fee < rule.min) fee = rule.min;
  if (rule.max !== null && fee > rule.max) fee = rule.max;
  return fee;
}
