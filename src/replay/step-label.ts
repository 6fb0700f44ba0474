// How steps are named in the timeline, the report and contract provider states.

import type { StepKind } from './replay-result.ts';
import type { ScriptStep } from '../scenarios/script-schema.ts';

export function stepKind(step: ScriptStep): StepKind {
  if ('request' in step) return 'request';
  if ('advance' in step) return 'advance';
  if ('expect_webhook' in step) return 'expect_webhook';
  if ('expect_ledger' in step) return 'expect_ledger';
  return 'expect_provider_calls';
}

/** `5s`, `0.25s`: at most millisecond precision. */
export function formatSeconds(s: number): string {
  return `${Number.isInteger(s) ? s : Number(s.toFixed(3))}s`;
}

/** The step's name, or a generated one: `step 4: expect_webhook charge.success`. */
export function stepLabel(step: ScriptStep, index: number): string {
  if (step.name) return `step ${index}: ${step.name}`;
  if ('request' in step) {
    const expect = step.expect ? (step.expect.status !== undefined ? ` expect ${step.expect.status}` : ' expect') : '';
    return `step ${index}: ${step.request.method} ${step.request.path}${expect}`;
  }
  if ('advance' in step) return `step ${index}: advance ${formatSeconds(step.advance)}`;
  if ('expect_webhook' in step) {
    return `step ${index}: expect_webhook ${step.expect_webhook.type}${step.expect_webhook.count !== undefined ? ` count ${step.expect_webhook.count}` : ''}`;
  }
  if ('expect_ledger' in step) return `step ${index}: expect_ledger`;
  return `step ${index}: expect_provider_calls ${Object.entries(step.expect_provider_calls)
    .map(([p, n]) => `${p}=${n}`)
    .join(' ')}`;
}
