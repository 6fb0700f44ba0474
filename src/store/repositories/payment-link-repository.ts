import type { Db, SqlValue } from '../db.ts';

/** A row of the payment_links table. */
export interface PaymentLinkRow {
  seq: number;
  id: string;
  slug: string;
  environment: 'test' | 'live';
  merchant_id: string;
  amount: number | null;
  min_amount: number | null;
  max_amount: number | null;
  currency: 'GHS';
  description: string;
  expires_at: number | null;
  usage_limit: number | null;
  completed_count: number;
  status: 'active' | 'deactivated' | 'completed';
  created_at: number;
  updated_at: number;
}

/** The states a list can ask for: the stored ones, and `expired` (an active link past its time). */
export type PaymentLinkListState = 'active' | 'expired' | 'deactivated' | 'completed';

/** Payment links per merchant and environment: the SQL of the payment link aggregate. */
export class PaymentLinkRepository {
  async insert(
    db: Db,
    row: {
      id: string;
      slug: string;
      environment: string;
      merchantId: string;
      amount: number | null;
      minAmount: number | null;
      maxAmount: number | null;
      description: string;
      expiresAt: number | null;
      usageLimit: number | null;
      now: number;
    },
  ): Promise<void> {
    await db.run(
      `INSERT INTO payment_links (id, slug, environment, merchant_id, amount, min_amount, max_amount, currency, description, expires_at, usage_limit, completed_count, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'GHS', ?, ?, ?, 0, 'active', ?, ?)`,
      [row.id, row.slug, row.environment, row.merchantId, row.amount, row.minAmount, row.maxAmount, row.description, row.expiresAt, row.usageLimit, row.now, row.now],
    );
  }

  find(db: Db, id: string): Promise<PaymentLinkRow | undefined> {
    return db.get<PaymentLinkRow>('SELECT * FROM payment_links WHERE id = ?', [id]);
  }

  findOwned(db: Db, scope: { environment: string; merchantId: string }, id: string): Promise<PaymentLinkRow | undefined> {
    return db.get<PaymentLinkRow>('SELECT * FROM payment_links WHERE id = ? AND environment = ? AND merchant_id = ?', [id, scope.environment, scope.merchantId]);
  }

  /** The link behind a hosted page, with its merchant's name. */
  findBySlug(db: Db, slug: string): Promise<(PaymentLinkRow & { merchant_name: string | null }) | undefined> {
    return db.get<PaymentLinkRow & { merchant_name: string | null }>('SELECT l.*, m.name AS merchant_name FROM payment_links l LEFT JOIN merchants m ON m.id = l.merchant_id WHERE l.slug = ?', [slug]);
  }

  /** A merchant's links, newest first, LIMIT `limit` (a page + 1, for keysetPage), below `before`, optionally in one state at `now`. */
  list(db: Db, query: { environment: string; merchantId: string; before?: number; status?: PaymentLinkListState; now: number; limit: number }): Promise<PaymentLinkRow[]> {
    const where = ['environment = ?', 'merchant_id = ?'];
    const args: SqlValue[] = [query.environment, query.merchantId];
    if (query.before !== undefined) {
      where.push('seq < ?');
      args.push(query.before);
    }
    // expired is not stored: it is an active link whose time has passed.
    if (query.status === 'active') {
      where.push("status = 'active' AND (expires_at IS NULL OR expires_at > ?)");
      args.push(query.now);
    } else if (query.status === 'expired') {
      where.push("status = 'active' AND expires_at IS NOT NULL AND expires_at <= ?");
      args.push(query.now);
    } else if (query.status) {
      where.push('status = ?');
      args.push(query.status);
    }
    return db.all<PaymentLinkRow>(`SELECT * FROM payment_links WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`, [...args, query.limit]);
  }

  async deactivate(db: Db, id: string, now: number): Promise<void> {
    await db.run("UPDATE payment_links SET status = 'deactivated', updated_at = ? WHERE id = ?", [now, id]);
  }

  async countUse(db: Db, id: string, now: number): Promise<void> {
    await db.run('UPDATE payment_links SET completed_count = completed_count + 1, updated_at = ? WHERE id = ?', [now, id]);
  }

  /** Completes an active link that reached its usage limit; true when this call completed it. */
  async completeIfUsedUp(db: Db, id: string): Promise<boolean> {
    const completed = await db.run("UPDATE payment_links SET status = 'completed' WHERE id = ? AND status = 'active' AND usage_limit IS NOT NULL AND completed_count >= usage_limit", [id]);
    return completed.changes > 0;
  }
}
