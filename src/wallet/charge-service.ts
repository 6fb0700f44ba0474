import type { AuthContext } from '../auth/api-key-service.ts';
import type { Config } from '../config/config.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import { ok } from '../http/envelope.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency-service.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { noSuch } from '../http/find-by-id.ts';
import { ValidationError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Logger } from '../kernel/logger.ts';
import { inferNetwork, normaliseMsisdn, type Network } from '../kernel/msisdn.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Environment, Ledger } from '../ledger/ledger.ts';
import type { RailOutcome } from '../rails/provider-port.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Db, Store } from '../store/db.ts';
import { failureReason } from './failure-reason.ts';
import { feeFor } from './fees.ts';
import { reconcileLateSuccess } from './late-settlement.ts';
import { resumeInitiation, runInitiation, type Initiation } from './rail-initiation.ts';
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

export function resolveNetwork(msisdn: string, override: Network | undefined): { msisdn: string; network: Network } {
  const normalised = normaliseMsisdn(msisdn);
  if (!normalised) throw new ValidationError('msisdn is not a Ghana mobile number', [{ field: 'msisdn', message: 'not a Ghana mobile number' }]);
  const network = override ?? inferNetwork(normalised);
  if (!network) {
    throw new ValidationError(`The network of ${msisdn} cannot be inferred from its prefix; send network (MTN, TELECEL or AT)`, [
      { field: 'network', message: 'required for this prefix' },
    ]);
  }
  return { msisdn: normalised, network };
}

export interface ChargeDeps {
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

export const CHARGE_INITIATED = 'Charge initiated: wait for the provider callback (poll the charge or listen for charge.success)';

/** Collections over mobile money: initiate, then settle on the provider's callback or a status poll. */
export class ChargeService {
  constructor(private readonly deps: ChargeDeps) {}

  async create(body: CreateChargeBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, ids, router, idempotency } = this.deps;
    const { msisdn, network } = resolveNetwork(body.msisdn, body.network);
    const fees = feeFor(this.deps.config.fees.collection.momo, body.amount);
    if (fees >= body.amount) {
      throw new ValidationError(`amount must be more than the fee of ${fees} pesewas`, [{ field: 'amount', message: `must exceed the fee of ${fees}` }]);
    }
    const id = ids.next('chg');
    const now = clock.now();
    await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, id);
      await tx.run(
        `INSERT INTO charges (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, created_at, updated_at)
         VALUES (?, ?, ?, 'pending_provider', ?, 'GHS', ?, 'momo', ?, ?, ?, ?)`,
        [id, auth.environment, auth.merchantId, body.amount, fees, msisdn, network, now, now],
      );
      await tx.run('INSERT INTO transactions (environment, merchant_id, object_type, object_id, created_at) VALUES (?, ?, ?, ?, ?)', [
        auth.environment, auth.merchantId, 'charge', id, now,
      ]);
      // Durable from the first instant: if no callback ever comes (or we crash mid-call), the
      // poll settles the charge.
      await this.deps.scheduler.schedule(tx, {
        kind: 'rail.poll',
        runAt: now + this.deps.config.rails.poll_after_seconds * 1000,
        payload: { object: 'charge', id, polls: 0 },
      });
    });

    const row = (await this.row(store, id))!;
    return runInitiation(this.deps, this.initiation(row, (tx, response) => idempotency.complete(tx, claim, response)));
  }

  /** Routing a recorded charge to a provider, whether fresh or resumed after a stop. */
  private initiation(row: ChargeRow, complete: Initiation<Charge>['complete']): Initiation<Charge> {
    const { id, environment, merchant_id: merchantId, msisdn, network, amount } = row;
    return {
      object: 'charge',
      id,
      environment,
      merchantId,
      pendingStatus: 'pending_provider',
      messages: { initiated: CHARGE_INITIATED, declined: 'Charge declined by the provider' },
      route: () =>
        this.deps.router.route({ environment, channel: 'momo', network, operation: 'collect', refType: 'charge', refId: id }, (p) =>
          p.collect({ reference: id, amount, currency: 'GHS', msisdn, network, description: `railyard charge ${id}` }),
        ),
      present: async (tx) => presentCharge((await this.row(tx, id))!),
      fail: (tx, reason, providerReason) => this.fail(tx, id, reason, providerReason),
      complete,
    };
  }

  /** Finishes a charge whose initiation a stop interrupted, and answers its Idempotency-Key (see resumeInitiation). */
  async resume(id: string): Promise<void> {
    const row = await this.row(this.deps.store, id);
    if (!row) return;
    const complete: Initiation<Charge>['complete'] = (tx, response) => this.deps.idempotency.completeForResource(tx, id, response);
    await resumeInitiation(this.deps, this.initiation(row, complete), row);
  }

  async get(db: Db, auth: AuthContext, id: string): Promise<Charge> {
    const row = await db.get<ChargeRow>('SELECT * FROM charges WHERE id = ? AND environment = ? AND merchant_id = ?', [id, auth.environment, auth.merchantId]);
    if (!row) throw noSuch('charge', id);
    return presentCharge(row);
  }

  row(db: Db, id: string): Promise<ChargeRow | undefined> {
    return db.get<ChargeRow>('SELECT * FROM charges WHERE id = ?', [id]);
  }

  /**
   * Applies a provider's final word. Only the provider that accepted the charge can settle it;
   * a second word on a settled charge changes nothing (callbacks and polls may both arrive).
   */
  async settle(chargeId: string, providerName: string, outcome: RailOutcome, source: 'callback' | 'poll'): Promise<'settled' | 'ignored' | 'reversed'> {
    if (outcome.status === 'pending') return 'ignored';
    const { clock, ledger, outbox } = this.deps;
    return this.deps.store.transaction(async (tx) => {
      const row = await this.row(tx, chargeId);
      if (!row) {
        this.deps.logger.warn('settlement for an unknown charge', { charge: chargeId, provider: providerName, source });
        return 'ignored';
      }
      if (row.provider !== null && row.provider !== providerName) {
        // Another provider serves this charge: a success from this one is a late success of an
        // abandoned provider, to reverse; anything else from it means nothing.
        if (outcome.status !== 'success') return 'ignored';
        return reconcileLateSuccess(tx, this.deps, {
          object: 'charge', id: chargeId, environment: row.environment, merchantId: row.merchant_id, provider: providerName,
          amount: row.amount, source, snapshot: presentCharge(row),
        });
      }
      if (row.status !== 'pending_provider') {
        // A duplicate, or a late success after the charge failed at every provider.
        if (outcome.status === 'success' && row.status === 'failed') {
          return reconcileLateSuccess(tx, this.deps, {
            object: 'charge', id: chargeId, environment: row.environment, merchantId: row.merchant_id, provider: providerName,
            amount: row.amount, source, snapshot: presentCharge(row),
          });
        }
        this.deps.logger.info('settlement ignored', { charge: chargeId, provider: providerName, status: row.status, source });
        return 'ignored';
      }
      const now = clock.now();
      if (outcome.status === 'success') {
        await tx.run("UPDATE charges SET status = 'success', provider = ?, updated_at = ? WHERE id = ?", [providerName, now, chargeId]);
        await ledger.post(tx, {
          environment: row.environment,
          kind: 'charge.settled',
          refType: 'charge',
          refId: chargeId,
          memo: `momo collection via ${providerName}`,
          postings: [
            { account: accounts.providerSettlement(providerName), currency: 'GHS', amount: -row.amount },
            { account: accounts.walletAvailable(row.merchant_id), currency: 'GHS', amount: row.amount - row.fees },
            ...(row.fees > 0 ? [{ account: accounts.feeRevenue(), currency: 'GHS', amount: row.fees }] : []),
          ],
        });
        const charge = presentCharge((await this.row(tx, chargeId))!);
        await outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: 'charge.success', objectType: 'charge', object: charge });
      } else {
        await tx.run('UPDATE charges SET provider = ? WHERE id = ?', [providerName, chargeId]);
        await this.fail(tx, chargeId, failureReason(outcome.reason), outcome.reason);
      }
      return 'settled';
    });
  }

  /**
   * Recovery for a charge no provider ever accepted (the process stopped mid-initiation): fail
   * it and finish its Idempotency-Key with that answer, so a retry gets a reply, not a 409.
   */
  async abandon(tx: Db, chargeId: string): Promise<void> {
    await this.fail(tx, chargeId, 'initiation_interrupted', null);
    const charge = presentCharge((await this.row(tx, chargeId))!);
    await this.deps.idempotency.completeForResource(tx, chargeId, { status: 201, body: ok('Charge failed: initiation was interrupted', charge) });
  }

  /** pending_provider -> failed, with its event. No posting: nothing moved. */
  async fail(tx: Db, chargeId: string, reason: string, providerReason: string | null): Promise<void> {
    const now = this.deps.clock.now();
    const changed = await tx.run(
      "UPDATE charges SET status = 'failed', failure_reason = ?, provider_reason = ?, updated_at = ? WHERE id = ? AND status = 'pending_provider'",
      [reason, providerReason, now, chargeId],
    );
    if (changed.changes === 0) return;
    const row = (await this.row(tx, chargeId))!;
    await this.deps.outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: 'charge.failed', objectType: 'charge', object: presentCharge(row) });
  }
}
