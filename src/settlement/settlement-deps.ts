import type { Config } from '../config/config.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import type { IdempotencyService } from '../idempotency/idempotency-service.ts';
import type { Clock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Store } from '../store/db.ts';

/** What the settlement machine, and the services that hand it their money movements (charges, transfers, collections, payouts, bills), are built from. */
export interface SettlementDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  ledger: Ledger;
  outbox: EventOutbox;
  router: RailRouter;
  scheduler: Scheduler;
  idempotency: IdempotencyService;
  logger: Logger;
  config: Pick<Config, 'fees' | 'rails'>;
}
