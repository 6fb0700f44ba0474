import type { Clock } from '../kernel/clock.ts';
import { InsufficientFundsError } from '../kernel/errors.ts';
import type { Environment } from '../kernel/environment.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Db, Store } from '../store/db.ts';
import { LedgerRepository } from '../store/repositories/ledger-repository.ts';
import { accounts, isNonNegativeAccount } from './accounts.ts';
import { assertBalanced, reversePostings, type Posting } from './journal.ts';

export interface JournalInput {
  environment: Environment;
  kind: string;
  refType: string;
  refId: string;
  memo: string;
  postings: Posting[];
  /** Whose journal it is; by default the merchant whose accounts it posts to (house journals have none). */
  merchantId?: string;
}

/** The merchant a journal belongs to: the one named, or the owner of its first merchant account. */
function journalMerchant(input: JournalInput): string | null {
  if (input.merchantId) return input.merchantId;
  for (const p of input.postings) {
    if (p.account.startsWith('merchant:')) return p.account.slice('merchant:'.length).split(':')[0]!;
  }
  return null;
}

export interface WalletBalance {
  currency: 'GHS';
  available: number;
  reserved: number;
}

/**
 * Double-entry ledger. Postings are the truth; each account's balance is their running sum, written
 * in the same transaction as the postings (so reading one costs a lookup, not a SUM over its history).
 */
export class Ledger {
  private readonly repo = new LedgerRepository();

  constructor(private readonly deps: { clock: Clock; ids: IdGenerator; store: Store }) {}

  /**
   * Writes one balanced journal inside the caller's transaction. A merchant account that would
   * go negative rejects the whole journal with insufficient_funds.
   */
  async post(tx: Db, input: JournalInput, reverses?: string): Promise<string> {
    assertBalanced(input.postings);
    for (const p of input.postings) {
      if (p.amount < 0 && isNonNegativeAccount(p.account)) {
        const balance = await this.balance(tx, input.environment, p.account, p.currency);
        if (balance + p.amount < 0) {
          const inventory = p.account.startsWith('treasury:inventory:');
          throw new InsufficientFundsError(inventory ? 'Treasury inventory is too low to fill this trade' : 'The wallet balance is too low for this operation', {
            available: balance,
            required: -p.amount,
            currency: p.currency,
            ...(inventory ? { source: 'inventory' } : {}),
          });
        }
      }
    }
    const id = this.deps.ids.next('jrn');
    const now = this.deps.clock.now();
    await this.repo.insertJournal(tx, {
      id,
      environment: input.environment,
      merchantId: journalMerchant(input),
      kind: input.kind,
      refType: input.refType,
      refId: input.refId,
      reverses: reverses ?? null,
      memo: input.memo,
      createdAt: now,
    });
    await this.repo.insertPostings(tx, id, input.environment, input.postings);
    await this.repo.addToBalances(tx, input.environment, input.postings);
    return id;
  }

  /** Posts the reversing journal of `journalId`. */
  async reverse(tx: Db, journalId: string, kind: string, memo: string): Promise<string> {
    const journal = await this.repo.findJournal(tx, journalId);
    if (!journal) throw new Error(`no journal ${journalId}`);
    const postings: Posting[] = await this.repo.postingsOf(tx, journalId);
    return this.post(
      tx,
      {
        environment: journal.environment,
        kind,
        refType: journal.ref_type,
        refId: journal.ref_id,
        memo,
        postings: reversePostings(postings),
        ...(journal.merchant_id ? { merchantId: journal.merchant_id } : {}),
      },
      journalId,
    );
  }

  /** The running sum of the account's postings, kept with them in each journal's transaction. */
  async balance(db: Db, environment: Environment, account: string, currency: string): Promise<number> {
    return this.repo.balance(db, environment, account, currency);
  }

  async wallet(environment: Environment, merchantId: string): Promise<WalletBalance> {
    const { store } = this.deps;
    return {
      currency: 'GHS',
      available: await this.balance(store, environment, accounts.walletAvailable(merchantId), 'GHS'),
      reserved: await this.balance(store, environment, accounts.walletReserved(merchantId), 'GHS'),
    };
  }

  /** Per-currency sums over every posting of an environment: all zero when the books balance. */
  async trialBalance(db: Db, environment: Environment): Promise<Record<string, number>> {
    return this.repo.trialBalance(db, environment);
  }
}
