import type { AuthContext } from '../auth/api-key-service.ts';
import { noSuch } from '../http/find-by-id.ts';
import { DEFAULT_PAGE_SIZE } from '../http/pagination.ts';
import { ok } from '../http/envelope.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import type { Posting } from '../ledger/journal.ts';
import type { Environment } from '../kernel/environment.ts';
import type { RailAccepted, RailOutcome, StatusQuery } from '../rails/provider-port.ts';
import { RAIL_POLL, type PollPayload, type SettlementResult, type SettlementSource, type SettlementTarget, type SettlementView } from '../rails/settlement-target.ts';
import type { Db } from '../store/db.ts';
import { decodeCursor, keysetPage } from '../store/repositories/keyset-page.ts';
import type { RailRecordRepository } from '../store/repositories/rail-record-repository.ts';
import { TransactionRepository } from '../store/repositories/transaction-repository.ts';
import { recordRailNotice } from '../rails/rail-notice.ts';
import { failureReason } from './failure-reason.ts';
import { reconcileLateSuccess } from './late-settlement.ts';
import { resumeInitiation, runInitiation, type Initiation } from './rail-initiation.ts';
import type { SettlementDeps } from './settlement-deps.ts';

/** The columns every record a provider settles has (charges, transfers). */
export interface RailRecordRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  status: string;
  amount: number;
  fees: number;
  provider: string | null;
  provider_reference: string | null;
}

/** A ledger journal, less what the machine fills in (environment, refType, refId). */
export interface SettlementJournal {
  kind: string;
  memo: string;
  postings: Posting[];
}

/** The events of a record's life; by default `<object>.pending`, `<object>.success`, `<object>.failed`. */
export interface RailRecordEvents {
  pending: string;
  success: string;
  failed: string;
}

/** What tells a charge from a transfer (or a /v1 collection, payout or bill); the machine does the rest. */
export interface RailRecordKind<Row extends RailRecordRow, T extends { id: string; status: string }> {
  object: string;
  /** The repository of its table (the charge's, the transfer's, ...). */
  records: RailRecordRepository<Row>;
  idPrefix: string;
  operation: StatusQuery['operation'];
  /** The status a record keeps until the provider's final word. */
  pendingStatus: Row['status'];
  /** The status of a settled record: `success` unless said otherwise (the /v1 family says `settled`). */
  successStatus?: Row['status'];
  events?: RailRecordEvents;
  messages: { initiated: string; declined: string; interrupted: string };
  present(row: Row): T;
  /** Sends the record to a provider through the router. */
  route(row: Row): Promise<{ provider: { name: string }; result: RailAccepted }>;
  /** The journal of a success from the provider that serves the record. */
  settledJournal(row: Row, provider: string): SettlementJournal;
  /** The journal of a failure (a transfer's refund), or null when nothing moved. */
  failedJournal(row: Row, reason: string): SettlementJournal | null;
  /** More to do in the settling transaction, after the journal and before the event (a payment link's use). */
  onSettled?(tx: Db, row: Row, outcome: Extract<RailOutcome, { status: 'success' }>): Promise<void>;
}

/**
 * The one life of a charge or a transfer once its row exists: initiation through the router,
 * settlement by the provider that accepted it (callback or poll), failure, late-success reversal,
 * and recovery after a stop. It is the SettlementTarget the rails settle through.
 */
export class SettlementMachine<Row extends RailRecordRow, T extends { id: string; status: string } & Record<string, unknown>> implements SettlementTarget {
  readonly object: string;
  readonly idPrefix: string;
  readonly operation: StatusQuery['operation'];
  readonly events: RailRecordEvents;
  private readonly successStatus: string;
  private readonly records: RailRecordRepository<Row>;
  private readonly transactions = new TransactionRepository();

  constructor(
    private readonly deps: SettlementDeps,
    private readonly kind: RailRecordKind<Row, T>,
  ) {
    this.object = kind.object;
    this.idPrefix = kind.idPrefix;
    this.operation = kind.operation;
    this.events = kind.events ?? { pending: `${kind.object}.pending`, success: `${kind.object}.success`, failed: `${kind.object}.failed` };
    this.successStatus = kind.successStatus ?? 'success';
    this.records = kind.records;
  }

  row(db: Db, id: string): Promise<Row | undefined> {
    return this.records.find(db, id);
  }

  async view(db: Db, id: string): Promise<SettlementView | undefined> {
    const row = await this.row(db, id);
    return row && { provider: row.provider, providerReference: row.provider_reference, pending: row.status === this.kind.pendingStatus };
  }

  /** A merchant's own record, or not_found. */
  async get(auth: AuthContext, id: string): Promise<T> {
    const row = await this.records.findOwned(this.deps.store, auth, id);
    if (!row) throw noSuch(this.kind.object, id);
    return this.kind.present(row);
  }

  /**
   * The merchant's records of this kind, newest first, keyset-paged on their place in the
   * transactions list (stable under inserts), optionally of one status.
   */
  async list(auth: AuthContext, query: { cursor?: string; page_size?: number; status?: string }): Promise<{ items: T[]; nextCursor: string | null }> {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = await this.records.listByTransaction(this.deps.store, {
      environment: auth.environment,
      merchantId: auth.merchantId,
      objectType: this.kind.object,
      ...(before !== undefined ? { before } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      limit: pageSize + 1,
    });
    const { items, nextCursor } = keysetPage(rows, pageSize);
    return { items: items.map((row) => this.kind.present(row)), nextCursor };
  }

  /**
   * Lists a new record among the merchant's transactions and schedules its status poll, in the
   * transaction that creates it: durable from the first instant, so if no callback ever comes (or
   * we crash mid-call), the poll settles it.
   */
  async track(tx: Db, record: { id: string; environment: Environment; merchantId: string }, now: number): Promise<void> {
    const payload: PollPayload = { object: this.kind.object, id: record.id, polls: 0 };
    // Two independent writes, issued at once (one round trip on PostgreSQL).
    await Promise.all([
      this.transactions.insert(tx, { environment: record.environment, merchantId: record.merchantId, objectType: this.kind.object, objectId: record.id, createdAt: now }),
      this.deps.scheduler.schedule(tx, { kind: RAIL_POLL, runAt: now + this.deps.config.rails.poll_after_seconds * 1000, payload, partition: record.id }),
    ]);
  }

  /**
   * Routes a freshly recorded record and answers the request's Idempotency-Key (see runInitiation).
   * `recorded` is the row as its creating transaction stored it, when the caller has it: no read then.
   */
  async initiate(id: string, claim: IdempotencyClaim, recorded?: Row): Promise<RouteResult> {
    const row = recorded ?? (await this.row(this.deps.store, id))!;
    const initiation = this.initiation(row, (tx, response) => this.deps.idempotency.complete(tx, claim, response));
    // As created, the record's acceptance is known before it is written: on PostgreSQL it is one
    // statement with its event and stored answer (SQLite has no data-modifying WITH).
    if (recorded && this.deps.store.kind === 'postgres') initiation.acceptAtOnce = (provider, reference) => this.acceptAtOnce(recorded, claim, provider, reference);
    return runInitiation(this.deps, initiation);
  }

  /**
   * The acceptance of a record as it was created (`recorded`), with its pending event and the
   * answer under its Idempotency-Key, in one statement; null, with nothing written, when the record
   * changed meanwhile (a callback settled it while the provider's answer was on its way).
   */
  private async acceptAtOnce(recorded: Row, claim: IdempotencyClaim, provider: string, providerReference: string): Promise<RouteResult | null> {
    const { store, clock, outbox, idempotency } = this.deps;
    const now = clock.now();
    const record = this.kind.present({ ...recorded, provider, provider_reference: providerReference, updated_at: now });
    const response: RouteResult = { status: 201, body: ok(this.kind.messages.initiated, record) };
    const { row: event } = outbox.prepare({ environment: recorded.environment, merchantId: recorded.merchant_id, type: this.events.pending, objectType: this.kind.object, object: record });
    const accepted = await this.records.recordAcceptanceAnswered(
      store,
      { id: recorded.id, provider, providerReference, now, status: this.kind.pendingStatus, createdAt: (recorded as Row & { updated_at: number }).updated_at },
      event,
      idempotency.completion(claim, response),
    );
    return accepted ? response : null;
  }

  /** Finishes a record whose initiation a stop interrupted, and answers its Idempotency-Key (see resumeInitiation). */
  async resume(id: string): Promise<void> {
    const row = await this.row(this.deps.store, id);
    if (!row) return;
    const complete: Initiation<T>['complete'] = (tx, response) => this.deps.idempotency.completeForResource(tx, id, response);
    await resumeInitiation(this.deps, this.initiation(row, complete), row);
  }

  /** Routing a recorded record to a provider, whether fresh or resumed after a stop. */
  private initiation(row: Row, complete: Initiation<T>['complete']): Initiation<T> {
    const { id } = row;
    return {
      object: this.kind.object,
      records: this.records,
      pendingEvent: this.events.pending,
      id,
      environment: row.environment,
      merchantId: row.merchant_id,
      pendingStatus: this.kind.pendingStatus,
      messages: this.kind.messages,
      route: () => this.kind.route(row),
      present: async (tx) => this.kind.present((await this.row(tx, id))!),
      presentRow: (stored) => this.kind.present(stored as Row),
      fail: (tx, reason, providerReason) => this.fail(tx, id, reason, providerReason),
      complete,
    };
  }

  /**
   * Applies a provider's final word. Only the provider that accepted the record can settle it;
   * a second word on a settled record changes nothing (callbacks and polls may both arrive).
   */
  async settle(id: string, providerName: string, outcome: RailOutcome, source: SettlementSource): Promise<SettlementResult> {
    const { clock, logger } = this.deps;
    const { object } = this.kind;
    // Every word that reaches a known record is kept for its timeline, with what it did.
    const notice = async (tx: Db, row: Row, result: string) =>
      recordRailNotice(tx, {
        environment: row.environment,
        objectType: object,
        objectId: id,
        provider: providerName,
        source,
        status: outcome.status,
        reason: outcome.status === 'failed' ? outcome.reason : null,
        result,
        at: clock.now(),
      });
    if (outcome.status === 'pending') {
      const row = await this.row(this.deps.store, id);
      if (row) await notice(this.deps.store, row, 'pending');
      return 'ignored';
    }
    return this.deps.store.transaction(async (tx) => {
      const row = await this.row(tx, id);
      if (!row) {
        logger.warn(`settlement for an unknown ${object}`, { [object]: id, provider: providerName, source });
        return 'ignored';
      }
      const result = await this.apply(tx, row, providerName, outcome, source);
      await notice(tx, row, result);
      return result;
    });
  }

  /** settle() on a known record, in its transaction. */
  private async apply(tx: Db, row: Row, providerName: string, outcome: Extract<RailOutcome, { status: 'success' | 'failed' }>, source: SettlementSource): Promise<SettlementResult> {
    const { clock, ledger, outbox, logger } = this.deps;
    const { object, pendingStatus } = this.kind;
    const { id } = row;
    const late = () =>
      reconcileLateSuccess(tx, this.deps, {
        object,
        operation: this.kind.operation,
        id,
        environment: row.environment,
        merchantId: row.merchant_id,
        provider: providerName,
        amount: row.amount,
        source,
        snapshot: this.kind.present(row),
      });
    // Another provider serves this record: a success from this one is a late success of an
    // abandoned provider, to reverse; anything else from it means nothing.
    if (row.provider !== null && row.provider !== providerName) return outcome.status === 'success' ? late() : 'ignored';
    if (row.status !== pendingStatus) {
      // A duplicate, or a late success after the record failed at every provider.
      if (outcome.status === 'success' && row.status === 'failed') return late();
      logger.info('settlement ignored', { [object]: id, provider: providerName, status: row.status, source });
      return 'ignored';
    }
    if (outcome.status === 'success') {
      const now = clock.now();
      await this.records.markSettled(tx, id, this.successStatus, providerName, now);
      const journal = this.kind.settledJournal(row, providerName);
      await ledger.post(tx, { environment: row.environment, kind: journal.kind, refType: object, refId: id, memo: journal.memo, postings: journal.postings });
      // The row as markSettled left it, without reading it back; a kind with its own onSettled
      // may write more to it, so that row is read again.
      let settledRow = { ...row, status: this.successStatus, provider: providerName, updated_at: now } as Row;
      if (this.kind.onSettled) {
        await this.kind.onSettled(tx, row, outcome);
        settledRow = (await this.row(tx, id))!;
      }
      const settled = this.kind.present(settledRow);
      await outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: this.events.success, objectType: object, object: settled });
    } else {
      await this.records.setProvider(tx, id, providerName);
      await this.fail(tx, id, failureReason(outcome.reason), outcome.reason);
    }
    return 'settled';
  }

  /**
   * Recovery for a record no provider ever accepted (the process stopped mid-initiation): fail
   * it and finish its Idempotency-Key with that answer, so a retry gets a reply, not a 409.
   */
  async abandon(tx: Db, id: string): Promise<void> {
    await this.fail(tx, id, 'initiation_interrupted', null);
    const record = this.kind.present((await this.row(tx, id))!);
    await this.deps.idempotency.completeForResource(tx, id, { status: 201, body: ok(this.kind.messages.interrupted, record) });
  }

  /** pending -> failed, with its failure journal if any and its failed event (`<object>.failed`). */
  async fail(tx: Db, id: string, reason: string, providerReason: string | null): Promise<void> {
    const { object, pendingStatus } = this.kind;
    const changed = await this.records.markFailed(tx, id, pendingStatus, reason, providerReason, this.deps.clock.now());
    if (!changed) return;
    const row = (await this.row(tx, id))!;
    const journal = this.kind.failedJournal(row, reason);
    if (journal) {
      await this.deps.ledger.post(tx, { environment: row.environment, kind: journal.kind, refType: object, refId: id, memo: journal.memo, postings: journal.postings });
    }
    await this.deps.outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: this.events.failed, objectType: object, object: this.kind.present(row) });
  }
}
