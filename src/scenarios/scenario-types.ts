// What a scenario rule decides for one provider call. The mocks ask the engine; the engine
// answers from the first rule that matches, or undefined so the mock falls back to its
// upstream's own documented sandbox behaviour.

export interface RailQuery {
  provider: string; // 'mtn-momo' | 'hubtel' | 'bank-rail'
  operation: 'collect' | 'payout' | 'resolve';
  channel: 'momo' | 'bank';
  /** 233XXXXXXXXX when the number is a Ghana mobile number, otherwise as the caller sent it. */
  msisdn?: string;
  account_number?: string;
  bank_code?: string;
  network?: string;
  amount?: number; // minor units
}

export interface CallbackPlan {
  /** Seconds on the business clock after acceptance. */
  after_seconds: number;
  status: 'success' | 'failed';
  /** Upstream reason code when failed, e.g. NOT_ENOUGH_FUNDS (MTN), 2001 (Hubtel). */
  reason?: string;
  /** The upstream settles but never calls back: only a status poll finds out. */
  drop?: boolean;
}

export interface ProviderBehaviour {
  /**
   * accept: 2xx now, callback later. reject: the upstream refuses synchronously (4xx) with
   * `reason`. timeout: hold the request past the adapter's timeout. server_error: a 5xx.
   */
  respond: 'accept' | 'reject' | 'timeout' | 'server_error';
  reason?: string;
  http_status?: number;
  /** Real milliseconds to wait before answering. */
  latency_ms?: number;
  callback?: CallbackPlan;
  /** resolve only: false means "no such wallet or account". */
  resolves?: boolean;
  /** resolve only: the account holder's name; omitted means a seeded fake name. */
  name?: string;
}

export interface Decision {
  rule: string;
  behaviour: ProviderBehaviour;
}

export interface ScenarioEngine {
  decide(query: RailQuery): Decision | undefined;
}
