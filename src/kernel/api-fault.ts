// What a sandbox fault rule (a scenario file's `api:` section, or the sandbox control) decides
// for one merchant request. scenarios/ decides it, http/ applies it, the inspector shows it: each
// imports these shapes from here, and app.ts joins them.

/** Where the route layer leaves the fault that fired on a request (res.locals), for the inspector. */
export const API_FAULT_LOCAL = 'apiFault';

/** What the inspector keeps of a fault: the rule, and whether the answer was dropped after the commit. */
export interface AppliedFault extends FiredRule {
  /** The work committed and the connection was cut instead of answering. */
  dropped_after_commit?: boolean;
}

/** What an api rule can see of one merchant request (after its key was authenticated). */
export interface ApiRequestFacts {
  method: string;
  /** The route as declared, express syntax: /api/v1/charges/:id */
  route: string;
  /** The path as sent, without the query string. */
  path: string;
  /** The API key's id (key_...). */
  keyId: string;
  /** Header lookup by name (any case). */
  header(name: string): string | undefined;
  /** The parsed JSON (or form) body. */
  body: unknown;
}

/** The rule that fired, as the inspector and the sandbox listing name it. */
export interface FiredRule {
  rule: string;
  /** Where the rule came from: a scenario file (and its index there), or the sandbox control. */
  file: string | null;
  index: number | null;
  /** What it did: rate_limit, respond, drop or latency. */
  action: 'rate_limit' | 'respond' | 'drop' | 'latency';
}

/** The decision for one request: headers to add to its answer, and the fault, if a rule fired. */
export interface ApiFaultVerdict {
  /** RateLimit-* headers of the rate limits the request passed (or hit). */
  headers: Record<string, string>;
  fault?: ApiFault;
}

export interface ApiFault {
  fired: FiredRule;
  /** 429: seconds until the key's window ends. */
  rateLimited?: { retryAfterSeconds: number; limit: number; windowSeconds: number };
  respond?: { status: 500 | 503; beforeCommit: boolean; message?: string };
  drop?: 'before_commit' | 'after_commit';
  latencyBeforeMs: number;
  latencyAfterMs: number;
}
