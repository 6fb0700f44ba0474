// What a scenario rule decides for one provider call. The mocks ask the engine; the engine
// answers from the first rule that matches, or undefined so the mock falls back to its
// upstream's own documented sandbox behaviour.

export interface RailQuery {
  provider: string; // 'mtn-momo' | 'hubtel' | 'bank-rail'
  [field: string]: string | number | undefined;
  operation: 'collect' | 'payout' | 'resolve';
  channel: 'momo' | 'bank' | 'card' | 'bank_debit' | 'bills';
  /** 233XXXXXXXXX when the number is a Ghana mobile number, otherwise as the caller sent it. */
  msisdn?: string;
  account_number?: string;
  bank_code?: string;
  network?: string;
  amount?: number; // minor units
  /** card-processor: the card number (digits) or token the processor was asked to charge. */
  card?: string;
}

export interface CallbackPlan {
  /** Seconds on the business clock after acceptance. */
  after_seconds: number;
  status: 'success' | 'failed';
  /** Upstream reason code when failed, e.g. NOT_ENOUGH_FUNDS (MTN), 2001 (Hubtel). */
  reason?: string;
  /** The upstream settles but never calls back: only a status poll finds out. */
  drop?: boolean;
  /** The same callback is sent twice (a second time `duplicate_after_seconds` later, default 1). */
  duplicate?: boolean;
  duplicate_after_seconds?: number;
}

export interface ProviderBehaviour {
  /**
   * accept: 2xx now, callback later. reject: the upstream refuses synchronously (its own status:
   * a 4xx, or MTN's 500 NOT_ALLOWED family, which fails over like any 5xx) with
   * `reason`. timeout: hold the request past the adapter's timeout. server_error: a 5xx.
   * malformed: a 2xx whose body the adapter cannot read. reset: the connection is destroyed
   * without an answer.
   *
   * With timeout, malformed or reset, a `callback` means the upstream took the request after
   * all: its transaction exists and it calls back later (the late success of an abandoned
   * provider). Without one, no transaction is created.
   */
  respond: 'accept' | 'reject' | 'timeout' | 'server_error' | 'malformed' | 'reset';
  reason?: string;
  http_status?: number;
  /** Real milliseconds to wait before answering. */
  latency_ms?: number;
  callback?: CallbackPlan;
  /**
   * Further callbacks for the same transaction, each on its own schedule: a later contradicting
   * status, or callbacks arriving out of order. The transaction's final state is the main
   * callback's.
   */
  extra_callbacks?: CallbackPlan[];
  /** resolve only: false means "no such wallet or account". */
  resolves?: boolean;
  /** resolve only: the account holder's name; omitted means a seeded fake name. */
  name?: string;
}

export interface Decision {
  rule: string;
  /** The deciding rule's place in the engine's list; absent when a simulated wallet decided. */
  index?: number;
  behaviour: ProviderBehaviour;
}

export interface ScenarioEngine {
  decide(query: RailQuery): Decision | undefined;
  /** Decides against state shared by several instances, where the engine keeps it there. */
  decideShared?(query: RailQuery): Promise<Decision | undefined>;
}
