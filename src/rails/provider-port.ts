import type { UpstreamTap } from './upstream-tap.ts';
import type { HttpExchange } from '../kernel/http-exchange-thread.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Network } from '../kernel/msisdn.ts';

// The provider port. Each adapter speaks one upstream's wire format over HTTP with a timeout;
// the router (rail-router.ts) picks adapters by priority and fails over between them.

/** momo and bank carry /api/v1 charges and transfers; card, bank_debit and bills serve the /v1 family. */
export type Channel = 'momo' | 'bank' | 'card' | 'bank_debit' | 'bills';
export type RailOperation = 'collect' | 'payout' | 'resolve';

interface CollectBase {
  /** Our charge or collection id; sent as the upstream's client reference (MTN externalId, Hubtel ClientReference). */
  reference: string;
  amount: number; // minor units
  currency: 'GHS';
  description: string;
}

/** A mobile-money collection; `channel` may be left out (charges predate the other channels). */
export interface MomoCollectRequest extends CollectBase {
  channel?: 'momo';
  msisdn: string; // 233XXXXXXXXX
  network: Network;
}

/**
 * A card collection: the card number (digits only) or a processor token `tok_...`. Without a
 * card (a number is never stored, so a resumed initiation has none), only a charge the processor
 * already took under this reference can be its answer.
 */
export interface CardCollectRequest extends CollectBase {
  channel: 'card';
  card?: { number: string } | { token: string };
}

/** A direct debit of a bank account, which the account holder approves at their bank. */
export interface BankDebitCollectRequest extends CollectBase {
  channel: 'bank_debit';
  accountNumber: string;
  bankCode: string; // GhIPSS code, e.g. 040100
}

export type CollectRequest = MomoCollectRequest | CardCollectRequest | BankDebitCollectRequest;

/** The momo fields of a collect request; any other channel is refused on its merits (no failover). */
export function momoCollect(req: CollectRequest, provider: string): MomoCollectRequest {
  if (req.channel === 'card' || req.channel === 'bank_debit') throw new RailError('rejected', `${provider} collects only from mobile-money wallets`);
  return req;
}

export interface PayoutRequest {
  reference: string; // our transfer id
  amount: number; // minor units
  currency: 'GHS';
  channel: Channel;
  msisdn?: string; // momo: 233XXXXXXXXX
  network?: Network; // momo
  accountNumber?: string; // bank
  bankCode?: string; // bank: GhIPSS code, e.g. 040100
  accountName?: string; // bank
  description: string;
  /** bills: what to vend (a payout to a biller); the customer is the number or meter it is for. */
  bill?: BillVend;
}

/** A bill payment as a vend: airtime, a data bundle, a utility or a TV subscription. */
export interface BillVend {
  category: 'airtime' | 'data' | 'electricity' | 'water' | 'tv';
  /** MTN, TELECEL, AT, ECG, GWCL, DSTV, GOTV. */
  biller: string;
  /** A bundle or package code; absent for an open amount. */
  product?: string;
  /** A 233XXXXXXXXX number (airtime, data), a meter, account or smartcard number. */
  customer: string;
}

/** What a successful vend gives back: an ECG prepaid token and its units, when there is one. */
export interface VendReceipt {
  token?: string;
  units?: string;
}

export interface ResolveRequest {
  channel: Channel;
  msisdn?: string;
  network?: Network;
  accountNumber?: string;
  bankCode?: string;
}

export interface RailAccepted {
  /** The upstream's own id for the transaction (MTN X-Reference-Id, Hubtel TransactionId, ...). */
  providerReference: string;
  /** What the customer must still do before the upstream decides (a card's OTP). */
  nextAction?: RailNextAction;
}

/** A step the customer completes before the upstream decides: a card issuer's one-time password. */
export interface RailNextAction {
  type: 'otp';
  /** The upstream's prompt, shown to the customer. */
  message: string;
}

/** The account holder's answer to a direct debit's mandate prompt (sandbox upstreams only). */
export interface MandateDecision {
  reference: string; // our id
  providerReference: string;
  decision: 'approve' | 'decline';
}

/** An OTP for a collection the upstream holds at its OTP step. */
export interface OtpSubmission {
  reference: string; // our id
  providerReference: string;
  otp: string;
}

export type RailOutcome = { status: 'pending' } | { status: 'success'; receipt?: VendReceipt } | { status: 'failed'; reason: string };

export interface StatusQuery {
  operation: 'collect' | 'payout';
  reference: string; // our id
  providerReference: string;
}

export interface InboundCallback {
  method: string;
  /** What follows /internal/callbacks/{provider} in the path, e.g. "/tok_abc". */
  subpath: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  body: unknown;
}

export interface ParsedCallback {
  reference: string; // our charge or transfer id
  operation?: 'collect' | 'payout';
  providerReference?: string;
  outcome: RailOutcome;
}

export type RailErrorKind = 'timeout' | 'connection' | 'server' | 'protocol' | 'rejected';

/**
 * A failed provider call. timeout, connection, server (5xx) and protocol (an unreadable answer)
 * mean "this provider could not serve it": the router fails over. rejected means the provider
 * refused this request on its merits (a 4xx): no other provider is tried.
 */
export class RailError extends Error {
  constructor(
    readonly kind: RailErrorKind,
    message: string,
    readonly detail: { httpStatus?: number; providerCode?: string } = {},
  ) {
    super(message);
    this.name = 'RailError';
  }
  get failsOver(): boolean {
    return this.kind !== 'rejected';
  }
}

export interface RailProvider {
  readonly name: string;
  readonly channels: readonly Channel[];
  /** Mobile networks served on the momo channel. */
  readonly networks: readonly Network[];
  /** Where it sends requests: its mock's base URL, or the real upstream's. */
  baseUrl(): string;
  collect(req: CollectRequest): Promise<RailAccepted>;
  payout(req: PayoutRequest): Promise<RailAccepted>;
  /** null when the upstream says the wallet or account does not exist. */
  resolveName(req: ResolveRequest): Promise<{ name: string } | null>;
  status(query: StatusQuery): Promise<RailOutcome>;
  /** Card processors: completes a collection's OTP step; the upstream's word on it (a wrong OTP fails it). */
  submitOtp?(submission: OtpSubmission): Promise<RailOutcome>;
  /** Direct debits, sandbox only: answers the mandate prompt as the account holder would at their bank. */
  decideMandate?(decision: MandateDecision): Promise<RailOutcome>;
  /** Is this callback really from the provider? Uses constant-time comparison. */
  verifyCallback(callback: InboundCallback): boolean;
  /** Throws RailError('protocol') when the body is not a callback it understands. */
  parseCallback(callback: InboundCallback): ParsedCallback;
}

/** What every adapter is given by the composition root. */
export interface RailAdapterContext {
  /** The service's own base URL (known once it listens), e.g. http://127.0.0.1:4010. */
  selfBaseUrl(): string;
  /** Fresh unique ids: `uuid()` for MTN's X-Reference-Id. */
  uuid(): string;
  /** Real-time network timeout for each upstream call. */
  timeoutMs: number;
  /** Business time, for signature timestamps and their tolerance windows. */
  clock: Clock;
  /** Sees each upstream call (contracts); absent in normal runs. */
  tap?: UpstreamTap;
  /** How a call is carried: railyard's own mocks in process (ownMocksExchange); over HTTP when absent. */
  exchange?: HttpExchange;
}

/** Where an adapter sends its calls: the configured upstream, or the in-process mock of that provider. */
export function upstreamBaseUrl(configured: string | undefined, ctx: RailAdapterContext, provider: string): string {
  return (configured ?? `${ctx.selfBaseUrl()}/mocks/${provider}`).replace(/\/+$/, '');
}
