import type { Request, Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuthContext } from '../auth/api-key-service.ts';
import { API_FAULT_LOCAL, type ApiFault, type ApiFaultVerdict, type ApiRequestFacts, type AppliedFault } from '../kernel/api-fault.ts';
import { InjectedFaultError, RateLimitedError } from '../kernel/errors.ts';
import { failure } from './envelope.ts';

/**
 * Decides the fault for one request: the scenarios' api rule engine, as app.ts wires it. At once
 * when nothing is in force or the counts are in this process; a promise when they are the fleet's.
 */
export interface ApiFaultPolicy {
  decide(facts: ApiRequestFacts): ApiFaultVerdict | undefined | Promise<ApiFaultVerdict | undefined>;
}

/** What the route layer does next: go on to the handler, or stop (the connection was cut). */
export type FaultOutcome = 'proceed' | 'stop';

const GENERIC_500 = 'Something went wrong inside railyard; retry the request with the same Idempotency-Key';
const GENERIC_503 = 'railyard is temporarily unavailable; retry the request with the same Idempotency-Key';

function injectedMessage(fault: ApiFault): string {
  return fault.respond?.message ?? (fault.respond?.status === 500 ? GENERIC_500 : GENERIC_503);
}

/**
 * Applies the sandbox's fault rules to one authenticated merchant request, before its route runs.
 * Test keys only: a live key never meets an injected fault.
 *
 * Before the work: the latency, the 429 (thrown, so the error mapper answers it with the
 * envelope, Retry-After and the RateLimit-* headers), a 5xx with before_commit, a cut connection.
 * After it: the services commit the effect and its Idempotency-Key answer in one transaction
 * before the route writes anything, so the moment the answer is about to be written (res.end)
 * is after the commit. There the latency waits, a 5xx replaces the answer, or the connection is
 * cut with nothing written.
 */
export async function applyApiFaults(policy: ApiFaultPolicy, route: { method: string; path: string }, auth: AuthContext, req: Request, res: Response): Promise<FaultOutcome> {
  if (auth.environment !== 'test') return 'proceed';
  const decided = policy.decide({
    method: req.method,
    route: route.path,
    path: req.path,
    keyId: auth.keyId,
    header: (name) => req.get(name),
    body: req.body,
  });
  const verdict = decided instanceof Promise ? await decided : decided;
  if (!verdict) return 'proceed';
  res.set(verdict.headers);
  const fault = verdict.fault;
  if (!fault) return 'proceed';
  const applied: AppliedFault = { ...fault.fired };
  res.locals[API_FAULT_LOCAL] = applied;

  if (fault.latencyBeforeMs > 0) await sleep(fault.latencyBeforeMs);
  if (fault.rateLimited) {
    const { retryAfterSeconds, limit, windowSeconds } = fault.rateLimited;
    throw new RateLimitedError(
      `Too many requests with this API key: ${limit} per ${windowSeconds} s. Retry after ${retryAfterSeconds} s`,
      { limit, window_seconds: windowSeconds, retry_after_seconds: retryAfterSeconds },
      retryAfterSeconds,
    );
  }
  if (fault.respond?.beforeCommit) throw new InjectedFaultError(fault.respond.status, injectedMessage(fault));
  if (fault.drop === 'before_commit') {
    req.socket.destroy();
    return 'stop';
  }
  if (fault.latencyAfterMs > 0 || fault.respond || fault.drop === 'after_commit') holdAnswer(fault, applied, req, res);
  return 'proceed';
}

/** Wraps res.end: when the committed answer is about to be written, wait, replace it, or cut the connection. */
function holdAnswer(fault: ApiFault, applied: AppliedFault, req: Request, res: Response): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    // A streamed answer (its headers already out) is left alone.
    if (res.headersSent) return end(...args);
    const answer = () => {
      if (fault.drop === 'after_commit') {
        applied.dropped_after_commit = true;
        req.socket.destroy();
        return;
      }
      if (fault.respond) {
        const body = JSON.stringify(failure(fault.respond.status === 500 ? 'internal_error' : 'service_unavailable', injectedMessage(fault)));
        for (const name of res.getHeaderNames()) if (!name.toLowerCase().startsWith('ratelimit')) res.removeHeader(name);
        res.status(fault.respond.status);
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('Content-Length', String(Buffer.byteLength(body)));
        end(body);
        return;
      }
      end(...args);
    };
    if (fault.latencyAfterMs > 0) setTimeout(answer, fault.latencyAfterMs);
    else answer();
    return res;
  }) as Response['end'];
}
