import type { Network } from '../kernel/msisdn.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Environment } from '../kernel/environment.ts';
import type { RailRouter } from '../rails/rail-router.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Db } from '../store/db.ts';
import type { RailRecordKind, RailRecordRow } from './settlement-machine.ts';

// What every money-out record shares (a transfer, a /v1 payout, a bill): amount + fees are
// reserved at creation, paid from the reservation to the provider (and the house its fee) on
// success, and given back to available on failure.

/** The reservation of amount + fees, in the transaction that creates the record. */
export function reservePayout(
  tx: Db,
  ledger: Ledger,
  record: { object: string; id: string; environment: Environment; merchantId: string; amount: number; fees: number; memo: string },
): Promise<string> {
  const total = record.amount + record.fees;
  return ledger.post(tx, {
    environment: record.environment,
    kind: `${record.object}.reserved`,
    refType: record.object,
    refId: record.id,
    memo: record.memo,
    postings: [
      { account: accounts.walletAvailable(record.merchantId), currency: 'GHS', amount: -total },
      { account: accounts.walletReserved(record.merchantId), currency: 'GHS', amount: total },
    ],
  });
}

/** A reserved record's settled and refund journals (`<object>.settled`, `<object>.refunded`). */
export function reservedPayoutJournals<Row extends RailRecordRow>(
  object: string,
  settledMemo: (row: Row, provider: string) => string,
  refundMemo: (row: Row, reason: string) => string = (_row, reason) => `refund failed payout (${reason})`,
): Pick<RailRecordKind<Row, never>, 'settledJournal' | 'failedJournal'> {
  return {
    // The reservation pays the provider the amount and the house its fee.
    settledJournal: (row, provider) => ({
      kind: `${object}.settled`,
      memo: settledMemo(row, provider),
      postings: [
        { account: accounts.walletReserved(row.merchant_id), currency: 'GHS', amount: -(row.amount + row.fees) },
        { account: accounts.providerSettlement(provider), currency: 'GHS', amount: row.amount },
        ...(row.fees > 0 ? [{ account: accounts.feeRevenue(), currency: 'GHS', amount: row.fees }] : []),
      ],
    }),
    // The reservation goes back to available.
    failedJournal: (row, reason) => ({
      kind: `${object}.refunded`,
      memo: refundMemo(row, reason),
      postings: [
        { account: accounts.walletReserved(row.merchant_id), currency: 'GHS', amount: -(row.amount + row.fees) },
        { account: accounts.walletAvailable(row.merchant_id), currency: 'GHS', amount: row.amount + row.fees },
      ],
    }),
  };
}

/** The recipient columns a momo or bank payout row has (transfers and /v1 payouts alike). */
export interface WalletPayoutRow extends RailRecordRow {
  channel: 'momo' | 'bank';
  msisdn: string | null;
  network: Network | null;
  account_number: string | null;
  bank_code: string | null;
  bank_account_name: string | null;
}

/** Sends a momo or bank payout through the router, with failover. */
export function routeWalletPayout(router: RailRouter, row: WalletPayoutRow, refType: string, description: string) {
  const { id, environment, channel, amount } = row;
  const network = row.network ?? undefined;
  return router.route({ environment, channel, network, operation: 'payout', refType, refId: id }, (p) =>
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
      description,
    }),
  );
}
