// Pure ledger rules: a journal is a set of postings that nets to zero per currency.

export interface Posting {
  account: string;
  currency: string;
  /** Signed minor units: money into the account is positive, out of it negative. */
  amount: number;
}

export class UnbalancedJournalError extends Error {}

export function assertBalanced(postings: readonly Posting[]): void {
  if (postings.length < 2) throw new UnbalancedJournalError('a journal needs at least two postings');
  // BigInt sums: float addition near the safe-integer limit can make an unbalanced journal look balanced.
  const totals = new Map<string, bigint>();
  for (const p of postings) {
    if (!Number.isSafeInteger(p.amount) || p.amount === 0) {
      throw new UnbalancedJournalError(`posting to ${p.account} has a bad amount ${p.amount}`);
    }
    totals.set(p.currency, (totals.get(p.currency) ?? 0n) + BigInt(p.amount));
  }
  for (const [currency, total] of totals) {
    if (total !== 0n) throw new UnbalancedJournalError(`journal does not net to zero in ${currency}: ${total}`);
  }
}

/** The correcting journal: every posting with its sign flipped. */
export function reversePostings(postings: readonly Posting[]): Posting[] {
  return postings.map((p) => ({ ...p, amount: -p.amount }));
}
