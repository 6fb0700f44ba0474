// `expect_provider_calls:` counts the requests and status polls railyard made to each provider
// named; skipping a provider marked down is no call.

import type { TimelineEntry } from '../../kernel/timeline.ts';
import type { ScriptStep } from '../../scenarios/script-schema.ts';
import type { RunContext } from '../run-context.ts';
import { StepFailure } from '../step-failure.ts';

/** Calls railyard made to each provider so far: requests and status polls (skipping a down provider is no call). */
export function providerCalls(entries: readonly TimelineEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of entries) {
    if (e.from !== 'railyard' || e.to === 'merchant' || e.what.endsWith(': skipped down')) continue;
    counts[e.to] = (counts[e.to] ?? 0) + 1;
  }
  return counts;
}

export function runExpectProviderCallsStep(ctx: RunContext, step: Extract<ScriptStep, { expect_provider_calls: unknown }>): void {
  const counts = providerCalls(ctx.timeline.entries);
  const known = new Set(ctx.ry.router.list().map((r) => r.provider.name));
  const problems: string[] = [];
  for (const [provider, expected] of Object.entries(step.expect_provider_calls)) {
    const actual = counts[provider] ?? 0;
    if (actual !== expected) {
      problems.push(
        `at ${provider}: expected ${expected} call${expected === 1 ? '' : 's'}, got ${actual}${known.has(provider) ? '' : ` (no provider is named ${provider}; known: ${[...known].join(', ')})`}`,
      );
    }
  }
  if (problems.length) {
    const all = Object.entries(counts).map(([p, n]) => `${p} ${n}`);
    throw new StepFailure(`${problems.join('\n')}\nall calls so far: ${all.length ? all.join(', ') : 'none'}`);
  }
}
