import type { AuthContext } from '../auth/api-key-service.ts';
import type { RouteResult } from '../http/route.ts';
import type { IdempotencyClaim } from '../idempotency/idempotency-service.ts';
import { iso } from '../kernel/clock.ts';
import { ValidationError } from '../kernel/errors.ts';
import { toMajorString } from '../kernel/money.ts';
import { type Network, resolveNetwork } from '../kernel/msisdn.ts';
import type { Environment } from '../kernel/environment.ts';
import { BillRepository } from '../store/repositories/bill-repository.ts';
import { feeFor } from '../settlement/fees.ts';
import { reservedPayoutJournals, reservePayout } from '../settlement/reserved-payout.ts';
import { SettlementMachine } from '../settlement/settlement-machine.ts';
import type { SettlementDeps } from '../settlement/settlement-deps.ts';
import { BILL_PRODUCTS, networkBiller, OPEN_AMOUNT_BILLERS, openAmountBiller, productByCode, type BillCategory } from './bill-catalogue.ts';
import type { Bill, CreateBillBody } from './bills.schemas.ts';

interface BillRow {
  id: string;
  environment: Environment;
  merchant_id: string;
  status: Bill['status'];
  category: BillCategory;
  biller: string;
  product: string | null;
  customer: string;
  amount: number;
  currency: 'GHS';
  fees: number;
  token: string | null;
  units: string | null;
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  provider_reason: string | null;
  created_at: number;
  updated_at: number;
}

export function presentBill(row: BillRow): Bill {
  return {
    id: row.id,
    object: 'bill',
    status: row.status,
    category: row.category,
    biller: row.biller,
    product: row.product,
    customer: row.customer,
    amount: row.amount,
    amount_major: toMajorString(row.amount, 'GHS'),
    currency: row.currency,
    fees: row.fees,
    total_debited: row.amount + row.fees,
    token: row.token,
    units: row.units,
    provider: row.provider,
    failure_reason: row.failure_reason,
    provider_reason: row.provider_reason,
    livemode: row.environment === 'live',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A bill as the service will vend it: whom, what, for how much. */
interface BillOrder {
  category: BillCategory;
  biller: string;
  product: string | null;
  customer: string;
  network: Network | null;
  amount: number;
}

export const BILL_INITIATED = 'Bill payment initiated: amount plus fee reserved; wait for bill.settled (with the token, for ECG) or bill.failed';

function invalid(field: string, message: string): ValidationError {
  return new ValidationError(`Invalid request body: ${field}: ${message}`, [{ field, message }]);
}

/** Bill payments: a vend through the bills provider, reserved and settled like a payout. */
export class BillService {
  /** A bill's life once recorded: what the rails settle and recovery resumes. */
  readonly settlement: SettlementMachine<BillRow, Bill>;
  private readonly bills = new BillRepository<BillRow>();

  constructor(private readonly deps: SettlementDeps) {
    this.settlement = new SettlementMachine<BillRow, Bill>(deps, {
      object: 'bill',
      records: this.bills,
      idPrefix: 'bil',
      operation: 'payout',
      pendingStatus: 'pending',
      successStatus: 'settled',
      events: { pending: 'bill.pending', success: 'bill.settled', failed: 'bill.failed' },
      messages: {
        initiated: BILL_INITIATED,
        declined: 'Bill payment refused by the biller; the reservation was refunded',
        interrupted: 'Bill payment failed: initiation was interrupted; the reservation was refunded',
      },
      present: presentBill,
      route: (row) => {
        const phone = row.category === 'airtime' || row.category === 'data';
        return deps.router.route({ environment: row.environment, channel: 'bills', operation: 'payout', refType: 'bill', refId: row.id }, (p) =>
          p.payout({
            reference: row.id,
            amount: row.amount,
            currency: 'GHS',
            channel: 'bills',
            ...(phone ? { msisdn: row.customer, network: row.biller as Network } : { accountNumber: row.customer }),
            description: `railyard bill ${row.id}`,
            bill: { category: row.category, biller: row.biller, ...(row.product ? { product: row.product } : {}), customer: row.customer },
          }),
        );
      },
      ...reservedPayoutJournals<BillRow>(
        'bill',
        (row, provider) => `${row.biller} ${row.category} via ${provider}`,
        (_row, reason) => `refund failed vend (${reason})`,
      ),
      // The token (and its units) of a prepaid vend is kept with the bill, so bill.settled carries it.
      onSettled: async (tx, row, outcome) => {
        if (!outcome.receipt) return;
        await this.bills.setReceipt(tx, row.id, outcome.receipt.token ?? null, outcome.receipt.units ?? null);
      },
    });
  }

  async create(body: CreateBillBody, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const order = this.orderOf(body);
    const { store, clock, ids, idempotency, ledger } = this.deps;
    const fees = feeFor(this.deps.config.fees.bills, order.amount);
    const id = ids.next('bil');
    const now = clock.now();
    await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, id);
      await this.bills.insert(tx, {
        id,
        environment: auth.environment,
        merchantId: auth.merchantId,
        category: order.category,
        biller: order.biller,
        product: order.product,
        customer: order.customer,
        amount: order.amount,
        fees,
        now,
      });
      await reservePayout(tx, ledger, {
        object: 'bill',
        id,
        environment: auth.environment,
        merchantId: auth.merchantId,
        amount: order.amount,
        fees,
        memo: `reserve ${order.biller} ${order.category}`,
      });
      await this.settlement.track(tx, { id, environment: auth.environment, merchantId: auth.merchantId }, now);
    });
    return this.settlement.initiate(id, claim);
  }

  get(auth: AuthContext, id: string): Promise<Bill> {
    return this.settlement.get(auth, id);
  }

  /** The catalogue: fixed-price products, then open-amount billers, optionally filtered. */
  products(filter: { category?: BillCategory; biller?: string }) {
    const wanted = (p: { category: BillCategory; biller: string }) =>
      (filter.category === undefined || p.category === filter.category) && (filter.biller === undefined || p.biller === filter.biller.toUpperCase());
    return [
      ...OPEN_AMOUNT_BILLERS.filter(wanted).map((b) => ({
        code: null,
        category: b.category,
        biller: b.biller,
        name: b.name,
        amount: null,
        amount_major: null,
        min_amount: b.min,
        max_amount: b.max,
      })),
      ...BILL_PRODUCTS.filter(wanted).map((p) => ({
        code: p.code,
        category: p.category,
        biller: p.biller,
        name: p.name,
        amount: p.amount,
        amount_major: toMajorString(p.amount, 'GHS'),
        min_amount: null,
        max_amount: null,
      })),
    ];
  }

  /** Checks the body against the catalogue: the network of a number, a product of its biller, its price, an open amount's bounds. */
  private orderOf(body: CreateBillBody): BillOrder {
    if (body.category === 'airtime' || body.category === 'data') {
      const { msisdn, network } = resolveNetwork(body.customer, body.network);
      const biller = networkBiller(network);
      if (body.category === 'airtime') return this.openAmount({ category: 'airtime', biller, product: null, customer: msisdn, network, amount: body.amount });
      return this.fixedPrice({ category: 'data', biller, product: body.product, customer: msisdn, network }, body.amount);
    }
    if (body.category === 'tv') return this.fixedPrice({ category: 'tv', biller: body.biller, product: body.product, customer: body.customer, network: null }, body.amount);
    return this.openAmount({ category: body.category, biller: body.biller, product: null, customer: body.customer, network: null, amount: body.amount });
  }

  private openAmount(order: BillOrder): BillOrder {
    const biller = openAmountBiller(order.category, order.biller)!;
    if (order.amount < biller.min || order.amount > biller.max) {
      throw invalid('amount', `amount must be from ${toMajorString(biller.min, 'GHS')} to ${toMajorString(biller.max, 'GHS')} for ${biller.name}`);
    }
    return order;
  }

  private fixedPrice(order: Omit<BillOrder, 'amount' | 'product'> & { product: string }, amount: number | undefined): BillOrder {
    const product = productByCode(order.product);
    if (!product || product.category !== order.category || product.biller !== order.biller) {
      const codes = BILL_PRODUCTS.filter((p) => p.category === order.category && p.biller === order.biller).map((p) => p.code);
      throw invalid('product', `product must be one of ${codes.join(', ')} for ${order.biller} ${order.category}`);
    }
    if (amount !== undefined && amount !== product.amount) {
      throw invalid('amount', `amount must be the price of ${product.code}, ${toMajorString(product.amount, 'GHS')}, or left out`);
    }
    return { ...order, amount: product.amount };
  }
}
