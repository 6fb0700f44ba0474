import type { AuthContext } from '../auth/api-key-service.ts';
import type { Config } from '../config/config.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import { failure, ok } from '../http/envelope.ts';
import { decodeCursor, DEFAULT_PAGE_SIZE, page } from '../http/pagination.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency-service.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { ComplianceBlockError, NotFoundError, RateExpiredError, ValidationError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Logger } from '../kernel/logger.ts';
import { accounts } from '../ledger/accounts.ts';
import type { Posting } from '../ledger/journal.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Db, Store } from '../store/db.ts';
import { LedgerRepository } from '../store/repositories/ledger-repository.ts';
import { QuoteRepository } from '../store/repositories/quote-repository.ts';
import { TradeRepository, type TradeRecord } from '../store/repositories/trade-repository.ts';
import { TransactionRepository } from '../store/repositories/transaction-repository.ts';
import { addressProblem, makeAddress, makeTransactionId } from './assets.ts';
import type { Compliance } from './compliance.ts';
import type { Asset, PriceFeed } from './price-feed.ts';
import type { QuoteService } from './quote-service.ts';
import { fiatForAsset, rateToNumber } from './rate-math.ts';
import type { TradingLimits } from './trading-limits.ts';
import { orderListFilter } from './order-list-filter.ts';
import type { ExecuteBody, Trade } from './trading.schemas.ts';

type Status = Trade['status'];

/** A trades row, with the columns this service narrows to its own types. */
export type TradeRow = Omit<TradeRecord, 'environment' | 'side' | 'asset' | 'status'> & {
  environment: Environment;
  side: 'buy' | 'sell';
  asset: Asset;
  status: Status;
};

// Statuses whose change is announced as trade.<status>; under_review is announced as
// compliance.review_required instead.
const ANNOUNCED: ReadonlySet<Status> = new Set(['created', 'pending_payment', 'pending_confirmation', 'completed', 'settled', 'failed', 'reversed']);

export interface TradeDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  ledger: Ledger;
  outbox: EventOutbox;
  scheduler: Scheduler;
  idempotency: IdempotencyService;
  feed: PriceFeed;
  quotes: QuoteService;
  compliance: Compliance;
  limits: TradingLimits;
  logger: Logger;
  config: Pick<Config, 'trading'>;
}

export interface TradeListQuery {
  cursor?: string;
  page_size?: number;
  status?: Status;
  side?: 'buy' | 'sell';
  asset?: Asset;
  created_from?: string;
  created_to?: string;
}

/**
 * Executes quotes and walks trades through their lives. A buy settles at once from the wallet.
 * A sell waits for the on-chain deposit, then its confirmations, then credits the wallet. Every
 * step is one transaction: state, history, ledger journal and event together.
 */
export class TradeService {
  private readonly repo = new TradeRepository();
  private readonly quoteRepo = new QuoteRepository();
  private readonly transactions = new TransactionRepository();
  private readonly journals = new LedgerRepository();

  constructor(private readonly deps: TradeDeps) {
    deps.scheduler.register('trade.confirm', (p: { id: string }) => this.confirmDeposit(p.id));
    deps.scheduler.register('trade.deposit_deadline', (p: { id: string }) => this.depositDeadline(p.id));
  }

  requiredConfirmations(network: string): number {
    return this.deps.config.trading.confirmations[network] ?? 12;
  }

  async present(db: Db, row: TradeRow): Promise<Trade> {
    const history = await this.repo.statusHistory(db, row.id);
    // Confirmations are counted for sells (the deposit); a buy's delivery is not tracked.
    const required = row.side === 'sell' ? this.requiredConfirmations(row.network) : 0;
    let confirmations = row.confirmations;
    if (row.status === 'pending_confirmation' && row.deposited_at !== null) {
      const blockMs = (this.deps.config.trading.block_seconds[row.network] ?? 10) * 1000;
      confirmations = Math.min(required, Math.floor((this.deps.clock.now() - row.deposited_at) / blockMs));
    }
    return {
      reference: row.id,
      object: 'trade',
      status: row.status,
      side: row.side,
      asset: row.asset,
      network: row.network,
      asset_amount: row.asset_amount,
      net_fiat_amount: row.net_fiat_amount,
      settled_fiat_amount: row.settled_fiat_amount,
      applied_rate: rateToNumber(BigInt(row.applied_rate)),
      quote_reference: row.quote_id,
      delivery_address: row.delivery_address,
      deposit_address: row.deposit_address,
      transaction_id: row.transaction_id,
      deposited_amount: row.deposited_amount,
      excess_amount: row.excess_amount,
      confirmations,
      required_confirmations: required,
      failure_reason: row.failure_reason,
      livemode: row.environment === 'live',
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
      status_history: history.map((h) => ({ status: h.status, at: iso(h.at), note: h.note })),
    };
  }

  row(db: Db, id: string): Promise<TradeRow | undefined> {
    return this.repo.find(db, id) as Promise<TradeRow | undefined>;
  }

  private async owned(db: Db, auth: AuthContext, reference: string): Promise<TradeRow> {
    const row = (await this.repo.findOwned(db, reference, auth.environment, auth.merchantId)) as TradeRow | undefined;
    if (!row) throw new NotFoundError(`No such trade: '${reference}'`, { reference });
    return row;
  }

  /** Moves a trade to `status`, records it in the history and announces it. */
  private async transition(tx: Db, id: string, status: Status, fields: Record<string, string | number | null> = {}, note: string | null = null): Promise<TradeRow> {
    const now = this.deps.clock.now();
    await this.repo.updateStatus(tx, id, status, now, fields);
    await this.repo.insertStatusHistory(tx, id, status, note, now);
    const row = (await this.row(tx, id))!;
    if (ANNOUNCED.has(status)) {
      await this.deps.outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: `trade.${status}`, objectType: 'trade', object: await this.present(tx, row) });
    }
    return row;
  }

  async get(auth: AuthContext, reference: string): Promise<Trade> {
    const { store } = this.deps;
    return this.present(store, await this.owned(store, auth, reference));
  }

  async list(auth: AuthContext, query: TradeListQuery): Promise<{ items: Trade[]; nextCursor: string | null }> {
    const { store } = this.deps;
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = (await this.repo.list(store, orderListFilter(auth, query, before), pageSize + 1)) as TradeRow[];
    const { items, nextCursor } = page(rows, pageSize);
    return { items: await Promise.all(items.map((r) => this.present(store, r))), nextCursor };
  }

  async execute(auth: AuthContext, body: ExecuteBody, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, feed, config } = this.deps;
    const quote = await this.deps.quotes.row(store, body.quote_reference);
    if (!quote || quote.environment !== auth.environment || quote.merchant_id !== auth.merchantId) {
      throw new ValidationError(`No quote ${body.quote_reference}`, [{ field: 'quote_reference', message: 'no such quote' }]);
    }
    if (quote.status === 'consumed') {
      throw new ValidationError(`Quote ${quote.id} was already executed (trade ${quote.trade_id})`, [{ field: 'quote_reference', message: 'quote already consumed' }]);
    }
    if (quote.status === 'expired' || clock.now() >= quote.expires_at) {
      throw new RateExpiredError(`Quote ${quote.id} expired at ${iso(quote.expires_at)}; request a new quote`, { quote_reference: quote.id, expired_at: iso(quote.expires_at) });
    }
    if (quote.side === 'buy') {
      if (!body.delivery_address) throw new ValidationError('delivery_address is required for a buy', [{ field: 'delivery_address', message: 'required for a buy' }]);
      const problem = addressProblem(quote.network, body.delivery_address);
      if (problem) throw new ValidationError(`delivery_address is ${problem}`, [{ field: 'delivery_address', message: problem }]);
    } else if (body.delivery_address !== undefined) {
      throw new ValidationError('delivery_address is only for buys; a sell returns a deposit_address', [{ field: 'delivery_address', message: 'only for buys' }]);
    }
    await this.deps.compliance.assertTradingEnabled(store, auth);
    const benchmark = await feed.benchmark(quote.asset);
    this.deps.quotes.assertFresh(benchmark);
    const quoted = BigInt(quote.benchmark_rate);
    const movedBps = Number((abs(benchmark.rate - quoted) * 10_000n) / quoted);
    if (movedBps > config.trading.market_tolerance_bps) {
      throw new RateExpiredError(`The market moved ${movedBps} bps since the quote (tolerance ${config.trading.market_tolerance_bps} bps); request a new quote`, {
        quote_reference: quote.id,
        moved_bps: movedBps,
        tolerance_bps: config.trading.market_tolerance_bps,
      });
    }
    const screening = body.delivery_address ? this.deps.compliance.screen(body.delivery_address) : 'clear';
    if (screening === 'blocked') {
      throw new ComplianceBlockError('The delivery address is blocked by screening', { reason: 'blocked_address', delivery_address: body.delivery_address });
    }
    const id = this.deps.ids.next('trd');
    return store.transaction(async (tx) => {
      // Inside the transaction, so two executes at once cannot both fit under one limit.
      await this.deps.limits.check(tx, auth, { side: quote.side, asset: quote.asset, network: quote.network, fiat: quote.net_fiat_amount });
      await this.deps.idempotency.claim(tx, claim, id);
      if ((await this.quoteRepo.consume(tx, quote.id, id)) === 0) {
        throw new ValidationError(`Quote ${quote.id} is no longer available`, [{ field: 'quote_reference', message: 'quote already consumed' }]);
      }
      const now = clock.now();
      await this.repo.insert(tx, {
        id,
        environment: auth.environment,
        merchantId: auth.merchantId,
        quoteId: quote.id,
        side: quote.side,
        asset: quote.asset,
        network: quote.network,
        assetAmount: quote.asset_amount,
        netFiatAmount: quote.net_fiat_amount,
        appliedRate: quote.applied_rate,
        benchmarkRate: quote.benchmark_rate,
        deliveryAddress: body.delivery_address ?? null,
        now,
      });
      await this.transactions.insert(tx, { environment: auth.environment, merchantId: auth.merchantId, objectType: 'trade', objectId: id, createdAt: now });
      await this.transition(tx, id, 'created');

      let response: RouteResult;
      if (quote.side === 'buy' && screening === 'review') {
        // Parked: the cedis are held until compliance decides.
        await this.deps.ledger.post(
          tx,
          this.journal(auth.environment, id, 'trade.reserved', 'hold cedis for a buy under review', [
            { account: accounts.walletAvailable(auth.merchantId), currency: 'GHS', amount: -quote.net_fiat_amount },
            { account: accounts.walletReserved(auth.merchantId), currency: 'GHS', amount: quote.net_fiat_amount },
          ]),
        );
        const row = await this.transition(tx, id, 'under_review', {}, 'delivery address flagged for review');
        await this.deps.outbox.emit(tx, { environment: auth.environment, merchantId: auth.merchantId, type: 'compliance.review_required', objectType: 'trade', object: await this.present(tx, row) });
        response = {
          status: 403,
          body: failure('compliance_block', 'The trade is parked for compliance review; it settles or fails when reviewed', { order_reference: id, status: 'under_review' }),
        };
      } else if (quote.side === 'buy') {
        const row = await this.settleBuy(tx, id, 'available');
        response = { status: 201, body: ok('Trade settled: the asset is on its way to the delivery address', await this.present(tx, row)) };
      } else {
        const deposit = makeAddress(quote.network, () => this.deps.ids.nextUint32());
        const row = await this.transition(tx, id, 'pending_payment', { deposit_address: deposit }, 'awaiting the on-chain deposit');
        await this.deps.scheduler.schedule(tx, { kind: 'trade.deposit_deadline', runAt: now + config.trading.deposit_window_seconds * 1000, payload: { id }, partition: id });
        response = { status: 201, body: ok(`Send ${row.asset_amount} ${quote.asset} minor units to deposit_address on ${quote.network}`, await this.present(tx, row)) };
      }
      await this.deps.idempotency.complete(tx, claim, response);
      return response;
    });
  }

  private journal(environment: Environment, tradeId: string, kind: string, memo: string, postings: Posting[]) {
    return { environment, kind, refType: 'trade', refId: tradeId, memo, postings };
  }

  /**
   * Delivers a buy: the merchant's cedis go to the treasury at the benchmark value and the
   * spread to revenue; the asset leaves inventory for the chain.
   */
  private async settleBuy(tx: Db, id: string, from: 'available' | 'reserved'): Promise<TradeRow> {
    const trade = (await this.row(tx, id))!;
    const atBenchmark = Number(fiatForAsset(BigInt(trade.asset_amount), BigInt(trade.benchmark_rate), 'down'));
    const spread = trade.net_fiat_amount - atBenchmark;
    const wallet = from === 'available' ? accounts.walletAvailable(trade.merchant_id) : accounts.walletReserved(trade.merchant_id);
    await this.deps.ledger.post(
      tx,
      this.journal(trade.environment, id, 'trade.settled', `buy ${trade.asset} on ${trade.network}`, [
        { account: wallet, currency: 'GHS', amount: -trade.net_fiat_amount },
        // A trade worth less than a pesewa at the benchmark is all spread.
        ...(atBenchmark > 0 ? [{ account: accounts.treasuryCedis(), currency: 'GHS', amount: atBenchmark }] : []),
        ...(spread > 0 ? [{ account: accounts.spreadRevenue(), currency: 'GHS', amount: spread }] : []),
        { account: accounts.treasuryInventory(trade.asset, trade.network), currency: trade.asset, amount: -trade.asset_amount },
        { account: accounts.chain(trade.network), currency: trade.asset, amount: trade.asset_amount },
      ]),
    );
    const txId = makeTransactionId(trade.network, () => this.deps.ids.nextUint32());
    await this.transition(tx, id, 'completed', { transaction_id: txId, settled_fiat_amount: trade.net_fiat_amount }, 'asset sent on chain');
    return this.transition(tx, id, 'settled');
  }

  /** Sandbox: the merchant's on-chain deposit for a sell arrives. */
  async recordDeposit(auth: AuthContext, input: { trade_reference: string; asset_amount: number }): Promise<Trade> {
    return this.deps.store.transaction(async (tx) => {
      const trade = await this.owned(tx, auth, input.trade_reference);
      if (trade.side !== 'sell' || trade.status !== 'pending_payment') {
        throw new ValidationError(`Trade ${trade.id} is not awaiting a deposit (it is a ${trade.side} in status ${trade.status})`, [{ field: 'trade_reference', message: 'not awaiting a deposit' }]);
      }
      const now = this.deps.clock.now();
      const txId = makeTransactionId(trade.network, () => this.deps.ids.nextUint32());
      const row = await this.transition(
        tx,
        trade.id,
        'pending_confirmation',
        { deposited_amount: input.asset_amount, deposited_at: now, transaction_id: txId },
        `deposit of ${input.asset_amount} seen on chain`,
      );
      const blockMs = (this.deps.config.trading.block_seconds[trade.network] ?? 10) * 1000;
      await this.deps.scheduler.schedule(tx, { kind: 'trade.confirm', runAt: now + this.requiredConfirmations(trade.network) * blockMs, payload: { id: trade.id }, partition: trade.id });
      return this.present(tx, row);
    });
  }

  /**
   * The deposit has its confirmations: deposit.confirmed, then the cedis. An underpayment is
   * settled pro rata at the quoted rate (rounded down); an overpayment is settled as quoted
   * and the excess asset is held for the merchant (merchant:…:excess account).
   */
  private async confirmDeposit(id: string): Promise<void> {
    await this.deps.store.transaction(async (tx) => {
      const trade = await this.row(tx, id);
      if (trade?.status !== 'pending_confirmation') return;
      const deposited = trade.deposited_amount!;
      const used = Math.min(deposited, trade.asset_amount);
      const excess = deposited - used;
      const credited = used === trade.asset_amount ? trade.net_fiat_amount : Number(fiatForAsset(BigInt(used), BigInt(trade.applied_rate), 'down'));
      const atBenchmark = Number(fiatForAsset(BigInt(used), BigInt(trade.benchmark_rate), 'down'));
      // Confirmed is an event, not a status: the trade stays pending_confirmation until credited.
      await this.repo.setConfirmations(tx, id, this.requiredConfirmations(trade.network), this.deps.clock.now());
      const confirmed = (await this.row(tx, id))!;
      await this.deps.outbox.emit(tx, { environment: trade.environment, merchantId: trade.merchant_id, type: 'deposit.confirmed', objectType: 'trade', object: await this.present(tx, confirmed) });
      await this.deps.ledger.post(
        tx,
        this.journal(trade.environment, id, 'trade.settled', `sell ${trade.asset} on ${trade.network}`, [
          { account: accounts.chain(trade.network), currency: trade.asset, amount: -deposited },
          { account: accounts.treasuryInventory(trade.asset, trade.network), currency: trade.asset, amount: used },
          ...(excess > 0 ? [{ account: accounts.merchantExcess(trade.merchant_id, trade.asset, trade.network), currency: trade.asset, amount: excess }] : []),
          ...(atBenchmark > 0 ? [{ account: accounts.treasuryCedis(), currency: 'GHS', amount: -atBenchmark }] : []),
          ...(credited > 0 ? [{ account: accounts.walletAvailable(trade.merchant_id), currency: 'GHS', amount: credited }] : []),
          ...(atBenchmark - credited > 0 ? [{ account: accounts.spreadRevenue(), currency: 'GHS', amount: atBenchmark - credited }] : []),
        ]),
      );
      const note = used < trade.asset_amount ? `underpaid: settled ${used} of ${trade.asset_amount} pro rata` : excess > 0 ? `overpaid by ${excess}: held for the merchant` : null;
      await this.transition(tx, id, 'completed', { settled_fiat_amount: credited, excess_amount: excess }, note);
      await this.transition(tx, id, 'settled');
    });
  }

  /** A sell whose deposit never came fails when the window closes. */
  private async depositDeadline(id: string): Promise<void> {
    await this.deps.store.transaction(async (tx) => {
      const trade = await this.row(tx, id);
      if (trade?.status !== 'pending_payment') return;
      await this.transition(tx, id, 'failed', { failure_reason: 'deposit_not_received' }, 'no deposit within the window');
    });
  }

  /** Sandbox: reverse a settled trade with reversing journals. */
  async reverse(auth: AuthContext, reference: string): Promise<Trade> {
    return this.deps.store.transaction(async (tx) => {
      const trade = await this.owned(tx, auth, reference);
      if (trade.status !== 'settled') {
        throw new ValidationError(`Only a settled trade can be reversed; ${trade.id} is ${trade.status}`, [{ field: 'reference', message: 'not settled' }]);
      }
      const journals = await this.journals.settlementJournalIds(tx, trade.id);
      for (const j of journals) await this.deps.ledger.reverse(tx, j.id, 'trade.reversed', `reverse ${trade.side} ${trade.id}`);
      return this.present(tx, await this.transition(tx, trade.id, 'reversed', {}, 'reversed by the sandbox'));
    });
  }

  /** Sandbox: compliance approves (the buy settles from the held cedis) or rejects (they are released). */
  async review(auth: AuthContext, reference: string, decision: 'approve' | 'reject'): Promise<Trade> {
    return this.deps.store.transaction(async (tx) => {
      const trade = await this.owned(tx, auth, reference);
      if (trade.status !== 'under_review') {
        throw new ValidationError(`Trade ${trade.id} is not under review (it is ${trade.status})`, [{ field: 'reference', message: 'not under review' }]);
      }
      if (decision === 'approve') return this.present(tx, await this.settleBuy(tx, trade.id, 'reserved'));
      await this.deps.ledger.post(
        tx,
        this.journal(trade.environment, trade.id, 'trade.released', 'release cedis held for a rejected buy', [
          { account: accounts.walletReserved(trade.merchant_id), currency: 'GHS', amount: -trade.net_fiat_amount },
          { account: accounts.walletAvailable(trade.merchant_id), currency: 'GHS', amount: trade.net_fiat_amount },
        ]),
      );
      return this.present(tx, await this.transition(tx, trade.id, 'failed', { failure_reason: 'rejected_by_compliance' }, 'rejected in review'));
    });
  }

  /** Stocks the treasury inventory once per environment, from configuration. */
  async seedTreasury(): Promise<void> {
    const inventory = this.deps.config.trading.inventory;
    await this.deps.store.transaction(async (tx) => {
      for (const environment of ['test', 'live'] as const) {
        for (const [asset, networks] of Object.entries(inventory)) {
          for (const [network, amount] of Object.entries(networks)) {
            if (amount <= 0) continue;
            const ref = `${asset}:${network}`;
            if (await this.journals.treasurySeeded(tx, environment, ref)) continue;
            await this.deps.ledger.post(tx, {
              environment,
              kind: 'treasury.seed',
              refType: 'treasury',
              refId: ref,
              memo: `initial ${asset} inventory on ${network}`,
              postings: [
                { account: accounts.treasuryFunding(), currency: asset, amount: -amount },
                { account: accounts.treasuryInventory(asset, network), currency: asset, amount },
              ],
            });
          }
        }
      }
    });
  }
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}
