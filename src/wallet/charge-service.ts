import type { AuthContext } from '../auth/api-key-service.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import { iso } from '../kernel/clock.ts';
import { ValidationError } from '../kernel/errors.ts';
import { resolveNetwork, type Network } from '../kernel/msisdn.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Environment } from '../kernel/environment.ts';
import { isDuplicateKey } from '../store/db.ts';
import { ChargeRepository } from '../store/repositories/charge-repository.ts';
import { feeFor } from '../settlement/fees.ts';
import { SettlementMachine } from '../settlement/settlement-machine.ts';
import type { SettlementDeps } from '../settlement/settlement-deps.ts';
import type { Charge, CreateChargeBody } from './wallet.schemas.ts';

interface ChargeRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  status: Charge['status'];
  amount: number;
  currency: 'GHS';
  fees: number;
  channel: 'momo';
  msisdn: string;
  network: Network;
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  provider_reason: string | null;
  created_at: number;
  updated_at: number;
}

export function presentCharge(row: ChargeRow): Charge {
  return {
    id: row.id,
    object: 'charge',
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    fees: row.fees,
    amount_settled: row.amount - row.fees,
    channel: row.channel,
    msisdn: row.msisdn,
    network: row.network,
    provider: row.provider,
    failure_reason: row.failure_reason,
    provider_reason: row.provider_reason,
    livemode: row.environment === 'live',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export const CHARGE_INITIATED = 'Charge initiated: wait for the provider callback (poll the charge or listen for charge.success)';

/** Collections over mobile money: initiate, then settle on the provider's callback or a status poll. */
export class ChargeService {
  /** A charge's life once recorded: what the rails settle and recovery resumes. */
  readonly settlement: SettlementMachine<ChargeRow, Charge>;
  private readonly charges = new ChargeRepository<ChargeRow>();

  constructor(private readonly deps: SettlementDeps) {
    this.settlement = new SettlementMachine<ChargeRow, Charge>(deps, {
      object: 'charge',
      records: this.charges,
      idPrefix: 'chg',
      operation: 'collect',
      pendingStatus: 'pending_provider',
      messages: {
        initiated: CHARGE_INITIATED,
        declined: 'Charge declined by the provider',
        interrupted: 'Charge failed: initiation was interrupted',
      },
      present: presentCharge,
      route: ({ id, environment, msisdn, network, amount }) =>
        deps.router.route({ environment, channel: 'momo', network, operation: 'collect', refType: 'charge', refId: id }, (p) =>
          p.collect({ reference: id, amount, currency: 'GHS', msisdn, network, description: `railyard charge ${id}` }),
        ),
      // The provider collected the whole amount; the merchant gets it less the fee.
      settledJournal: (row, provider) => ({
        kind: 'charge.settled',
        memo: `momo collection via ${provider}`,
        postings: [
          { account: accounts.providerSettlement(provider), currency: 'GHS', amount: -row.amount },
          { account: accounts.walletAvailable(row.merchant_id), currency: 'GHS', amount: row.amount - row.fees },
          ...(row.fees > 0 ? [{ account: accounts.feeRevenue(), currency: 'GHS', amount: row.fees }] : []),
        ],
      }),
      failedJournal: () => null, // nothing moved
    });
  }

  async create(body: CreateChargeBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, ids, idempotency } = this.deps;
    const { msisdn, network } = resolveNetwork(body.msisdn, body.network);
    const fees = feeFor(this.deps.config.fees.collection.momo, body.amount);
    if (fees >= body.amount) {
      throw new ValidationError(`amount must be more than the fee of ${fees} pesewas`, [{ field: 'amount', message: `must exceed the fee of ${fees}` }]);
    }
    const id = ids.next('chg');
    const now = clock.now();
    // The claim, the charge, its transactions row and its poll job, issued at once. A key no row
    // held at its lookup is claimed by an append, and then all four are appends: the transaction
    // is append-only, committed with other charges' (on PostgreSQL, each table's rows in one
    // insert), and a twin that claimed the key meanwhile fails it with a duplicate key. A key whose
    // row expired is claimed over it by one conditional upsert (READ COMMITTED: a concurrent claim
    // of the key waits for it, then finds it taken), and a lost claim throws. Nothing stands then.
    const byAppend = idempotency.claimsByAppend(claim);
    const record = { id, environment: auth.environment, merchantId: auth.merchantId };
    const row = await store
      .transaction(
        async (tx) => {
          const [, inserted] = await Promise.all([
            byAppend ? idempotency.appendClaim(tx, claim, id) : idempotency.claim(tx, claim, id),
            this.charges.insert(tx, { ...record, amount: body.amount, fees, msisdn, network, now }),
            this.settlement.track(tx, record, now),
          ]);
          return inserted;
        },
        byAppend ? { appendOnly: true } : { isolation: 'read committed' },
      )
      .catch((error: unknown) => (byAppend && isDuplicateKey(error, 'idempotency_keys') ? idempotency.lostClaim(store, claim) : Promise.reject(error)));
    return this.settlement.initiate(id, claim, row);
  }

  get(auth: AuthContext, id: string): Promise<Charge> {
    return this.settlement.get(auth, id);
  }
}
