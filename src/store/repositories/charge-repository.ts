import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** Charges (momo collections into the wallet): their insert here, their settling in RailRecordRepository. */
export class ChargeRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('charges');
  }

  /** A new charge, pending its provider: the row as stored (RETURNING, so no read follows). */
  async insert(db: Db, row: { id: string; environment: string; merchantId: string; amount: number; fees: number; msisdn: string; network: string; now: number }): Promise<Row> {
    return (await db.get<Row>(
      `INSERT INTO charges (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, created_at, updated_at)
         VALUES (?, ?, ?, 'pending_provider', ?, 'GHS', ?, 'momo', ?, ?, ?, ?) RETURNING *`,
      [row.id, row.environment, row.merchantId, row.amount, row.fees, row.msisdn, row.network, row.now, row.now],
    ))!;
  }
}
