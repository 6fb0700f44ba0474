// railyard/testing: an embeddable sandbox for a merchant's own test suite (docs/testing.md).
export { startRailyard, SANDBOX_SCENARIOS, type RailyardSandbox, type RailyardScenarios, type StartRailyardOptions } from './start-railyard.ts';
export {
  connectRailyard,
  type ConnectOptions,
  type RailyardClock,
  type RailyardConnection,
  type RailyardMerchant,
  type RailyardRequestOptions,
  type RailyardResponse,
} from './connect-railyard.ts';
export type { WaitForOptions, WebhookEvent, WebhookInbox } from './webhook-receiver.ts';
