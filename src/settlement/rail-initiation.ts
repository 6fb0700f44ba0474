import type { EventOutbox } from '../events/event-outbox.ts';
import { failure, ok } from '../http/envelope.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyService, StoredResponse } from '../idempotency/idempotency-service.ts';
import type { Clock } from '../kernel/clock.ts';
import { ProviderUnavailableError } from '../kernel/errors.ts';
import type { Environment } from '../kernel/environment.ts';
import { RailError, type RailAccepted } from '../rails/provider-port.ts';
import { commitWith, type Db, type Store } from '../store/db.ts';
import type { RailRecordColumns, RailRecordRepository } from '../store/repositories/rail-record-repository.ts';
import { RailRepository } from '../store/repositories/rail-repository.ts';
import { failureReason } from './failure-reason.ts';

const rails = new RailRepository();

export interface InitiationDeps {
  store: Store;
  clock: Clock;
  outbox: EventOutbox;
  idempotency: IdempotencyService;
}

export interface Initiation<T extends { id: string; status: string }> {
  object: string;
  /** The repository of its record's table. */
  records: Pick<RailRecordRepository, 'recordAcceptance'>;
  /** The event of an accepted initiation (`charge.pending`). */
  pendingEvent: string;
  id: string;
  environment: Environment;
  merchantId: string;
  /** The status a record keeps until the provider's final word. */
  pendingStatus: string;
  messages: { initiated: string; declined: string };
  route(): Promise<{ provider: { name: string }; result: RailAccepted }>;
  present(tx: Db): Promise<T>;
  /** The record as presented, from its row as just written. */
  presentRow(row: RailRecordColumns): T;
  fail(tx: Db, reason: string, providerReason: string | null): Promise<void>;
  /**
   * Records the provider's acceptance, its pending event and the stored answer in one statement,
   * if the record still stands as it was created: its answer then, else null (the transaction
   * below records it). Absent: the transaction always does.
   */
  acceptAtOnce?(provider: string, providerReference: string): Promise<RouteResult | null>;
  /** Stores the answer under the request's Idempotency-Key, in the transaction that records it. */
  complete(tx: Db, response: StoredResponse): Promise<void>;
}

/** What recovery needs to know of a record whose initiation a stop interrupted. */
export interface InterruptedRecord {
  status: string;
  provider: string | null;
}

/**
 * The second half of every charge and transfer, once the record exists: route it to a provider,
 * then record what came of it and store the response under the Idempotency-Key, in one
 * transaction. Accepted: 201 and `<object>.pending`. Refused on its merits (a 4xx): it fails
 * at once, 201 with the failed record. No provider could take it: it fails, 502.
 */
export async function runInitiation<T extends { id: string; status: string }>(deps: InitiationDeps, spec: Initiation<T>): Promise<RouteResult> {
  const finish = (work: (tx: Db) => Promise<RouteResult>) =>
    deps.store.transaction(async (tx) => {
      const response = await work(tx);
      await spec.complete(tx, response);
      return response;
    });
  try {
    const { provider, result } = await spec.route();
    const atOnce = await spec.acceptAtOnce?.(provider.name, result.providerReference);
    if (atOnce) return atOnce;
    // READ COMMITTED: the acceptance updates the record's own row, which a settlement committing
    // meanwhile is waited for and then seen (RETURNING), as a serializable retry would see it.
    return await deps.store.transaction(
      async (tx) => {
        // The row as updated (RETURNING): no read of it follows.
        const row = await spec.records.recordAcceptance(tx, spec.id, provider.name, result.providerReference, deps.clock.now());
        const record = row ? spec.presentRow(row) : await spec.present(tx);
        const response: RouteResult = { status: 201, body: ok(spec.messages.initiated, record) };
        // The event (unless a callback settled it while the provider's answer was on its way) and the
        // stored answer: independent writes, issued at once and not awaited, so they go with the COMMIT.
        commitWith(
          record.status === spec.pendingStatus
            ? deps.outbox.emit(tx, { environment: spec.environment, merchantId: spec.merchantId, type: spec.pendingEvent, objectType: spec.object, object: record })
            : undefined,
          spec.complete(tx, response),
        );
        return response;
      },
      { isolation: 'read committed' },
    );
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

/**
 * Finishes an initiation that a stop cut off between its record and its provider's answer, in
 * the manner of Stripe's recovery points, and stores the answer under its Idempotency-Key:
 * - settled meanwhile (its provider called back after the restart): the record as it stands;
 * - a provider's acceptance was recorded before the stop: finish with that provider, no call;
 * - otherwise route it again with the same references. A provider that took it before knows the
 *   reference and says so (MTN 409 RESOURCE_ALREADY_EXIST, Hubtel's used ClientReference, the bank
 *   rail's duplicate sessionId); the adapters read that as its acceptance. None can take it: 502,
 *   and the record fails (a transfer's reservation is refunded).
 */
export async function resumeInitiation<T extends { id: string; status: string }>(deps: InitiationDeps, spec: Initiation<T>, record: InterruptedRecord): Promise<void> {
  if (record.status !== spec.pendingStatus || record.provider !== null) {
    await deps.store.transaction(async (tx) => {
      const present = await spec.present(tx);
      await spec.complete(tx, { status: 201, body: ok(present.status === 'failed' ? spec.messages.declined : spec.messages.initiated, present) });
    });
    return;
  }
  const accepted = await rails.lastAccepted(deps.store, spec.object, spec.id);
  if (accepted?.provider_reference) {
    const recorded = { provider: { name: accepted.provider }, result: { providerReference: accepted.provider_reference } };
    await runInitiation(deps, { ...spec, route: async () => recorded });
    return;
  }
  await runInitiation(deps, spec);
}
