import type { AuthContext } from '../auth/api-key-service.ts';
import { ok } from '../http/envelope.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import { bankName } from '../kernel/banks.ts';
import { iso } from '../kernel/clock.ts';
import { noSuch } from '../http/find-by-id.ts';
import type { Network } from '../kernel/msisdn.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Environment } from '../ledger/ledger.ts';
import type { RailOutcome } from '../rails/provider-port.ts';
import type { Db } from '../store/db.ts';
import { resolveNetwork, type ChargeDeps } from './charge-service.ts';
import { failureReason } from './failure-reason.ts';
import { feeFor } from './fees.ts';
import { reconcileLateSuccess } from './late-settlement.ts';
import { resumeInitiation, runInitiation, type Initiation } from './rail-initiation.ts';
import type { CreateTransferBody, Transfer } from './wallet.schemas.ts';

interface TransferRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  status: Transfer['status'];
  amount: number;
  currency: 'GHS';
  fees: number;
  channel: 'momo' | 'bank';
  msisdn: string | null;
  network: Network | null;
  account_number: string | null;
  bank_code: string | null;
  bank_account_name: string | null;
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  provider_reason: string | null;
  created_at: number;
  updated_at: number;
}

export function presentTransfer(row: TransferRow): Transfer {
  return {
    id: row.id,
    object: 'transfer',
    status: row.status,
    amount: row.amount,
    fees: row.fees,
    total_debited: row.amount + row.fees,
    currency: row.currency,
    channel: row.channel,
    msisdn: row.msisdn,
    network: row.network,
    account_number: row.account_number,
    bank_code: row.bank_code,
    bank_name: row.bank_code ? (bankName(row.bank_code) ?? null) : null,
    bank_account_name: row.bank_account_name,
    provider: row.provider,
    failure_reason: row.failure_reason,
    provider_reason: row.provider_reason,
    livemode: row.environment === 'live',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export const TRANSFER_INITIATED = 'Transfer initiated: amount plus fees reserved; wait for transfer.success or transfer.failed';

/** Payouts: reserve amount + fees at initiation, release on success, refund on failure. */
export class TransferService {
  constructor(private readonly deps: ChargeDeps) {}

  async create(body: CreateTransferBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, ids, router, idempotency, ledger } = this.deps;
    const recipient =
      body.channel === 'momo'
        ? { ...resolveNetwork(body.msisdn, body.network), account_number: null, bank_code: null, bank_account_name: null }
        : { msisdn: null, network: undefined, account_number: body.account_number, bank_code: body.bank_code, bank_account_name: body.bank_account_name };
    const fees = feeFor(this.deps.config.fees.payout[body.channel], body.amount);
    const id = ids.next('trf');
    const now = clock.now();
    await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, id);
      await tx.run(
        `INSERT INTO transfers (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network,
           account_number, bank_code, bank_account_name, created_at, updated_at)
         VALUES (?, ?, ?, 'pending', ?, 'GHS', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, auth.environment, auth.merchantId, body.amount, fees, body.channel, recipient.msisdn, recipient.network ?? null,
          recipient.account_number, recipient.bank_code, recipient.bank_account_name, now, now],
      );
      await ledger.post(tx, {
        environment: auth.environment,
        kind: 'transfer.reserved',
        refType: 'transfer',
        refId: id,
        memo: `reserve ${body.channel} payout`,
        postings: [
          { account: accounts.walletAvailable(auth.merchantId), currency: 'GHS', amount: -(body.amount + fees) },
          { account: accounts.walletReserved(auth.merchantId), currency: 'GHS', amount: body.amount + fees },
        ],
      });
      await tx.run('INSERT INTO transactions (environment, merchant_id, object_type, object_id, created_at) VALUES (?, ?, ?, ?, ?)', [
        auth.environment, auth.merchantId, 'transfer', id, now,
      ]);
      await this.deps.scheduler.schedule(tx, {
        kind: 'rail.poll',
        runAt: now + this.deps.config.rails.poll_after_seconds * 1000,
        payload: { object: 'transfer', id, polls: 0 },
      });
    });

    const row = (await this.row(store, id))!;
    return runInitiation(this.deps, this.initiation(row, (tx, response) => idempotency.complete(tx, claim, response)));
  }

  /** Routing a recorded transfer to a provider, whether fresh or resumed after a stop. */
  private initiation(row: TransferRow, complete: Initiation<Transfer>['complete']): Initiation<Transfer> {
    const { id, environment, merchant_id: merchantId, channel, amount } = row;
    const network = row.network ?? undefined;
    return {
      object: 'transfer',
      id,
      environment,
      merchantId,
      pendingStatus: 'pending',
      messages: { initiated: TRANSFER_INITIATED, declined: 'Transfer declined by the provider; the reservation was refunded' },
      route: () =>
        this.deps.router.route({ environment, channel, network, operation: 'payout', refType: 'transfer', refId: id }, (p) =>
          p.payout({
            reference: id,
            amount,
            currency: 'GHS',
            channel,
            msisdn: row.msisdn ?? undefined,
            network,
            accountNumber: row.account_number ?? undefined,
            bankCode: row.bank_code ?? undefined,
            accountName: row.bank_account_name ?? undefined,
            description: `railyard transfer ${id}`,
          }),
        ),
      present: async (tx) => presentTransfer((await this.row(tx, id))!),
      fail: (tx, reason, providerReason) => this.fail(tx, id, reason, providerReason),
      complete,
    };
  }

  /** As ChargeService.resume: finishes an interrupted initiation and answers its Idempotency-Key. */
  async resume(id: string): Promise<void> {
    const row = await this.row(this.deps.store, id);
    if (!row) return;
    const complete: Initiation<Transfer>['complete'] = (tx, response) => this.deps.idempotency.completeForResource(tx, id, response);
    await resumeInitiation(this.deps, this.initiation(row, complete), row);
  }

  async get(db: Db, auth: AuthContext, id: string): Promise<Transfer> {
    const row = await db.get<TransferRow>('SELECT * FROM transfers WHERE id = ? AND environment = ? AND merchant_id = ?', [id, auth.environment, auth.merchantId]);
    if (!row) throw noSuch('transfer', id);
    return presentTransfer(row);
  }

  row(db: Db, id: string): Promise<TransferRow | undefined> {
    return db.get<TransferRow>('SELECT * FROM transfers WHERE id = ?', [id]);
  }

  async settle(transferId: string, providerName: string, outcome: RailOutcome, source: 'callback' | 'poll'): Promise<'settled' | 'ignored' | 'reversed'> {
    if (outcome.status === 'pending') return 'ignored';
    const { clock, ledger, outbox } = this.deps;
    return this.deps.store.transaction(async (tx) => {
      const row = await this.row(tx, transferId);
      if (!row) {
        this.deps.logger.warn('settlement for an unknown transfer', { transfer: transferId, provider: providerName, source });
        return 'ignored';
      }
      const late = () =>
        reconcileLateSuccess(tx, this.deps, {
          object: 'transfer', id: transferId, environment: row.environment, merchantId: row.merchant_id, provider: providerName,
          amount: row.amount, source, snapshot: presentTransfer(row),
        });
      if (row.provider !== null && row.provider !== providerName) return outcome.status === 'success' ? late() : 'ignored';
      if (row.status !== 'pending') {
        if (outcome.status === 'success' && row.status === 'failed') return late();
        this.deps.logger.info('settlement ignored', { transfer: transferId, provider: providerName, status: row.status, source });
        return 'ignored';
      }
      if (outcome.status === 'success') {
        await tx.run("UPDATE transfers SET status = 'success', provider = ?, updated_at = ? WHERE id = ?", [providerName, clock.now(), transferId]);
        const total = row.amount + row.fees;
        await ledger.post(tx, {
          environment: row.environment,
          kind: 'transfer.settled',
          refType: 'transfer',
          refId: transferId,
          memo: `${row.channel} payout via ${providerName}`,
          postings: [
            { account: accounts.walletReserved(row.merchant_id), currency: 'GHS', amount: -total },
            { account: accounts.providerSettlement(providerName), currency: 'GHS', amount: row.amount },
            ...(row.fees > 0 ? [{ account: accounts.feeRevenue(), currency: 'GHS', amount: row.fees }] : []),
          ],
        });
        const transfer = presentTransfer((await this.row(tx, transferId))!);
        await outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: 'transfer.success', objectType: 'transfer', object: transfer });
      } else {
        await tx.run('UPDATE transfers SET provider = ? WHERE id = ?', [providerName, transferId]);
        await this.fail(tx, transferId, failureReason(outcome.reason), outcome.reason);
      }
      return 'settled';
    });
  }

  /** As ChargeService.abandon: fail it (refunding the reservation) and finish its Idempotency-Key. */
  async abandon(tx: Db, transferId: string): Promise<void> {
    await this.fail(tx, transferId, 'initiation_interrupted', null);
    const transfer = presentTransfer((await this.row(tx, transferId))!);
    await this.deps.idempotency.completeForResource(tx, transferId, { status: 201, body: ok('Transfer failed: initiation was interrupted; the reservation was refunded', transfer) });
  }

  /** pending -> failed: the reservation goes back to available, and transfer.failed is emitted. */
  async fail(tx: Db, transferId: string, reason: string, providerReason: string | null): Promise<void> {
    const changed = await tx.run(
      "UPDATE transfers SET status = 'failed', failure_reason = ?, provider_reason = ?, updated_at = ? WHERE id = ? AND status = 'pending'",
      [reason, providerReason, this.deps.clock.now(), transferId],
    );
    if (changed.changes === 0) return;
    const row = (await this.row(tx, transferId))!;
    const total = row.amount + row.fees;
    await this.deps.ledger.post(tx, {
      environment: row.environment,
      kind: 'transfer.refunded',
      refType: 'transfer',
      refId: transferId,
      memo: `refund failed payout (${reason})`,
      postings: [
        { account: accounts.walletReserved(row.merchant_id), currency: 'GHS', amount: -total },
        { account: accounts.walletAvailable(row.merchant_id), currency: 'GHS', amount: total },
      ],
    });
    await this.deps.outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: 'transfer.failed', objectType: 'transfer', object: presentTransfer(row) });
  }
}
