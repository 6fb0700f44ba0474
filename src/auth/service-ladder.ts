import { LadderOutOfOrderError } from '../kernel/errors.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db, Store } from '../store/db.ts';
import { MerchantRepository } from '../store/repositories/merchant-repository.ts';

// The service ladder of the spec (sections 1 and 5): a merchant requests access, is enabled in the
// sandbox, then goes live. Each step is taken in turn; the stage gates trading per environment.

export const STAGES = ['none', 'requested', 'sandbox', 'live'] as const;
export type Stage = (typeof STAGES)[number];

export const LADDER_ACTIONS = ['request_access', 'enable_sandbox', 'go_live'] as const;
export type LadderAction = (typeof LADDER_ACTIONS)[number];

/** Each action, the stage it starts from and the stage it reaches. */
const STEPS: Record<LadderAction, { from: Stage; to: Stage }> = {
  request_access: { from: 'none', to: 'requested' },
  enable_sandbox: { from: 'requested', to: 'sandbox' },
  go_live: { from: 'sandbox', to: 'live' },
};

/** What each environment gives once the ladder reaches it. */
export const UNLOCKS: Record<Environment, string[]> = {
  test: ['quotes and trades with sk_test_ keys, against the simulated market'],
  live: ['quotes and trades with sk_live_ keys'],
};

export function nextAction(stage: Stage): LadderAction | null {
  return LADDER_ACTIONS.find((a) => STEPS[a].from === stage) ?? null;
}

/** Test keys trade from the sandbox stage on; live keys only at the live stage. */
export function tradingEnabled(stage: Stage, environment: Environment): boolean {
  return environment === 'test' ? stage === 'sandbox' || stage === 'live' : stage === 'live';
}

export interface MerchantView {
  id: string;
  name: string;
  stage: Stage;
  environments: Record<Environment, { enabled: boolean; unlocks: string[] }>;
  next_action: LadderAction | null;
  compliance: { trading_allowed: boolean; reason: string | null };
}

export class ServiceLadder {
  private readonly merchants = new MerchantRepository();

  constructor(private readonly deps: { store: Store }) {}

  /** The merchant's place on the ladder, read on the store. */
  view(merchantId: string, environment: Environment): Promise<MerchantView> {
    return this.viewOn(this.deps.store, merchantId, environment);
  }

  private async viewOn(db: Db, merchantId: string, environment: Environment): Promise<MerchantView> {
    const row = await this.merchants.find(db, merchantId);
    if (!row) throw new Error(`merchant ${merchantId} is missing`);
    const stage = row.trading_stage as Stage;
    const allowed = tradingEnabled(stage, environment);
    return {
      id: row.id,
      name: row.name,
      stage,
      environments: {
        test: { enabled: tradingEnabled(stage, 'test'), unlocks: UNLOCKS.test },
        live: { enabled: tradingEnabled(stage, 'live'), unlocks: UNLOCKS.live },
      },
      next_action: nextAction(stage),
      compliance: {
        trading_allowed: allowed,
        reason: allowed
          ? null
          : `Quotes and trades with ${environment} keys answer compliance_block (reason service_not_enabled) at stage ${stage}: ${
              environment === 'test' ? 'the sandbox must be enabled' : 'the merchant must go live'
            } first`,
      },
    };
  }

  /** Takes one step; any action but the next one is 409 ladder_out_of_order and changes nothing. */
  async advance(db: Db, merchantId: string, environment: Environment, action: LadderAction): Promise<MerchantView> {
    const current = await this.viewOn(db, merchantId, environment);
    const step = STEPS[action];
    if (current.stage !== step.from) {
      const expected = current.next_action;
      throw new LadderOutOfOrderError(
        expected === null ? `The merchant is already live; there is no further step (asked: ${action})` : `The merchant is at stage ${current.stage}; the next step is ${expected}, not ${action}`,
        { stage: current.stage, action, expected_action: expected },
      );
    }
    // The stage moves only if nobody moved it meanwhile.
    const changes = await this.merchants.moveStage(db, merchantId, step.from, step.to);
    if (changes === 0) return this.advance(db, merchantId, environment, action);
    return this.viewOn(db, merchantId, environment);
  }

  /** advance, in a transaction of its own. */
  advanceInTransaction(merchantId: string, environment: Environment, action: LadderAction): Promise<MerchantView> {
    return this.deps.store.transaction((tx) => this.advance(tx, merchantId, environment, action));
  }

  /** Sandbox: puts the merchant at any stage, whatever it was. */
  async setStage(merchantId: string, stage: Stage): Promise<void> {
    await this.merchants.setStage(this.deps.store, merchantId, stage);
  }

  /** The merchant's stage; `none` for a merchant not on record. */
  async stage(db: Db, merchantId: string): Promise<Stage> {
    return ((await this.merchants.tradingStage(db, merchantId))?.trading_stage as Stage | undefined) ?? 'none';
  }

  /** Creates the merchant, or renames it if it exists (seeding the sandbox merchant). */
  async ensureMerchant(db: Db, merchantId: string, name: string, now: number): Promise<void> {
    await this.merchants.upsert(db, { id: merchantId, name, now });
  }
}
