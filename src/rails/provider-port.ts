import type { UpstreamTap } from './upstream-tap.ts';
import type { Clock } from '../kernel/clock.ts';
import type { Network } from '../kernel/msisdn.ts';

// The provider port. Each adapter speaks one upstream's wire format over HTTP with a timeout;
// the router (rail-router.ts) picks adapters by priority and fails over between them.

/** momo and bank carry /api/v1 charges and transfers; card, bank_debit and bills serve the /v1 family. */
export type Channel = 'momo' | 'bank' | 'card' | 'bank_debit' | 'bills';
export type RailOperation = 'collect' | 'payout' | 'resolve';

export interface CollectRequest {
  /** Our charge id; sent as the upstream's client reference (MTN externalId, Hubtel ClientReference). */
  reference: string;
  amount: number; // minor units
  currency: 'GHS';
  msisdn: string; // 233XXXXXXXXX
  network: Network;
  description: string;
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
}

export type RailOutcome =
  | { status: 'pending' }
  | { status: 'success'; receipt?: VendReceipt }
  | { status: 'failed'; reason: string };

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
}
