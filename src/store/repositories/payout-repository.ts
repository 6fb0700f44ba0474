import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** A payout_bulks row: one batch of payouts and the items it refused, as JSON. */
export interface PayoutBulkRow {
  id: string;
  environment: 'test' | 'live';
  merchant_id: string;
  item_count: number;
  rejections: string;
  created_at: number;
}

/** /v1 payouts, single and in bulk batches; settling in RailRecordRepository. */
export class PayoutRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('payouts');
  }

  /** A new payout, pending; `bulk` when it is an item of a batch. */
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
      narration: string | null;
      bulk: { id: string; index: number } | null;
      now: number;
    },
  ): Promise<void> {
    await db.run(
      `INSERT INTO payouts (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network,
         account_number, bank_code, bank_account_name, narration, bulk_id, bulk_index, created_at, updated_at)
       VALUES (?, ?, ?, 'pending', ?, 'GHS', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.environment,
        row.merchantId,
        row.amount,
        row.fees,
        row.channel,
        row.msisdn,
        row.network,
        row.accountNumber,
        row.bankCode,
        row.bankAccountName,
        row.narration,
        row.bulk?.id ?? null,
        row.bulk?.index ?? null,
        row.now,
        row.now,
      ],
    );
  }

  async insertBulk(db: Db, row: { id: string; environment: string; merchantId: string; itemCount: number; rejections: string; createdAt: number }): Promise<void> {
    await db.run('INSERT INTO payout_bulks (id, environment, merchant_id, item_count, rejections, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      row.id,
      row.environment,
      row.merchantId,
      row.itemCount,
      row.rejections,
      row.createdAt,
    ]);
  }

  findBulk(db: Db, id: string): Promise<PayoutBulkRow | undefined> {
    return db.get<PayoutBulkRow>('SELECT * FROM payout_bulks WHERE id = ?', [id]);
  }

  findOwnedBulk(db: Db, scope: { environment: string; merchantId: string }, id: string): Promise<PayoutBulkRow | undefined> {
    return db.get<PayoutBulkRow>('SELECT * FROM payout_bulks WHERE id = ? AND environment = ? AND merchant_id = ?', [id, scope.environment, scope.merchantId]);
  }

  /** The ids of a batch's payouts, in item order. */
  async idsOfBulk(db: Db, bulkId: string): Promise<string[]> {
    const rows = await db.all<{ id: string }>('SELECT id FROM payouts WHERE bulk_id = ? ORDER BY bulk_index', [bulkId]);
    return rows.map((r) => r.id);
  }

  /** A batch's payouts, whole rows, in item order. */
  payoutsOfBulk<T = Row>(db: Db, bulkId: string): Promise<T[]> {
    return db.all<T>('SELECT * FROM payouts WHERE bulk_id = ? ORDER BY bulk_index', [bulkId]);
  }
}
