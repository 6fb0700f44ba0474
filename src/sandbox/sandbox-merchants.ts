import type { ApiKeyService, AuthContext, IssuedKey } from '../auth/api-key-service.ts';
import type { ServiceLadder } from '../auth/service-ladder.ts';
import type { Clock } from '../kernel/clock.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Store } from '../store/db.ts';

/**
 * Fresh sandbox merchants, each with a test key of its own: an empty wallet, no events, no
 * Idempotency-Keys, no webhook endpoints. Contract verification against a running railyard
 * builds every provider state on one, so no state sees another's money or history.
 */
export class SandboxMerchants {
  constructor(private readonly deps: { store: Store; clock: Clock; ids: IdGenerator; ladder: ServiceLadder; apiKeys: ApiKeyService }) {}

  /** A new merchant at the sandbox stage and its test key, with the scopes and role of the key that asked: a key mints nothing it does not hold. */
  async create(auth: AuthContext, name: string): Promise<{ merchantId: string; name: string; key: IssuedKey }> {
    const { deps } = this;
    return deps.store.transaction(async (tx) => {
      const merchantId = deps.ids.next('mch');
      await deps.ladder.ensureMerchant(tx, merchantId, name, deps.clock.now());
      const key = await deps.apiKeys.issue(tx, { merchantId, environment: 'test', scopes: [...auth.scopes], role: auth.role });
      return { merchantId, name, key };
    });
  }
}
