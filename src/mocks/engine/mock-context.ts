import type { Clock } from '../../kernel/clock.ts';
import type { Logger } from '../../kernel/logger.ts';
import type { ProviderHealth } from '../../rails/provider-health.ts';
import type { RuleMatchReport } from '../../scenarios/rule-explanation.ts';
import type { Decision, RailQuery, ScenarioEngine } from '../../scenarios/scenario-types.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import type { Store } from '../../store/db.ts';
import type { LocalCallbackReceiver } from './callback-sender.ts';
import type { MockTransactionBooks } from './mock-transaction-book.ts';

/** What every provider mock is given. */
export interface MockContext {
  clock: Clock;
  /** Callbacks are scheduled jobs on the business clock: scheduler.schedule(store, {...}). */
  scheduler: Scheduler;
  store: Store;
  scenarios: ScenarioEngine;
  health: ProviderHealth;
  logger: Logger;
  /** Transaction books that survive restarts: mocks deduplicate by the upstream's reference. */
  books: MockTransactionBooks;
  /** Upper bound, in real ms, on how long a `timeout` behaviour holds a request open. */
  maxHoldMs: number;
  /** Seconds until the callback when no scenario rule decides. */
  defaultCallbackSeconds: number;
  /** Real ms every mock waits for the receiver of a callback; CALLBACK_TIMEOUT_MS when omitted. */
  callbackTimeoutMs?: number;
  /**
   * The service's own base URL once it listens, for upstreams whose callbacks go to a URL set
   * once in their dashboard rather than one sent with each request (Paystack's webhook URL).
   */
  serviceBaseUrl?: () => string;
  /**
   * The service's own callback receiver, in process: a callback to a URL under serviceBaseUrl's
   * /internal/callbacks/ is handed to it instead of sent through a socket. Omitted: all go over HTTP.
   */
  localCallbacks?: LocalCallbackReceiver;
  /**
   * `railyard mock <name> --as-real-sandbox`: refuse what the upstream's real sandbox refuses
   * (its test identities, currency, environment) and answer as it documents; no scenario rules.
   */
  asRealSandbox?: boolean;
  /** Explains a rule decision, or why no rule decided (the requests inspector shows it); omitted: not explained. */
  explainMatch?: (query: RailQuery, decision: Decision | undefined) => RuleMatchReport;
}
