// `expect_webhook:` counts the events the local receiver accepted (answered 2xx) with a valid
// signature, each event once however often it was retried.

import type { ScriptStep } from '../../scenarios/script-schema.ts';
import { describeMismatch, interpolate, partialMatch } from '../partial-match.ts';
import type { RunContext } from '../run-context.ts';
import { StepFailure } from '../step-failure.ts';
import type { ReceivedWebhook } from '../webhook-receiver.ts';

export function runExpectWebhookStep(ctx: RunContext, step: Extract<ScriptStep, { expect_webhook: unknown }>): void {
  const e = interpolate(step.expect_webhook, ctx.vars) as { type: string; data?: unknown; count?: number };
  const received = ctx.receiver?.received ?? [];
  const unverified = received.filter((w) => !w.verified);
  const note = unverified.length ? `; ${unverified.length} webhook${unverified.length === 1 ? '' : 's'} failed signature verification` : '';
  // Retries of one event count once; only webhooks the receiver accepted (2xx) and verified count.
  const accepted = new Map<string, ReceivedWebhook>();
  for (const w of received) if (w.verified && w.answered < 300 && !accepted.has(w.id)) accepted.set(w.id, w);
  const ofType = [...accepted.values()].filter((w) => w.type === e.type);
  const matching = e.data === undefined ? ofType : ofType.filter((w) => partialMatch(e.data, w.data) === null);
  if (e.count !== undefined) {
    if (matching.length !== e.count) {
      throw new StepFailure(
        `expected ${e.count} accepted ${e.type} webhook${e.count === 1 ? '' : 's'}${e.data !== undefined ? ' matching data' : ''}, got ${matching.length}` +
          (matching.length ? ` (${matching.map((w) => w.id).join(', ')})` : '') +
          `${describeReceived(received)}${note}`,
      );
    }
    return;
  }
  if (matching.length > 0) return;
  if (ofType.length === 0) throw new StepFailure(`no accepted ${e.type} webhook${describeReceived(received)}${note}`);
  const closest = ofType.map((w) => ({ w, m: partialMatch(e.data, w.data)! })).sort((a, b) => b.m.path.length - a.m.path.length)[0]!;
  throw new StepFailure(`no ${e.type} webhook matches among ${ofType.length}; the closest (${closest.w.id}) differs ${describeMismatch(closest.m, 'data')}${note}`);
}

function describeReceived(received: readonly ReceivedWebhook[]): string {
  if (received.length === 0) return '; no webhooks received';
  const shown = received.slice(-10).map((w) => `${w.type} ${w.id} (${w.answered}${w.verified ? '' : ', unverified'})`);
  return `; received${received.length > 10 ? ` (last 10 of ${received.length})` : ''}: ${shown.join(', ')}`;
}
