import type { AuthContext } from '../auth/api-key-service.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import { iso } from '../kernel/clock.ts';
import { ProviderUnavailableError, ValidationError } from '../kernel/errors.ts';
import { toMajorString } from '../kernel/money.ts';
import { type Network, resolveNetwork } from '../kernel/msisdn.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Environment } from '../kernel/environment.ts';
import { RailError, type Channel, type CollectRequest, type RailAccepted, type RailNextAction, type RailOutcome, type RailProvider } from '../rails/provider-port.ts';
import type { Db } from '../store/db.ts';
import { CollectionRepository } from '../store/repositories/collection-repository.ts';
import { feeFor } from '../settlement/fees.ts';
import { SettlementMachine } from '../settlement/settlement-machine.ts';
import type { SettlementDeps } from '../settlement/settlement-deps.ts';
import { cardBrand } from '../kernel/card-number.ts';
import { CARD_TOKEN, type Collection, type CollectionInput } from './collections.schemas.ts';

export type { CollectionInput } from './collections.schemas.ts';

/** A row of the collections table. */
export interface CollectionRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  status: Collection['status'];
  amount: number;
  currency: 'GHS';
  fees: number;
  channel: Collection['channel'];
  msisdn: string | null;
  network: Network | null;
  card_brand: string | null;
  card_last4: string | null;
  card_token: string | null;
  account_number: string | null;
  bank_code: string | null;
  payment_link_id: string | null;
  description: string | null;
  /** JSON of a RailNextAction while the upstream waits for the customer. */
  next_action: string | null;
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  provider_reason: string | null;
  created_at: number;
  updated_at: number;
}

export interface CollectionServiceOptions {
  /** More to do in the transaction that settles a collection (a payment link counts a use). */
  onSettled?: (tx: Db, collection: CollectionRow) => Promise<void>;
}

/** Our channel names to the rails': a bank collection is a direct debit. */
const RAIL_CHANNEL: Record<Collection['channel'], Channel> = { momo: 'momo', card: 'card', bank: 'bank_debit' };

export const COLLECTION_INITIATED = 'Collection initiated: pending_approval until the customer approves (poll the collection or listen for collection.settled)';

export function presentCollection(row: CollectionRow): Collection {
  const nextAction = row.status === 'pending_approval' && row.next_action ? (JSON.parse(row.next_action) as RailNextAction) : null;
  return {
    id: row.id,
    object: 'collection',
    status: row.status,
    amount: row.amount,
    amount_major: toMajorString(row.amount, 'GHS'),
    currency: row.currency,
    fees: row.fees,
    amount_settled: row.amount - row.fees,
    channel: row.channel,
    customer:
      row.channel === 'momo'
        ? { msisdn: row.msisdn!, network: row.network! }
        : row.channel === 'card'
          ? { brand: row.card_brand, last4: row.card_last4, token: row.card_token }
          : { account_number: row.account_number!, bank_code: row.bank_code! },
    description: row.description,
    payment_link_id: row.payment_link_id,
    next_action: nextAction && { ...nextAction, submit_url: `/v1/collections/${row.id}/otp` },
    provider: row.provider,
    failure_reason: row.failure_reason,
    provider_reason: row.provider_reason,
    livemode: row.environment === 'live',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/**
 * /v1 collections over momo, card or a bank direct debit. Each settles through the rails like a
 * charge: pending_approval until the provider's final word, then settled (the wallet credited
 * net of the channel's fee) or failed.
 */
export class CollectionService {
  /** A collection's life once recorded: what the rails settle and recovery resumes. */
  readonly settlement: SettlementMachine<CollectionRow, Collection>;
  /**
   * Card numbers between the request and the processor's answer. A card number is never stored:
   * an initiation a stop interrupts is resumed by its reference alone, and fails
   * (card_details_unavailable) when the processor never took it.
   */
  private readonly cardNumbers = new Map<string, string>();
  private readonly collections = new CollectionRepository<CollectionRow>();

  constructor(
    private readonly deps: SettlementDeps,
    options: CollectionServiceOptions = {},
  ) {
    this.settlement = new SettlementMachine<CollectionRow, Collection>(deps, {
      object: 'collection',
      records: this.collections,
      idPrefix: 'col',
      operation: 'collect',
      pendingStatus: 'pending_approval',
      successStatus: 'settled',
      events: { pending: 'collection.pending', success: 'collection.settled', failed: 'collection.failed' },
      messages: {
        initiated: COLLECTION_INITIATED,
        declined: 'Collection declined by the provider',
        interrupted: 'Collection failed: initiation was interrupted',
      },
      present: presentCollection,
      route: (row) => this.route(row),
      // The provider collected the whole amount; the merchant gets it less the channel's fee.
      settledJournal: (row, provider) => ({
        kind: 'collection.settled',
        memo: `${row.channel} collection via ${provider}`,
        postings: [
          { account: accounts.providerSettlement(provider), currency: 'GHS', amount: -row.amount },
          { account: accounts.walletAvailable(row.merchant_id), currency: 'GHS', amount: row.amount - row.fees },
          ...(row.fees > 0 ? [{ account: accounts.feeRevenue(), currency: 'GHS', amount: row.fees }] : []),
        ],
      }),
      failedJournal: () => null, // nothing moved
      ...(options.onSettled ? { onSettled: options.onSettled } : {}),
    });
  }

  async create(input: CollectionInput, auth: AuthContext, claim: IdempotencyClaim, options: { paymentLinkId?: string } = {}): Promise<RouteResult> {
    const { store, clock, ids, idempotency } = this.deps;
    const fees = feeFor(this.deps.config.fees.collection[input.channel], input.amount);
    if (fees >= input.amount) {
      throw new ValidationError(`amount must be more than the fee of ${toMajorString(fees, 'GHS')} GHS`, [{ field: 'amount', message: `must exceed the fee of ${toMajorString(fees, 'GHS')}` }]);
    }
    const customer = this.customerColumns(input);
    const id = ids.next('col');
    const now = clock.now();
    if (customer.cardNumber) this.cardNumbers.set(id, customer.cardNumber);
    try {
      // READ COMMITTED, as a charge's: a claim by one conditional upsert, then fresh rows; nothing posted.
      await store.transaction(
        async (tx) => {
          await idempotency.claim(tx, claim, id);
          await this.collections.insert(tx, {
            id,
            environment: auth.environment,
            merchantId: auth.merchantId,
            amount: input.amount,
            fees,
            channel: input.channel,
            customer,
            paymentLinkId: options.paymentLinkId ?? null,
            description: input.description ?? null,
            now,
          });
          await this.settlement.track(tx, { id, environment: auth.environment, merchantId: auth.merchantId }, now);
        },
        { isolation: 'read committed' },
      );
      return await this.settlement.initiate(id, claim);
    } finally {
      this.cardNumbers.delete(id);
    }
  }

  get(auth: AuthContext, id: string): Promise<Collection> {
    return this.settlement.get(auth, id);
  }

  /**
   * Completes a card collection's OTP step at the processor that holds it, and applies its word
   * (a wrong OTP fails the collection). A collection no longer pending is returned as it stands,
   * so a double submit is harmless.
   */
  async submitOtp(auth: AuthContext, id: string, otp: string): Promise<Collection> {
    const collection = await this.get(auth, id);
    if (collection.status !== 'pending_approval') return collection;
    if (!collection.next_action) {
      throw new ValidationError(`Collection ${id} is not waiting for an OTP`, [{ field: 'otp', message: 'this collection has no OTP step' }]);
    }
    return this.askProvider(auth, id, (provider, providerReference) => provider.submitOtp?.({ reference: id, providerReference, otp }));
  }

  /**
   * Sandbox: answers a bank collection's mandate prompt as the account holder, through the
   * direct-debit upstream's own sandbox endpoint (which then calls back, as the holder's bank
   * would). A collection no longer pending is returned as it stands.
   */
  async decideMandate(auth: AuthContext, id: string, decision: 'approve' | 'decline'): Promise<Collection> {
    const collection = await this.get(auth, id);
    if (collection.channel !== 'bank') {
      throw new ValidationError(`Collection ${id} is a ${collection.channel} collection; only bank collections wait for a mandate`, [{ field: 'id', message: 'not a bank collection' }]);
    }
    if (collection.status !== 'pending_approval') return collection;
    return this.askProvider(auth, id, (provider, providerReference) => provider.decideMandate?.({ reference: id, providerReference, decision }));
  }

  /** Asks the provider serving a pending collection for its word on the customer's step, and applies it. */
  private async askProvider(auth: AuthContext, id: string, ask: (provider: RailProvider, providerReference: string) => Promise<RailOutcome> | undefined): Promise<Collection> {
    const row = (await this.settlement.row(this.deps.store, id))!;
    const provider = row.provider ? this.deps.router.get(row.provider) : undefined;
    if (!provider || !row.provider_reference) {
      throw new ValidationError(`Collection ${id} has no provider to answer yet`, [{ field: 'id', message: 'no provider has accepted it' }]);
    }
    let outcome: RailOutcome;
    try {
      const asked = ask(provider, row.provider_reference);
      if (!asked) throw new ValidationError(`${provider.name} takes no such step`, [{ field: 'id', message: `${provider.name} has no such step` }]);
      outcome = await asked;
    } catch (err) {
      if (!(err instanceof RailError)) throw err;
      // Refused on its merits (it settled meanwhile): its status says how.
      if (err.kind !== 'rejected') throw new ProviderUnavailableError(`${provider.name} could not be reached: ${err.message}`, { provider: provider.name, collection_id: id });
      outcome = await provider.status({ operation: 'collect', reference: id, providerReference: row.provider_reference }).catch(() => ({ status: 'pending' as const }));
    }
    // The step is done but the upstream has not decided yet (a Telecel voucher in, the customer
    // still to approve): nothing is left for the customer to submit.
    if (outcome.status === 'pending' && row.next_action) await this.collections.setNextAction(this.deps.store, id, null, this.deps.clock.now());
    await this.settlement.settle(id, provider.name, outcome, 'callback');
    return this.get(auth, id);
  }

  /** Sends a recorded collection to the rails of its channel. */
  private async route(row: CollectionRow): Promise<{ provider: { name: string }; result: RailAccepted }> {
    const { router, store, clock } = this.deps;
    const base = { reference: row.id, amount: row.amount, currency: 'GHS' as const, description: row.description ?? `railyard collection ${row.id}` };
    let request: CollectRequest;
    if (row.channel === 'momo') {
      request = { ...base, channel: 'momo', msisdn: row.msisdn!, network: row.network! };
    } else if (row.channel === 'card') {
      // Resumed without its number: the processor's own record of the reference is all there is.
      const number = this.cardNumbers.get(row.id);
      const card = number ? { number } : row.card_token ? { token: row.card_token } : undefined;
      request = { ...base, channel: 'card', ...(card ? { card } : {}) };
    } else {
      request = { ...base, channel: 'bank_debit', accountNumber: row.account_number!, bankCode: row.bank_code! };
    }
    const routed = await router.route(
      { environment: row.environment, channel: RAIL_CHANNEL[row.channel], ...(row.network ? { network: row.network } : {}), operation: 'collect', refType: 'collection', refId: row.id },
      (p) => p.collect(request),
    );
    if (routed.result.nextAction) {
      await this.collections.setNextAction(store, row.id, JSON.stringify(routed.result.nextAction), clock.now());
    }
    return routed;
  }

  private customerColumns(input: CollectionInput) {
    const none = { msisdn: null, network: null, cardBrand: null, cardLast4: null, cardToken: null, cardNumber: null, accountNumber: null, bankCode: null };
    switch (input.channel) {
      case 'momo': {
        const { msisdn, network } = resolveNetwork(input.customer, input.network);
        return { ...none, msisdn, network };
      }
      case 'card':
        return CARD_TOKEN.test(input.customer)
          ? { ...none, cardToken: input.customer }
          : { ...none, cardBrand: cardBrand(input.customer), cardLast4: input.customer.slice(-4), cardNumber: input.customer };
      case 'bank':
        return { ...none, accountNumber: input.customer.account_number, bankCode: input.customer.bank_code };
    }
  }
}
