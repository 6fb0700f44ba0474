import type { AuthContext } from '../auth/api-key-service.ts';
import { ok } from '../http/envelope.ts';
import { noSuch } from '../http/find-by-id.ts';
import { fieldIssues, type RouteResult } from '../http/route.ts';
import type { IdempotencyClaim, StoredResponse } from '../idempotency/idempotency-service.ts';
import { bankName } from '../kernel/banks.ts';
import { iso } from '../kernel/clock.ts';
import { ValidationError } from '../kernel/errors.ts';
import { toMajorString } from '../kernel/money.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Db } from '../store/db.ts';
import { PayoutRepository, type PayoutBulkRow } from '../store/repositories/payout-repository.ts';
import { resolveNetwork } from '../kernel/msisdn.ts';
import { feeFor } from '../settlement/fees.ts';
import { reservedPayoutJournals, reservePayout, routeWalletPayout, type WalletPayoutRow } from '../settlement/reserved-payout.ts';
import { SettlementMachine } from '../settlement/settlement-machine.ts';
import type { SettlementDeps } from '../settlement/settlement-deps.ts';
import { createPayoutBody, type BulkItem, type CreateBulkPayoutBody, type CreatePayoutBody, type Payout, type PayoutBulk } from './payouts.schemas.ts';

interface PayoutRow extends WalletPayoutRow {
  status: Payout['status'];
  currency: 'GHS';
  narration: string | null;
  bulk_id: string | null;
  bulk_index: number | null;
  failure_reason: string | null;
  provider_reason: string | null;
  created_at: number;
  updated_at: number;
}

type BulkRow = PayoutBulkRow;

type Rejection = Extract<BulkItem, { status: 'rejected' }>;

export function presentPayout(row: PayoutRow): Payout {
  return {
    id: row.id,
    object: 'payout',
    status: row.status,
    amount: row.amount,
    amount_major: toMajorString(row.amount, 'GHS'),
    currency: row.currency,
    fees: row.fees,
    total_debited: row.amount + row.fees,
    channel: row.channel,
    msisdn: row.msisdn,
    network: row.network,
    account_number: row.account_number,
    bank_code: row.bank_code,
    bank_name: row.bank_code ? (bankName(row.bank_code) ?? null) : null,
    account_name: row.bank_account_name,
    narration: row.narration,
    bulk_id: row.bulk_id,
    bulk_index: row.bulk_index,
    provider: row.provider,
    failure_reason: row.failure_reason,
    provider_reason: row.provider_reason,
    livemode: row.environment === 'live',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export const PAYOUT_INITIATED = 'Payout initiated: amount plus fees reserved; wait for payout.settled or payout.failed';

/**
 * A bulk item's own Idempotency-Key, derived from the bulk's: it records the item's initiation
 * like a single payout's key, so status polls and recovery treat each item as one. The space
 * keeps it apart from any key a merchant can send (visible ASCII only).
 */
function itemClaim(claim: IdempotencyClaim, index: number): IdempotencyClaim {
  return { ...claim, key: `${claim.key} item ${index}` };
}

/** /v1 payouts, single and bulk: each reserves amount + fees and settles like a transfer. */
export class PayoutService {
  /** A payout's life once recorded: what the rails settle and recovery resumes. */
  readonly settlement: SettlementMachine<PayoutRow, Payout>;
  private readonly payouts = new PayoutRepository<PayoutRow>();

  constructor(private readonly deps: SettlementDeps) {
    this.settlement = new SettlementMachine<PayoutRow, Payout>(deps, {
      object: 'payout',
      records: this.payouts,
      idPrefix: 'po',
      operation: 'payout',
      pendingStatus: 'pending',
      successStatus: 'settled',
      events: { pending: 'payout.pending', success: 'payout.settled', failed: 'payout.failed' },
      messages: {
        initiated: PAYOUT_INITIATED,
        declined: 'Payout declined by the provider; the reservation was refunded',
        interrupted: 'Payout failed: initiation was interrupted; the reservation was refunded',
      },
      present: presentPayout,
      route: (row) => routeWalletPayout(deps.router, row, 'payout', row.narration ?? `railyard payout ${row.id}`),
      ...reservedPayoutJournals<PayoutRow>('payout', (row, provider) => `${row.channel} payout via ${provider}`),
    });
  }

  async create(body: CreatePayoutBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const recipient = this.recipientOf(body);
    const id = this.deps.ids.next('po');
    await this.deps.store.transaction(async (tx) => {
      await this.deps.idempotency.claim(tx, claim, id);
      await this.record(tx, auth, id, body, recipient, null);
    });
    return this.settlement.initiate(id, claim);
  }

  get(auth: AuthContext, id: string): Promise<Payout> {
    return this.settlement.get(auth, id);
  }

  /**
   * Every item is checked on its own. The batch, its payouts, their reservations and every
   * refusal are written in one transaction with the Idempotency-Key (a stop loses or doubles
   * nothing); then each payout is routed, and the whole answer is stored under the key.
   */
  async createBulk(body: CreateBulkPayoutBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, ids, idempotency, ledger, clock } = this.deps;
    const bulkId = ids.next('pob');
    const accepted: { id: string; claim: IdempotencyClaim }[] = [];
    await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, bulkId);
      const rejections: Rejection[] = [];
      for (const [index, raw] of body.items.entries()) {
        const parsed = this.parseItem(raw);
        if (!parsed.ok) {
          rejections.push({ index, status: 'rejected', error: parsed.error });
          continue;
        }
        const item = parsed.body;
        const fees = this.feeOf(item);
        const available = await ledger.balance(tx, auth.environment, accounts.walletAvailable(auth.merchantId), 'GHS');
        if (available < item.amount + fees) {
          rejections.push({
            index,
            status: 'rejected',
            error: {
              code: 'insufficient_funds',
              message: 'The wallet balance is too low for this payout',
              details: { available, required: item.amount + fees, currency: 'GHS' },
            },
          });
          continue;
        }
        const id = ids.next('po');
        await this.record(tx, auth, id, item, parsed.recipient, { id: bulkId, index });
        const own = itemClaim(claim, index);
        await idempotency.claim(tx, own, id);
        accepted.push({ id, claim: own });
      }
      await this.payouts.insertBulk(tx, {
        id: bulkId,
        environment: auth.environment,
        merchantId: auth.merchantId,
        itemCount: body.items.length,
        rejections: JSON.stringify(rejections),
        createdAt: clock.now(),
      });
    });
    // One at a time, in index order: the upstream calls then come in the same order on every run,
    // so replays and contracts stay deterministic (the items are durable already; a slow batch
    // risks nothing).
    for (const item of accepted) await this.settlement.initiate(item.id, item.claim);
    return this.answerBulk(bulkId, (tx, response) => idempotency.complete(tx, claim, response));
  }

  /**
   * Finishes a bulk payout a stop cut off: its items still in flight are resumed (each through
   * the machine, once), then the batch's answer is stored under its Idempotency-Key.
   */
  async resumeBulk(bulkId: string): Promise<void> {
    const { store, idempotency } = this.deps;
    const items = await this.payouts.idsOfBulk(store, bulkId);
    for (const id of items) {
      // An item another recovery in this process already took is waited for, not left half done.
      if ((await idempotency.claimState(store, id)) !== 'settled') await idempotency.recover(id);
    }
    await this.answerBulk(bulkId, (tx, response) => idempotency.completeForResource(tx, bulkId, response));
  }

  async getBulk(auth: AuthContext, id: string): Promise<PayoutBulk> {
    const { store } = this.deps;
    const row = await this.payouts.findOwnedBulk(store, auth, id);
    if (!row) throw noSuch('payout_bulk', id);
    return this.presentBulk(store, row);
  }

  private async answerBulk(bulkId: string, complete: (tx: Db, response: StoredResponse) => Promise<void>): Promise<RouteResult> {
    return this.deps.store.transaction(async (tx) => {
      const row = (await this.payouts.findBulk(tx, bulkId))!;
      const bulk = await this.presentBulk(tx, row);
      const message = `Bulk payout accepted: ${bulk.accepted_count} of ${bulk.item_count} items became payouts, ${bulk.rejected_count} refused; each settles on its own (payout.settled or payout.failed)`;
      const response = { status: 201, body: ok(message, bulk) };
      await complete(tx, response);
      return response;
    });
  }

  private async presentBulk(db: Db, row: BulkRow): Promise<PayoutBulk> {
    const payouts = (await this.payouts.payoutsOfBulk<PayoutRow>(db, row.id)).map(presentPayout);
    const rejections = JSON.parse(row.rejections) as Rejection[];
    const items: BulkItem[] = [...payouts.map((payout): BulkItem => ({ index: payout.bulk_index!, status: 'accepted', payout })), ...rejections];
    items.sort((a, b) => a.index - b.index);
    const count = (status: Payout['status']) => payouts.filter((p) => p.status === status).length;
    return {
      id: row.id,
      object: 'payout_bulk',
      item_count: row.item_count,
      accepted_count: payouts.length,
      rejected_count: rejections.length,
      status_counts: { pending: count('pending'), settled: count('settled'), failed: count('failed') },
      total_amount: payouts.reduce((sum, p) => sum + p.amount, 0),
      total_fees: payouts.reduce((sum, p) => sum + p.fees, 0),
      currency: 'GHS',
      items,
      livemode: row.environment === 'live',
      created_at: iso(row.created_at),
    };
  }

  private parseItem(raw: unknown): { ok: true; body: CreatePayoutBody; recipient: ReturnType<PayoutService['recipientOf']> } | { ok: false; error: Rejection['error'] } {
    const parsed = createPayoutBody.safeParse(raw);
    try {
      if (parsed.success) return { ok: true, body: parsed.data, recipient: this.recipientOf(parsed.data) };
      const fields = fieldIssues(parsed.error, 'body');
      throw new ValidationError(`Invalid item: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, fields);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return { ok: false, error: { code: 'validation_error', message: err.message, details: err.details } };
    }
  }

  private recipientOf(body: CreatePayoutBody) {
    return body.channel === 'momo'
      ? { ...resolveNetwork(body.msisdn, body.network), account_number: null, bank_code: null, account_name: null }
      : { msisdn: null, network: null, account_number: body.account_number, bank_code: body.bank_code, account_name: body.account_name };
  }

  private feeOf(body: CreatePayoutBody): number {
    return feeFor(this.deps.config.fees.payout[body.channel], body.amount);
  }

  /** The payout row, its reservation (insufficient_funds when the wallet cannot cover it) and its tracking. */
  private async record(tx: Db, auth: AuthContext, id: string, body: CreatePayoutBody, recipient: ReturnType<PayoutService['recipientOf']>, bulk: { id: string; index: number } | null): Promise<void> {
    const now = this.deps.clock.now();
    const fees = this.feeOf(body);
    await this.payouts.insert(tx, {
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
      bankAccountName: recipient.account_name,
      narration: body.narration ?? null,
      bulk,
      now,
    });
    await reservePayout(tx, this.deps.ledger, {
      object: 'payout',
      id,
      environment: auth.environment,
      merchantId: auth.merchantId,
      amount: body.amount,
      fees,
      memo: `reserve ${body.channel} payout`,
    });
    await this.settlement.track(tx, { id, environment: auth.environment, merchantId: auth.merchantId }, now);
  }
}
