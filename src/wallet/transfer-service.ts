import type { AuthContext } from '../auth/api-key-service.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import { bankName } from '../kernel/banks.ts';
import { iso } from '../kernel/clock.ts';
import { type Network, resolveNetwork } from '../kernel/msisdn.ts';
import type { Environment } from '../kernel/environment.ts';
import { TransferRepository } from '../store/repositories/transfer-repository.ts';
import { feeFor } from '../settlement/fees.ts';
import { reservedPayoutJournals, reservePayout, routeWalletPayout } from '../settlement/reserved-payout.ts';
import { SettlementMachine } from '../settlement/settlement-machine.ts';
import type { SettlementDeps } from '../settlement/settlement-deps.ts';
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
  /** A transfer's life once recorded: what the rails settle and recovery resumes. */
  readonly settlement: SettlementMachine<TransferRow, Transfer>;
  private readonly transfers = new TransferRepository<TransferRow>();

  constructor(private readonly deps: SettlementDeps) {
    this.settlement = new SettlementMachine<TransferRow, Transfer>(deps, {
      object: 'transfer',
      records: this.transfers,
      idPrefix: 'trf',
      operation: 'payout',
      pendingStatus: 'pending',
      messages: {
        initiated: TRANSFER_INITIATED,
        declined: 'Transfer declined by the provider; the reservation was refunded',
        interrupted: 'Transfer failed: initiation was interrupted; the reservation was refunded',
      },
      present: presentTransfer,
      route: (row) => routeWalletPayout(deps.router, row, 'transfer', `railyard transfer ${row.id}`),
      ...reservedPayoutJournals<TransferRow>('transfer', (row, provider) => `${row.channel} payout via ${provider}`),
    });
  }

  async create(body: CreateTransferBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, ids, idempotency, ledger } = this.deps;
    const recipient =
      body.channel === 'momo'
        ? { ...resolveNetwork(body.msisdn, body.network), account_number: null, bank_code: null, bank_account_name: null }
        : { msisdn: null, network: undefined, account_number: body.account_number, bank_code: body.bank_code, bank_account_name: body.bank_account_name };
    const fees = feeFor(this.deps.config.fees.payout[body.channel], body.amount);
    const id = ids.next('trf');
    const now = clock.now();
    await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, id);
      await this.transfers.insert(tx, {
        id,
        environment: auth.environment,
        merchantId: auth.merchantId,
        amount: body.amount,
        fees,
        channel: body.channel,
        msisdn: recipient.msisdn,
        network: recipient.network ?? null,
        accountNumber: recipient.account_number,
        bankCode: recipient.bank_code,
        bankAccountName: recipient.bank_account_name,
        now,
      });
      await reservePayout(tx, ledger, {
        object: 'transfer',
        id,
        environment: auth.environment,
        merchantId: auth.merchantId,
        amount: body.amount,
        fees,
        memo: `reserve ${body.channel} payout`,
      });
      await this.settlement.track(tx, { id, environment: auth.environment, merchantId: auth.merchantId }, now);
    });
    return this.settlement.initiate(id, claim);
  }

  get(auth: AuthContext, id: string): Promise<Transfer> {
    return this.settlement.get(auth, id);
  }
}
