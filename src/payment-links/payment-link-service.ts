import type { AuthContext } from '../auth/api-key-service.ts';
import type { EventOutbox } from '../events/event-outbox.ts';
import { noSuch } from '../http/find-by-id.ts';
import { DEFAULT_PAGE_SIZE } from '../http/pagination.ts';
import { type RouteResult, fieldIssues } from '../http/route.ts';
import { requestHash, type IdempotencyClaim, type IdempotencyService } from '../idempotency/idempotency-service.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { NotFoundError, PaymentLinkInactiveError, ValidationError } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { toMajorString } from '../kernel/money.ts';
import { ok } from '../http/envelope.ts';
import type { Db, Store } from '../store/db.ts';
import { decodeCursor, keysetPage } from '../store/repositories/keyset-page.ts';
import { CollectionRepository } from '../store/repositories/collection-repository.ts';
import { PaymentLinkRepository, type PaymentLinkRow } from '../store/repositories/payment-link-repository.ts';
import type { CollectionRow, CollectionService } from '../collections/collection-service.ts';
import { createCollectionBody, type Collection } from '../collections/collections.schemas.ts';
import type { CheckoutCollection, PayLinkInput, PaymentLink, PaymentLinkInput, PaymentLinkState } from './payment-links.schemas.ts';

export type { PaymentLinkRow };

/** What the hosted page shows about a link, and whether it takes payments. */
export interface CheckoutView {
  link: PaymentLink;
  merchantName: string;
}

export interface PaymentLinkServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  outbox: EventOutbox;
  idempotency: IdempotencyService;
  baseUrl: () => string;
  /** Set once the collection service exists: it is built with this service's onSettled. */
  collections?: CollectionService;
}

const SLUG_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** A page submission's token: the page puts a fresh one in each form it renders. */
const SUBMISSION = /^[A-Za-z0-9_-]{8,64}$/;

export const PAYMENT_LINK_CREATED = 'Payment link created: share its url';

/**
 * Payment links: a shareable hosted checkout for a fixed or open amount. A link is active until
 * it expires (on the clock), is deactivated, or completes (its usage limit of settled payments
 * reached). Each payment on its page is a real /v1 collection in the link's merchant.
 */
export class PaymentLinkService {
  private readonly links = new PaymentLinkRepository();
  private readonly collectionRows = new CollectionRepository();

  constructor(private readonly deps: PaymentLinkServiceDeps) {}

  /** The collections service, once wired (it is built after this one, with onSettled). */
  attach(collections: CollectionService): void {
    this.deps.collections = collections;
  }

  async create(input: PaymentLinkInput, auth: AuthContext, claim: IdempotencyClaim): Promise<RouteResult> {
    const { store, clock, ids, idempotency } = this.deps;
    const now = clock.now();
    if (input.expires_at !== undefined && input.expires_at <= now) {
      throw new ValidationError(`expires_at must be in the future (the clock reads ${iso(now)})`, [{ field: 'expires_at', message: `must be after ${iso(now)}` }]);
    }
    const id = ids.next('plink');
    const slug = this.slug();
    const result = await store.transaction(async (tx) => {
      await idempotency.claim(tx, claim, id);
      await this.links.insert(tx, {
        id,
        slug,
        environment: auth.environment,
        merchantId: auth.merchantId,
        amount: input.amount ?? null,
        minAmount: input.min_amount ?? null,
        maxAmount: input.max_amount ?? null,
        description: input.description,
        expiresAt: input.expires_at ?? null,
        usageLimit: input.usage_limit ?? null,
        now,
      });
      const response = { status: 201, body: ok(PAYMENT_LINK_CREATED, this.present((await this.row(tx, id))!)) };
      await idempotency.complete(tx, claim, response);
      return response;
    });
    return result;
  }

  async get(auth: AuthContext, id: string): Promise<PaymentLink> {
    return this.present(await this.owned(this.deps.store, auth, id));
  }

  async list(auth: AuthContext, query: { cursor?: string; page_size?: number; status?: PaymentLinkState }): Promise<{ items: PaymentLink[]; nextCursor: string | null }> {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const before = decodeCursor(query.cursor);
    const now = this.deps.clock.now();
    const rows = await this.links.list(this.deps.store, {
      environment: auth.environment,
      merchantId: auth.merchantId,
      ...(before !== undefined ? { before } : {}),
      ...(query.status ? { status: query.status } : {}),
      now,
      limit: pageSize + 1,
    });
    const { items, nextCursor } = keysetPage(rows, pageSize);
    return { items: items.map((r) => this.present(r)), nextCursor };
  }

  /**
   * Stops a link taking payments. Deactivating a deactivated link changes nothing; a completed
   * link stays completed (it already takes none, and its history says why).
   */
  async deactivate(auth: AuthContext, id: string): Promise<PaymentLink> {
    const { store, clock } = this.deps;
    return store.transaction(async (tx) => {
      const link = this.present(await this.owned(tx, auth, id));
      if (link.status === 'active' || link.status === 'expired') {
        await this.links.deactivate(tx, id, clock.now());
      }
      return this.present((await this.row(tx, id))!);
    });
  }

  /** The link behind a hosted page, and its merchant's display name. */
  async checkout(slug: string): Promise<CheckoutView> {
    const row = await this.links.findBySlug(this.deps.store, slug);
    if (!row) throw new NotFoundError(`No such payment link: '${slug}'`, { slug });
    return { link: this.present(row), merchantName: row.merchant_name ?? 'Merchant' };
  }

  /**
   * Pays a link from its hosted page: a real collection in the link's merchant and environment.
   * The page's submission token is the Idempotency-Key, so a double click pays once.
   */
  async pay(slug: string, body: PayLinkInput, path: string): Promise<CheckoutCollection> {
    const { store, idempotency } = this.deps;
    const { link } = await this.checkout(slug);
    const row = (await this.row(store, link.id))!;
    if (!body.submission || !SUBMISSION.test(body.submission)) {
      throw new ValidationError('submission must be the token the page put in its form', [{ field: 'submission', message: 'must be 8 to 64 letters, digits, - or _' }]);
    }
    const auth = this.authOf(row);
    const claim: IdempotencyClaim = {
      scope: { environment: row.environment, merchantId: row.merchant_id },
      key: `checkout:${row.id}:${body.submission}`,
      requestHash: requestHash('POST', path, body),
    };
    const stored = await idempotency.lookup(store, claim);
    if (stored) return this.collectionOf(row, (stored.body as { data: { id: string } }).data.id);
    this.assertPayable(link);

    if (link.amount !== null && body.amount !== undefined) {
      throw new ValidationError('This link has a fixed amount', [{ field: 'amount', message: `the link's amount is fixed at ${link.amount_major} GHS` }]);
    }
    const parsed = createCollectionBody.safeParse({
      amount: link.amount_major ?? body.amount,
      currency: 'GHS',
      channel: body.channel,
      customer: body.customer,
      description: link.description,
      ...(body.channel === 'momo' && body.network ? { network: body.network } : {}),
    });
    if (!parsed.success) {
      const fields = fieldIssues(parsed.error, 'body');
      throw new ValidationError(`Invalid request body: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, fields);
    }
    const typed = parsed.data.amount;
    if (row.min_amount !== null && typed < row.min_amount) {
      throw new ValidationError(`amount must be at least ${toMajorString(row.min_amount, 'GHS')} GHS`, [
        { field: 'amount', message: `amount must be at least ${toMajorString(row.min_amount, 'GHS')} GHS` },
      ]);
    }
    if (row.max_amount !== null && typed > row.max_amount) {
      throw new ValidationError(`amount must be at most ${toMajorString(row.max_amount, 'GHS')} GHS`, [
        { field: 'amount', message: `amount must be at most ${toMajorString(row.max_amount, 'GHS')} GHS` },
      ]);
    }
    const result = await this.collections().create(parsed.data, auth, claim, { paymentLinkId: row.id });
    return this.collectionOf(row, (result.body as { data: Collection }).data.id);
  }

  /** A collection paying this link, as the page shows it; another link's collection is not found. */
  async collection(slug: string, collectionId: string): Promise<CheckoutCollection> {
    const { link } = await this.checkout(slug);
    return this.collectionOf((await this.row(this.deps.store, link.id))!, collectionId);
  }

  /** The page's OTP step for a card collection paying this link. */
  async submitOtp(slug: string, collectionId: string, otp: string): Promise<CheckoutCollection> {
    const { link } = await this.checkout(slug);
    const row = (await this.row(this.deps.store, link.id))!;
    await this.collectionOf(row, collectionId); // only this link's collections
    const collection = await this.collections().submitOtp(this.authOf(row), collectionId, otp);
    return checkoutView(collection);
  }

  /**
   * In the transaction that settles a collection: a payment of a link counts one use, and the
   * use that reaches the limit completes the link (payment_link.completed, once).
   */
  async onSettled(tx: Db, collection: CollectionRow): Promise<void> {
    if (!collection.payment_link_id) return;
    const now = this.deps.clock.now();
    await this.links.countUse(tx, collection.payment_link_id, now);
    const completed = await this.links.completeIfUsedUp(tx, collection.payment_link_id);
    if (!completed) return;
    const link = this.present((await this.row(tx, collection.payment_link_id))!);
    await this.deps.outbox.emit(tx, { environment: collection.environment, merchantId: collection.merchant_id, type: 'payment_link.completed', objectType: 'payment_link', object: link });
  }

  present(row: PaymentLinkRow): PaymentLink {
    return {
      id: row.id,
      object: 'payment_link',
      status: this.state(row),
      slug: row.slug,
      url: `${this.deps.baseUrl()}/pay/${row.slug}`,
      amount: row.amount,
      amount_major: row.amount === null ? null : toMajorString(row.amount, 'GHS'),
      min_amount: row.min_amount,
      max_amount: row.max_amount,
      currency: row.currency,
      fees: 0,
      description: row.description,
      expires_at: row.expires_at === null ? null : iso(row.expires_at),
      usage_limit: row.usage_limit,
      completed_count: row.completed_count,
      livemode: row.environment === 'live',
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  private state(row: PaymentLinkRow): PaymentLinkState {
    if (row.status === 'active' && row.expires_at !== null && row.expires_at <= this.deps.clock.now()) return 'expired';
    return row.status;
  }

  private assertPayable(link: PaymentLink): void {
    if (link.status === 'active') return;
    const why = { expired: `expired at ${link.expires_at}`, deactivated: 'was deactivated by the merchant', completed: `reached its usage limit of ${link.usage_limit}` }[link.status];
    throw new PaymentLinkInactiveError(`Payment link ${link.id} ${why} and takes no more payments`, { payment_link_id: link.id, state: link.status });
  }

  private async collectionOf(link: PaymentLinkRow, collectionId: string): Promise<CheckoutCollection> {
    const row = await this.collectionRows.paymentLinkOf(this.deps.store, collectionId);
    if (!row || row.payment_link_id !== link.id) throw noSuch('collection', collectionId);
    return checkoutView(await this.collections().get(this.authOf(link), collectionId));
  }

  /** The link acts in its merchant's name: the link is the capability, no API key is involved. */
  private authOf(link: PaymentLinkRow): AuthContext {
    return { keyId: `payment_link:${link.id}`, merchantId: link.merchant_id, environment: link.environment, scopes: [], signingSecret: '', role: 'admin', ipAllowlist: [] };
  }

  private collections(): CollectionService {
    if (!this.deps.collections) throw new Error('PaymentLinkService: attach the collection service before paying links');
    return this.deps.collections;
  }

  private row(db: Db, id: string): Promise<PaymentLinkRow | undefined> {
    return this.links.find(db, id);
  }

  /** The merchant's own link, or not_found. */
  private async owned(db: Db, auth: AuthContext, id: string): Promise<PaymentLinkRow> {
    const row = await this.links.findOwned(db, auth, id);
    if (!row) throw noSuch('payment link', id);
    return row;
  }

  private slug(): string {
    let slug = '';
    for (let i = 0; i < 16; i++) slug += SLUG_ALPHABET[this.deps.ids.nextUint32() & 31];
    return slug;
  }
}

function checkoutView(c: Collection): CheckoutCollection {
  return {
    id: c.id,
    status: c.status,
    amount: c.amount,
    amount_major: c.amount_major,
    currency: c.currency,
    channel: c.channel,
    next_action: c.next_action ? { type: c.next_action.type, message: c.next_action.message } : null,
    failure_reason: c.failure_reason,
  };
}
