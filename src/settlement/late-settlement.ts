import type { Clock } from '../kernel/clock.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import type { Logger } from '../kernel/logger.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Db } from '../store/db.ts';
import { RailRepository } from '../store/repositories/rail-repository.ts';

const rails = new RailRepository();

/**
 * Reconciles a success from a provider the service abandoned after a timeout (or a malformed
 * answer, or a reset): that provider moved the money although another served the request, or
 * none did. The late movement is recorded as a journal through a suspense account and reversed
 * at once with its reversing journal (the customer is refunded, the payout recalled), and
 * `<object>.late_success_reversed` is emitted. The merchant's charge or transfer is untouched:
 * they see one. A second word from the same provider changes nothing.
 */
export async function reconcileLateSuccess(
  tx: Db,
  deps: { clock: Clock; ledger: Ledger; outbox: EventOutbox; logger: Logger },
  input: {
    object: string;
    /** collect: money came in from the provider; payout: it went out through it. */
    operation: 'collect' | 'payout';
    id: string;
    environment: Environment;
    merchantId: string;
    provider: string;
    amount: number;
    source: 'callback' | 'poll';
    snapshot: Record<string, unknown>;
  },
): Promise<'reversed' | 'ignored'> {
  const abandoned = await rails.abandonedAttempts(tx, input.id, input.provider);
  if (!abandoned) return 'ignored'; // that provider was never asked, or refused outright
  const already = await rails.lateSettlementExists(tx, input.object, input.id, input.provider);
  if (already) return 'ignored';

  // A collection brings money in from the provider; a payout sends it out through the provider.
  const sign = input.operation === 'collect' ? 1 : -1;
  const journal = await deps.ledger.post(tx, {
    environment: input.environment,
    kind: `${input.object}.late_success`,
    refType: input.object,
    refId: input.id,
    merchantId: input.merchantId,
    memo: `late success from abandoned provider ${input.provider}`,
    postings: [
      { account: accounts.providerSettlement(input.provider), currency: 'GHS', amount: -sign * input.amount },
      { account: accounts.lateSettlements(), currency: 'GHS', amount: sign * input.amount },
    ],
  });
  const reversal = await deps.ledger.reverse(tx, journal, `${input.object}.late_success_reversed`, `reverse the late ${input.operation === 'collect' ? 'collection' : 'payout'} by ${input.provider}`);
  await rails.insertLateSettlement(tx, {
    environment: input.environment,
    objectType: input.object,
    objectId: input.id,
    provider: input.provider,
    amount: input.amount,
    journalId: journal,
    reversalJournalId: reversal,
    source: input.source,
    createdAt: deps.clock.now(),
  });
  await deps.outbox.emit(tx, {
    environment: input.environment,
    merchantId: input.merchantId,
    type: `${input.object}.late_success_reversed`,
    objectType: input.object,
    object: { ...(input.snapshot as { id: string }), late_success: { provider: input.provider, amount: input.amount, reversed: true } },
  });
  deps.logger.warn('late success from an abandoned provider reversed', { object: input.id, provider: input.provider });
  return 'reversed';
}
