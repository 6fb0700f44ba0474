import type { AuthContext } from '../auth/api-key-service.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Ledger, WalletBalance } from '../ledger/ledger.ts';
import type { Store } from '../store/db.ts';

/** Sandbox wallet funding, on its own store (the route does not see the store). */
export class SandboxFunding {
  constructor(private readonly deps: { store: Store; ledger: Ledger }) {}

  /** Credits the merchant's wallet out of thin air (a sandbox funding journal); the new balance. */
  async fund(auth: AuthContext, amount: number): Promise<WalletBalance> {
    const { deps } = this;
    await deps.store.transaction((tx) =>
      deps.ledger.post(tx, {
        environment: auth.environment,
        kind: 'sandbox.funding',
        refType: 'merchant',
        refId: auth.merchantId,
        memo: 'sandbox wallet funding',
        postings: [
          { account: accounts.sandboxFunding(), currency: 'GHS', amount: -amount },
          { account: accounts.walletAvailable(auth.merchantId), currency: 'GHS', amount },
        ],
      }),
    );
    return deps.ledger.wallet(auth.environment, auth.merchantId);
  }
}
