import { parseApiRule, type ApiRule, type ApiRuleInput } from './scenario-schema.ts';

// The fault profiles the sandbox control and `railyard faults on` switch on without a file: each
// is one `api:` rule, as a scenario file would write it.

export const FAULT_PROFILES = ['lost-responses', 'cut-connections', 'server-errors', 'slow-responses', 'rate-limit'] as const;
export type FaultProfile = (typeof FAULT_PROFILES)[number];

export interface FaultProfileRequest {
  profile: FaultProfile;
  /** `METHOD /route` as declared (`POST /api/v1/transfers`); default: every merchant request. */
  route?: string;
  probability?: number;
  every?: number;
  times?: number;
  /** server-errors: a 500 after the commit instead of a 503 before it; slow-responses: wait after the commit. */
  after_commit?: boolean;
  /** slow-responses: the delay (default 2000). */
  latency_ms?: number;
  /** rate-limit: requests per window (default 25, as Stripe's test mode allows a second). */
  requests?: number;
  /** rate-limit: the window (default 1). */
  per_seconds?: number;
}

/** `POST /api/v1/transfers` to its method and route; a bare path is any method. */
export function splitRoute(route: string): { method?: string; route: string } {
  const at = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(route);
  return at ? { method: at[1]!.toUpperCase(), route: at[2]! } : { route: route.trim() };
}

/** The rule a profile stands for; throws a ZodError when the options make no valid rule. */
export function faultProfileRule(req: FaultProfileRequest): ApiRule {
  const target = req.route ? splitRoute(req.route) : undefined;
  const input: ApiRuleInput = {
    name: `${req.profile}${req.route ? ` on ${target?.method ? `${target.method} ` : ''}${target!.route}` : ''}`,
    ...(target ? { match: { ...(target.method ? { method: target.method } : {}), route: target.route } } : { default: true }),
    ...(req.probability !== undefined ? { probability: req.probability } : {}),
    ...(req.every !== undefined ? { every: req.every } : {}),
    ...(req.times !== undefined ? { times: req.times } : {}),
  };
  switch (req.profile) {
    case 'lost-responses':
      input.drop = 'after_commit';
      break;
    case 'cut-connections':
      input.drop = 'before_commit';
      break;
    case 'server-errors':
      input.respond = req.after_commit ? { status: 500, before_commit: false } : { status: 503, before_commit: true };
      break;
    case 'slow-responses':
      input.latency_ms = { [req.after_commit ? 'after_commit' : 'before_commit']: req.latency_ms ?? 2000 };
      break;
    case 'rate-limit':
      input.rate_limit = { requests: req.requests ?? 25, per_seconds: req.per_seconds ?? 1 };
      break;
  }
  return parseApiRule(input);
}
