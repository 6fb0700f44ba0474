// `request:` sends one merchant request with the sandbox key, signed when its route is signed,
// with a fresh Idempotency-Key (`replay-step-<n>`) when its route is idempotent unless the step
// gives one; saves it under `as:`, lets the jobs due now run (webhooks fan out), then checks
// `expect:` (status, and a partial match on the body).

import { HttpConnectionError } from '../../kernel/http-exchange.ts';
import type { ScriptStep } from '../../scenarios/script-schema.ts';
import { describeMismatch, interpolate, partialMatch } from '../partial-match.ts';
import type { RunContext } from '../run-context.ts';
import { findRoute, sendToSandbox, summariseResponse } from '../sandbox-request.ts';
import { StepFailure } from '../step-failure.ts';

export async function runRequestStep(ctx: RunContext, step: Extract<ScriptStep, { request: unknown }>, index: number): Promise<void> {
  const r = step.request;
  const path = String(interpolate(r.path, ctx.vars));
  const body = r.body === undefined ? undefined : interpolate(r.body, ctx.vars);
  const route = findRoute(ctx.ry.routes, r.method, path);
  const explicitKey = r.idempotency_key === undefined ? undefined : String(interpolate(r.idempotency_key, ctx.vars));
  const idempotencyKey = explicitKey ?? (route?.idempotent ? `replay-step-${index}` : undefined);
  ctx.timeline.record('merchant', 'railyard', `${r.method} ${path}`);
  let res: Awaited<ReturnType<typeof sendToSandbox>>;
  try {
    res = await sendToSandbox(ctx, { method: r.method, path, body, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
  } catch (err) {
    // An `api:` rule that drops the answer cuts the connection: the step says whether it expected that.
    if (!(err instanceof HttpConnectionError)) throw err;
    ctx.timeline.record('railyard', 'merchant', 'no answer: the connection was cut');
    ctx.exchange = null;
    if (r.as) ctx.vars[r.as] = { status: null, body: null };
    await ctx.ry.scheduler.runDue();
    if (step.expect?.dropped !== true) throw new StepFailure('no answer: the connection was cut (expect: { dropped: true } if the scenario drops it)');
    return;
  }
  if (step.expect?.dropped === true) throw new StepFailure(`expected the connection to be cut, got ${res.status}`);
  const summary = summariseResponse(res.body);
  ctx.timeline.record('railyard', 'merchant', `${res.status}${summary ? ` ${summary}` : ''}${res.replayed ? ' (replayed)' : ''}`);
  ctx.exchange = {
    method: r.method,
    path,
    pathTemplate: r.path,
    body,
    bodyTemplate: r.body,
    idempotent: route?.idempotent === true,
    status: res.status,
    contentType: res.contentType,
    response: res.body,
  };
  if (r.as) ctx.vars[r.as] = { status: res.status, body: res.body };
  // Let the jobs due now run: events fan out into webhook deliveries, in order.
  await ctx.ry.scheduler.runDue();
  if (!step.expect) return;
  const expected = interpolate(step.expect, ctx.vars) as { status?: number; body?: unknown };
  const problems: string[] = [];
  if (expected.status !== undefined && expected.status !== res.status) {
    problems.push(`at status: expected ${expected.status}, got ${res.status}${summary ? ` (${summary})` : ''}`);
  }
  if (expected.body !== undefined) {
    const m = partialMatch(expected.body, res.body);
    if (m) problems.push(describeMismatch(m, 'body'));
  }
  if (problems.length) throw new StepFailure(problems.join('\n'));
}
