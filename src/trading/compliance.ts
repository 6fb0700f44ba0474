import type { AuthContext } from '../auth/api-key-service.ts';
import { type ServiceLadder, tradingEnabled, type Stage } from '../auth/service-ladder.ts';
import type { TradingConfig } from '../config/config.ts';
import { ComplianceBlockError } from '../kernel/errors.ts';
import type { Db } from '../store/db.ts';

export type TradingStage = Stage;
export type Screening = 'clear' | 'blocked' | 'review';

// EVM addresses are case-insensitive; base58 ones are not.
const key = (address: string) => (address.startsWith('0x') ? address.toLowerCase() : address);

/** The service ladder (requested -> sandbox -> live) and address screening. */
export class Compliance {
  private readonly blocked: Set<string>;
  private readonly review: Set<string>;
  constructor(
    config: Pick<TradingConfig, 'screening'>,
    private readonly ladder: ServiceLadder,
  ) {
    this.blocked = new Set(config.screening.blocked.map(key));
    this.review = new Set(config.screening.review.map(key));
  }

  screen(address: string): Screening {
    if (this.blocked.has(key(address))) return 'blocked';
    if (this.review.has(key(address))) return 'review';
    return 'clear';
  }

  /** Test keys trade from the sandbox stage on; live keys only at the live stage. */
  async assertTradingEnabled(db: Db, auth: AuthContext): Promise<void> {
    this.judgeStage(await this.ladder.stage(db, auth.merchantId), auth);
  }

  /** Refuses trading at a stage that does not enable the key's environment. */
  judgeStage(stage: Stage, auth: AuthContext): void {
    if (!tradingEnabled(stage, auth.environment)) {
      throw new ComplianceBlockError(`Trading is not enabled for this merchant in ${auth.environment} mode (service stage: ${stage})`, {
        reason: 'service_not_enabled',
        stage,
        environment: auth.environment,
      });
    }
  }
}
