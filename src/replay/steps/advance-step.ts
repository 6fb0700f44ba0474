// `advance:` moves the virtual clock on; the jobs that fall due run in order.

import type { ScriptStep } from '../../scenarios/script-schema.ts';
import type { RunContext } from '../run-context.ts';
import { formatSeconds } from '../step-label.ts';

export async function runAdvanceStep(ctx: RunContext, step: Extract<ScriptStep, { advance: unknown }>): Promise<void> {
  ctx.timeline.record('clock', 'railyard', `advance +${formatSeconds(step.advance)}`);
  await ctx.ry.scheduler.advanceBy(Math.round(step.advance * 1000));
}
