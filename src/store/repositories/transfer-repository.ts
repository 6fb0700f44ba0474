import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** Transfers (wallet payouts, momo or bank): their insert here, their settling in RailRecordRepository. */
export class TransferRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('transfers');
  }

  /** A new transfer, pending. */
  async insert(
    db: Db,
    row: {
      id: string;
      environment: string;
      merchantId: string;
      amount: number;
      fees: number;
      channel: string;
      msisdn: string | null;
      network: string | null;
      accountNumber: string | null;
      bankCode: string | null;
      bankAccountName: string | null;
      now: number;
    },
  ): Promise<void> {
    await db.run(
      `INSERT INTO transfers (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network,
           account_number, bank_code, bank_account_name, created_at, updated_at)
         VALUES (?, ?, ?, 'pending', ?, 'GHS', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [row.id, row.environment, row.merchantId, row.amount, row.fees, row.channel, row.msisdn, row.network, row.accountNumber, row.bankCode, row.bankAccountName, row.now, row.now],
    );
  }
}
