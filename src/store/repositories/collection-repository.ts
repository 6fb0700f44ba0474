import type { Db } from '../db.ts';
import { RailRecordRepository, type RailRecordColumns } from './rail-record-repository.ts';

/** The customer columns of a collection: a phone, a card or a bank account, the others null. */
export interface CollectionCustomerColumns {
  msisdn: string | null;
  network: string | null;
  cardBrand: string | null;
  cardLast4: string | null;
  cardToken: string | null;
  accountNumber: string | null;
  bankCode: string | null;
}

/** /v1 collections (momo, card, bank debit): inserts and their own columns; settling in RailRecordRepository. */
export class CollectionRepository<Row extends RailRecordColumns = RailRecordColumns> extends RailRecordRepository<Row> {
  constructor() {
    super('collections');
  }

  /** A new collection, pending the customer's approval. */
  async insert(
    db: Db,
    row: {
      id: string;
      environment: string;
      merchantId: string;
      amount: number;
      fees: number;
      channel: string;
      customer: CollectionCustomerColumns;
      paymentLinkId: string | null;
      description: string | null;
      now: number;
    },
  ): Promise<void> {
    const c = row.customer;
    await db.run(
      `INSERT INTO collections (id, environment, merchant_id, status, amount, currency, fees, channel, msisdn, network, card_brand, card_last4, card_token,
             account_number, bank_code, payment_link_id, description, created_at, updated_at)
           VALUES (?, ?, ?, 'pending_approval', ?, 'GHS', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.environment,
        row.merchantId,
        row.amount,
        row.fees,
        row.channel,
        c.msisdn,
        c.network,
        c.cardBrand,
        c.cardLast4,
        c.cardToken,
        c.accountNumber,
        c.bankCode,
        row.paymentLinkId,
        row.description,
        row.now,
        row.now,
      ],
    );
  }

  /** What the customer must do next (a 3-D Secure page, an OTP), as JSON. */
  async setNextAction(db: Db, id: string, nextAction: string | null, now: number): Promise<void> {
    await db.run('UPDATE collections SET next_action = ?, updated_at = ? WHERE id = ?', [nextAction, now, id]);
  }

  /** The payment link a collection was made through, if it exists. */
  async paymentLinkOf(db: Db, id: string): Promise<{ payment_link_id: string | null } | undefined> {
    return db.get<{ payment_link_id: string | null }>('SELECT payment_link_id FROM collections WHERE id = ?', [id]);
  }
}
