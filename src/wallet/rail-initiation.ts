import type { EventOutbox } from '../events/event-outbox.ts';
import { failure, ok } from '../http/envelope.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency-service.ts';
import type { Clock } from '../kernel/clock.ts';
import { ProviderUnavailableError } from '../kernel/errors.ts';
import type { Environment } from '../ledger/ledger.ts';
import { RailError, type RailAccepted } from '../rails/provider-port.ts';
import type { Db, Store } from '../store/db.ts';
import { failureReason } from './failure-reason.ts';

const TABLE = { charge: 'charges', transfer: 'transfers' } as const;

export interface Initiation<T extends { id: string; status: string }> {
  object: 'charge' | 'transfer';
  id: string;
  environment: Environment;
  merchantId: string;
  claim: IdempotencyClaim;
  /** The status a record keeps until the provider's final word. */
  pendingStatus: string;
  messages: { initiated: string; declined: string };
  route(): Promise<{ provider: { name: string }; result: RailAccepted }>;
  present(tx: Db): Promise<T>;
  fail(tx: Db, reason: string, providerReason: string | null): Promise<void>;
}

/**
 * The second half of every charge and transfer, once the record exists: route it to a provider,
 * then record what came of it and store the response under the Idempotency-Key, in one
 * transaction. Accepted: 201 and `<object>.pending`. Refused on its merits (a 4xx): it fails
 * at once, 201 with the failed record. No provider could take it: it fails, 502.
 */
export async function runInitiation<T extends { id: string; status: string }>(
  deps: { store: Store; clock: Clock; outbox: EventOutbox; idempotency: IdempotencyService },
  spec: Initiation<T>,
): Promise<RouteResult> {
  const finish = (work: (tx: Db) => Promise<RouteResult>) =>
    deps.store.transaction(async (tx) => {
      const response = await work(tx);
      await deps.idempotency.complete(tx, spec.claim, response);
      return response;
    });
  try {
    const { provider, result } = await spec.route();
    return await finish(async (tx) => {
      await tx.run(`UPDATE ${TABLE[spec.object]} SET provider = ?, provider_reference = ?, updated_at = ? WHERE id = ?`, [
        provider.name,
        result.providerReference,
        deps.clock.now(),
        spec.id,
      ]);
      const record = await spec.present(tx);
      // A callback may already have settled it while the provider's answer was on its way.
      if (record.status === spec.pendingStatus) {
        await deps.outbox.emit(tx, { environment: spec.environment, merchantId: spec.merchantId, type: `${spec.object}.pending`, objectType: spec.object, object: record });
      }
      return { status: 201, body: ok(spec.messages.initiated, record) };
    });
  } catch (err) {
    if (err instanceof ProviderUnavailableError) {
      return finish(async (tx) => {
        await spec.fail(tx, 'provider_unavailable', null);
        return { status: 502, body: failure(err.code, err.message, { ...err.details, [`${spec.object}_id`]: spec.id }) };
      });
    }
    if (err instanceof RailError) {
      return finish(async (tx) => {
        const reason = err.detail.providerCode ?? 'rejected';
        await spec.fail(tx, failureReason(reason), reason);
        return { status: 201, body: ok(spec.messages.declined, await spec.present(tx)) };
      });
    }
    throw err;
  }
}
