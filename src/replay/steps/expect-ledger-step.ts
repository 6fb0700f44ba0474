// `expect_ledger:` reads the test environment's wallet and account balances; unless
// `balanced: false`, every currency of both environments must net to zero.

import type { ScriptStep } from '../../scenarios/script-schema.ts';
import { describeMismatch, partialMatch } from '../partial-match.ts';
import type { RunContext } from '../run-context.ts';
import { StepFailure } from '../step-failure.ts';

export async function runExpectLedgerStep(ctx: RunContext, step: Extract<ScriptStep, { expect_ledger: unknown }>): Promise<void> {
  const { ry } = ctx;
  const e = step.expect_ledger;
  const problems: string[] = [];
  if (e.wallet) {
    const wallet = await ry.ledger.wallet('test', ry.sandbox.merchantId);
    const m = partialMatch(e.wallet, { available: wallet.available, reserved: wallet.reserved });
    if (m) problems.push(describeMismatch(m, 'wallet'));
  }
  for (const [account, amount] of Object.entries(e.accounts ?? {})) {
    const balance = await ry.ledger.balance(ry.store, 'test', account, 'GHS');
    if (balance !== amount) problems.push(`at account ${account}: expected ${amount}, got ${balance}`);
  }
  if (e.balanced) {
    for (const environment of ['test', 'live'] as const) {
      const trial = await ry.ledger.trialBalance(ry.store, environment);
      for (const [currency, total] of Object.entries(trial)) {
        if (total !== 0) problems.push(`the ${environment} ledger does not balance in ${currency}: postings sum to ${total}`);
      }
    }
  }
  if (problems.length) throw new StepFailure(problems.join('\n'));
}
