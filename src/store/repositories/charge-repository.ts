import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** Charges (momo collections into the wallet): their insert here, their settling in RailRecordRepository. */
export class ChargeRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('charges');
  }

  /**
   * A new charge, pending its provider: an append (no answer is read back), so the row as stored
   * is made here, every column as the table holds it.
   */
  async insert(db: Db, row: { id: string; environment: string; merchantId: string; amount: number; fees: number; msisdn: string; network: string; now: number }): Promise<Row> {
    await db.run(
      `INSERT INTO charges (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, created_at, updated_at)
         VALUES (?, ?, ?, 'pending_provider', ?, 'GHS', ?, 'momo', ?, ?, ?, ?)`,
      [row.id, row.environment, row.merchantId, row.amount, row.fees, row.msisdn, row.network, row.now, row.now],
    );
    const stored = {
      id: row.id,
      environment: row.environment,
      merchant_id: row.merchantId,
      status: 'pending_provider',
      amount: row.amount,
      currency: 'GHS',
      fees: row.fees,
      channel: 'momo',
      msisdn: row.msisdn,
      network: row.network,
      provider: null,
      provider_reference: null,
      failure_reason: null,
      provider_reason: null,
      created_at: row.now,
      updated_at: row.now,
    };
    return stored as unknown as Row;
  }
}
