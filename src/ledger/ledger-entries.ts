import { DAY_MS, LedgerRepository, type LedgerEntryFilter, type LedgerEntryRow } from '../store/repositories/ledger-repository.ts';

// The merchant-facing reads of the ledger (entries, opening balances, active days); the SQL is the
// ledger repository's.

export { DAY_MS, type LedgerEntryFilter, type LedgerEntryRow };

const repo = new LedgerRepository();

/**
 * The postings of a merchant's journals (house accounts included: a journal is shown whole, so it
 * visibly nets to zero), keyset-paged on the posting sequence.
 */
export const ledgerEntries = repo.entries;

/** Per-account sums of a merchant's postings to the given accounts before an instant (exclusive). */
export const balancesBefore = repo.balancesBefore;

/** The distinct UTC days (epoch day numbers) on which a merchant's journals touched the given accounts, newest first. */
export const activeDays = repo.activeDays;
