import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** /v1 bills (airtime, data, utilities): inserts and the vend's receipt; settling in RailRecordRepository. */
export class BillRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('bills');
  }

  async insert(
    db: Db,
    row: {
      id: string;
      environment: string;
      merchantId: string;
      category: string;
      biller: string;
      product: string | null;
      customer: string;
      amount: number;
      fees: number;
      now: number;
    },
  ): Promise<void> {
    await db.run(
      `INSERT INTO bills (id, environment, merchant_id, status, category, biller, product, customer, amount, currency, fees, created_at, updated_at)
         VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, 'GHS', ?, ?, ?)`,
      [row.id, row.environment, row.merchantId, row.category, row.biller, row.product, row.customer, row.amount, row.fees, row.now, row.now],
    );
  }

  /** The token (and its units) of a prepaid vend. */
  async setReceipt(db: Db, id: string, token: string | null, units: string | number | null): Promise<void> {
    await db.run('UPDATE bills SET token = ?, units = ? WHERE id = ?', [token, units, id]);
  }
}
