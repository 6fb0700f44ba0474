import type { AuthContext } from '../auth/api-key-service.ts';
import type { Config } from '../config/config.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { NotFoundError, RateExpiredError, ValidationError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import type { Environment } from '../kernel/environment.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { DEFAULT_PAGE_SIZE, decodeCursor, page } from '../http/pagination.ts';
import { commitWith, type Db, type Store } from '../store/db.ts';
import { QuoteRepository } from '../store/repositories/quote-repository.ts';
import { NETWORKS_BY_ASSET } from './assets.ts';
import type { Compliance } from './compliance.ts';
import { legAgeSeconds, type Asset, type Benchmark, type PriceFeed } from './price-feed.ts';
import { applyBps, assetForFiat, fiatForAsset, formatRate, rateToNumber } from './rate-math.ts';
import type { TradingLimits } from './trading-limits.ts';
import { orderListFilter } from './order-list-filter.ts';
import type { ListedQuote, Quote, QuoteBody } from './trading.schemas.ts';

export interface QuoteRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  side: 'buy' | 'sell';
  asset: Asset;
  network: string;
  asset_amount: number;
  net_fiat_amount: number;
  applied_rate: string;
  benchmark_rate: string;
  usd_price: string;
  fx_rate: string;
  status: Quote['status'];
  trade_id: string | null;
  expires_at: number;
  created_at: number;
}

export interface QuoteListQuery {
  cursor?: string;
  page_size?: number;
  status?: Quote['status'];
  side?: 'buy' | 'sell';
  asset?: Asset;
  created_from?: string;
  created_to?: string;
}

export function presentQuote(row: QuoteRow): Quote {
  return {
    reference: row.id,
    object: 'quote',
    status: row.status,
    side: row.side,
    asset: row.asset,
    network: row.network,
    applied_rate: rateToNumber(BigInt(row.applied_rate)),
    benchmark_rate: rateToNumber(BigInt(row.benchmark_rate)),
    usd_price: rateToNumber(BigInt(row.usd_price)),
    fx_rate: rateToNumber(BigInt(row.fx_rate)),
    asset_amount: row.asset_amount,
    net_fiat_amount: row.net_fiat_amount,
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at),
    livemode: row.environment === 'live',
  };
}

/**
 * The amounts of a quote, in the house's favour: a buy rounds the asset delivered down and the
 * cedis charged up; a sell rounds the cedis paid down and the asset required up.
 */
export function priceQuote(side: 'buy' | 'sell', benchmark: bigint, spreadBps: number, amount: { fiat?: number; asset?: number }) {
  const rate = side === 'buy' ? applyBps(benchmark, spreadBps, 'up') : applyBps(benchmark, -spreadBps, 'down');
  // A price so low the sell rate rounds to nothing: no amount can be traded at it.
  if (rate <= 0n) return { rate, asset: 0n, fiat: 0n };
  let asset: bigint;
  let fiat: bigint;
  if (amount.fiat !== undefined) {
    fiat = BigInt(amount.fiat);
    asset = assetForFiat(fiat, rate, side === 'buy' ? 'down' : 'up');
  } else {
    asset = BigInt(amount.asset!);
    fiat = fiatForAsset(asset, rate, side === 'buy' ? 'up' : 'down');
  }
  return { rate, asset, fiat };
}

export class QuoteService {
  private readonly repo = new QuoteRepository();

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      ids: IdGenerator;
      feed: PriceFeed;
      outbox: EventOutbox;
      scheduler: Scheduler;
      compliance: Compliance;
      limits: TradingLimits;
      config: Pick<Config, 'trading'>;
    },
  ) {
    deps.scheduler.register('quote.expire', (payload: { id: string }) => this.expire(payload.id));
  }

  /** Both legs fresh, or rate_expired naming the stale one. */
  assertFresh(benchmark: Benchmark): void {
    const { usd_max_age_seconds, fx_max_age_seconds } = this.deps.config.trading;
    const now = this.deps.clock.now();
    for (const [leg, max] of [
      [benchmark.usd, usd_max_age_seconds],
      [benchmark.fx, fx_max_age_seconds],
    ] as const) {
      const age = Math.floor(legAgeSeconds(leg, now));
      if (age > max) {
        throw new RateExpiredError(`The ${leg.name === 'FX' ? 'USD/GHS' : `${leg.name}/USD`} price is ${age} s old (at most ${max} s): quoting is halted`, {
          leg: leg.name,
          as_of: iso(leg.asOf),
          age_seconds: age,
          max_age_seconds: max,
        });
      }
    }
  }

  async create(auth: AuthContext, body: QuoteBody): Promise<Quote> {
    const { store, clock, ids, feed, outbox, scheduler, config } = this.deps;
    if (!NETWORKS_BY_ASSET[body.asset].includes(body.network)) {
      throw new ValidationError(`${body.asset} trades on ${NETWORKS_BY_ASSET[body.asset].join(' and ')}, not ${body.network}`, [
        { field: 'network', message: `must be one of ${NETWORKS_BY_ASSET[body.asset].join(', ')} for ${body.asset}` },
      ]);
    }
    const benchmark = await feed.benchmark(body.asset);
    // The checks read what was committed, outside the transaction that writes: a quote holds
    // nothing against concurrent writers. Its limit check is advisory (a quote consumes no limit;
    // the trade that executes it checks again, serializable) and it only inserts fresh rows. So
    // its one read (the stage, the limits' usage and the exposure cap) shares the store's read
    // connection with other requests', and the writes are appends, committed with other quotes'
    // (appendOnly). The checks are judged in order: stage, freshness, amount, limits.
    const standing = await this.deps.limits.standing(store, auth, { side: body.side, asset: body.asset, network: body.network });
    this.deps.compliance.judgeStage(standing.stage, auth);
    this.assertFresh(benchmark);
    const priced = priceQuote(body.side, benchmark.rate, config.trading.spread_bps, { fiat: body.fiat_amount, asset: body.asset_amount });
    if (priced.asset <= 0n || priced.fiat <= 0n) {
      const field = body.fiat_amount !== undefined ? 'fiat_amount' : 'asset_amount';
      throw new ValidationError(`${field} is too small to trade at ${formatRate(priced.rate)} GHS per ${body.asset}`, [{ field, message: 'too small to trade' }]);
    }
    if (priced.fiat > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new ValidationError('asset_amount is too large', [{ field: 'asset_amount', message: 'too large' }]);
    }
    const fiat = Number(priced.fiat);
    this.deps.limits.judge(standing.usage, { side: body.side, fiat });

    return store.transaction(
      async (tx) => {
        const now = clock.now();
        const row: QuoteRow = {
          id: ids.next('qt'),
          environment: auth.environment,
          merchant_id: auth.merchantId,
          side: body.side,
          asset: body.asset,
          network: body.network,
          asset_amount: Number(priced.asset),
          net_fiat_amount: fiat,
          applied_rate: priced.rate.toString(),
          benchmark_rate: benchmark.rate.toString(),
          usd_price: benchmark.usd.value.toString(),
          fx_rate: benchmark.fx.value.toString(),
          status: 'created',
          trade_id: null,
          expires_at: now + config.trading.quote_ttl_seconds * 1000,
          created_at: now,
        };
        const quote = presentQuote(row);
        // Three appends, none of which reads another's.
        commitWith(
          this.repo.insert(tx, row),
          outbox.emit(tx, { environment: auth.environment, merchantId: auth.merchantId, type: 'quote.created', objectType: 'quote', object: quote }),
          scheduler.schedule(tx, { kind: 'quote.expire', runAt: row.expires_at, payload: { id: row.id }, partition: row.id }),
        );
        return quote;
      },
      { appendOnly: true },
    );
  }

  /** The merchant's quotes in this environment, newest first, keyset-paged on the insertion sequence. */
  async list(auth: AuthContext, query: QuoteListQuery): Promise<{ items: ListedQuote[]; nextCursor: string | null }> {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const rows = (await this.repo.list(this.deps.store, orderListFilter(auth, query, before), pageSize + 1)) as (QuoteRow & { seq: number })[];
    const { items, nextCursor } = page(rows, pageSize);
    return { items: items.map((r) => ({ ...presentQuote(r), trade_reference: r.trade_id })), nextCursor };
  }

  /** One of the merchant's quotes in this environment; another's, or none, is not found. */
  async get(auth: AuthContext, reference: string): Promise<ListedQuote> {
    const row = await this.row(this.deps.store, reference);
    if (!row || row.environment !== auth.environment || row.merchant_id !== auth.merchantId) throw new NotFoundError(`No such quote: '${reference}'`, { id: reference });
    return { ...presentQuote(row), trade_reference: row.trade_id };
  }

  row(db: Db, id: string): Promise<QuoteRow | undefined> {
    return this.repo.find(db, id) as Promise<QuoteRow | undefined>;
  }

  /** created -> expired when its time is up unexecuted, with quote.expired. */
  private async expire(id: string): Promise<void> {
    await this.deps.store.transaction(async (tx) => {
      if ((await this.repo.expire(tx, id)) === 0) return;
      const row = (await this.row(tx, id))!;
      await this.deps.outbox.emit(tx, { environment: row.environment, merchantId: row.merchant_id, type: 'quote.expired', objectType: 'quote', object: presentQuote(row) });
    });
  }
}
