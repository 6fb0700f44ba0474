import type { Clock } from '../../kernel/clock.ts';
import type { Network } from '../../kernel/msisdn.ts';
import { hmacSha256Hex, safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type Channel,
  type CollectRequest,
  type InboundCallback,
  type ParsedCallback,
  type PayoutRequest,
  type RailAccepted,
  type RailAdapterContext,
  type RailOutcome,
  type RailProvider,
  type ResolveRequest,
  type StatusQuery,
  upstreamBaseUrl,
} from '../../rails/provider-port.ts';
import { callUpstream } from '../../rails/upstream-call.ts';

// Adapter for the GhIPSS Instant Pay-style bank rail. The wire format (endpoints, HMAC request
// signing, response codes) is described at the top of src/providers/bank-rail/mock.ts.

export interface BankRailAdapterConfig {
  /** The rail's base URL; undefined means the in-process mock at /mocks/bank-rail. */
  baseUrl?: string;
  clientId: string;
  clientSecret: string;
  callbackToken: string;
}

/**
 * The rail signs with a timestamp that both sides check against their clock, so this adapter
 * needs the business clock (a virtual clock in replays, where the mock checks the same one).
 */
export interface BankRailAdapterContext extends RailAdapterContext {
  clock: Clock;
}

export type BankFailureReason = 'insufficient_funds' | 'account_not_found' | 'rejected_by_bank';

/** Words the service uses for a failed bank transfer, from the rail's response code ("51", or "51 ..."). */
export function bankRailFailureReason(code: string): BankFailureReason {
  const digits = /^\s*(\d{2})\b/.exec(code)?.[1];
  if (digits === '51') return 'insufficient_funds';
  if (digits === '25') return 'account_not_found';
  return 'rejected_by_bank';
}

const PROVIDER = 'bank-rail';
const MAX_CLOCK_SKEW_SECONDS = 300;
const NARRATION_MAX = 140;
// Codes that mean "the switch or the destination bank could not serve it", not a refusal.
const UNAVAILABLE_CODES = new Set(['91', '96']);

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function header(headers: InboundCallback['headers'], name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function sign(secret: string, timestamp: string, method: string, path: string, rawBody: string): string {
  return hmacSha256Hex(secret, `${timestamp}.${method.toUpperCase()}.${path}.${rawBody}`);
}

function outcomeFrom(body: Json): RailOutcome {
  const code = typeof body.responseCode === 'string' ? body.responseCode : undefined;
  switch (body.status) {
    case 'SUCCESS':
      return { status: 'success' };
    case 'PENDING':
      return { status: 'pending' };
    case 'FAILED':
      if (!code) throw new RailError('protocol', 'bank-rail reported a failure without a responseCode');
      // The code itself is the reason; bankRailFailureReason turns it into the service's words.
      return { status: 'failed', reason: code };
    default:
      throw new RailError('protocol', 'bank-rail answered with an unknown transfer status');
  }
}

export class BankRailAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[] = ['bank'];
  readonly networks: readonly Network[] = [];

  constructor(
    private readonly config: BankRailAdapterConfig,
    private readonly ctx: BankRailAdapterContext,
  ) {}

  baseUrl(): string {
    // Computed on each call: selfBaseUrl is only known once the server listens.
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  private callbackUrl(): string {
    return `${this.ctx.selfBaseUrl()}/internal/callbacks/${PROVIDER}/${this.config.callbackToken}`;
  }

  async collect(_req: CollectRequest): Promise<RailAccepted> {
    throw new RailError('rejected', 'bank-rail does not collect');
  }

  async payout(req: PayoutRequest): Promise<RailAccepted> {
    if (req.channel !== 'bank' || !req.accountNumber || !req.bankCode) {
      throw new RailError('rejected', 'bank-rail pays out only to a bank account (accountNumber and bankCode)');
    }
    const { status, body } = await this.callOrKnown('POST', '/gip/v1/credit-transfers', req.reference, {
      sessionId: req.reference,
      amount: req.amount, // integer pesewas: this rail speaks minor units
      currency: req.currency,
      destinationBankCode: req.bankCode,
      accountNumber: req.accountNumber,
      accountName: req.accountName ?? '',
      narration: req.description.slice(0, NARRATION_MAX),
      callbackUrl: this.callbackUrl(),
    });
    this.expectCodes(body, status, ['09', '00']);
    if (typeof body.transactionId !== 'string' || body.transactionId === '') {
      throw new RailError('protocol', 'bank-rail accepted the transfer without a transactionId', { httpStatus: status });
    }
    return { providerReference: body.transactionId };
  }

  async resolveName(req: ResolveRequest): Promise<{ name: string } | null> {
    if (req.channel !== 'bank' || !req.accountNumber || !req.bankCode) {
      throw new RailError('rejected', 'bank-rail resolves only bank accounts (accountNumber and bankCode)');
    }
    const { status, body } = await this.call('POST', '/gip/v1/name-enquiry', {
      destinationBankCode: req.bankCode,
      accountNumber: req.accountNumber,
      sessionId: this.ctx.uuid(),
    });
    if (body.responseCode === '25') return null;
    this.expectCodes(body, status, ['00']);
    if (typeof body.accountName !== 'string' || body.accountName === '') {
      throw new RailError('protocol', 'bank-rail name enquiry succeeded without an accountName', { httpStatus: status });
    }
    return { name: body.accountName };
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    if (query.operation !== 'payout') throw new RailError('rejected', 'bank-rail does not collect');
    const { body } = await this.call('GET', `/gip/v1/credit-transfers/${encodeURIComponent(query.reference)}`);
    return outcomeFrom(body);
  }

  verifyCallback(callback: InboundCallback): boolean {
    // The token check first; then the rail's signature, made the same way as ours on requests.
    if (!safeEqual(callback.subpath, `/${this.config.callbackToken}`)) return false;
    const participant = header(callback.headers, 'x-participant-id');
    const timestamp = header(callback.headers, 'x-timestamp');
    const signature = header(callback.headers, 'x-signature');
    if (!participant || !timestamp || !signature) return false;
    if (!safeEqual(participant, this.config.clientId)) return false;
    if (!/^\d{1,12}$/.test(timestamp)) return false;
    if (Math.abs(Number(timestamp) - Math.floor(this.ctx.clock.now() / 1000)) > MAX_CLOCK_SKEW_SECONDS) return false;
    // Signed over the path the rail POSTed to: the path of the callback URL we gave it.
    const path = new URL(this.callbackUrl()).pathname;
    const expected = sign(this.config.clientSecret, timestamp, callback.method, path, callback.rawBody);
    return safeEqual(expected, signature.toLowerCase());
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body: unknown = callback.body;
    if (!isRecord(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'bank-rail callback body is not JSON');
      }
    }
    if (!isRecord(body) || typeof body.sessionId !== 'string' || body.sessionId === '') {
      throw new RailError('protocol', 'bank-rail callback has no sessionId');
    }
    return {
      reference: body.sessionId,
      operation: 'payout',
      ...(typeof body.transactionId === 'string' ? { providerReference: body.transactionId } : {}),
      outcome: outcomeFrom(body),
    };
  }

  /**
   * A credit transfer, or, when the rail says the sessionId was used before (94: an earlier call,
   * cut off by a timeout or a restart, was taken), the transfer it already holds.
   */
  private async callOrKnown(method: 'POST', path: string, sessionId: string, payload: Json): Promise<{ status: number; body: Json }> {
    try {
      return await this.call(method, path, payload);
    } catch (err) {
      if (!(err instanceof RailError) || err.detail.providerCode !== '94') throw err;
      return this.call('GET', `/gip/v1/credit-transfers/${encodeURIComponent(sessionId)}`);
    }
  }

  /** A 2xx whose responseCode is not one we expect: unavailable codes fail over, others are refusals. */
  private expectCodes(body: Json, httpStatus: number, expected: string[]): void {
    const code = body.responseCode;
    if (typeof code !== 'string') throw new RailError('protocol', 'bank-rail answered without a responseCode', { httpStatus });
    if (expected.includes(code)) return;
    const message = `bank-rail answered ${code}: ${typeof body.responseMessage === 'string' ? body.responseMessage : 'no message'}`;
    throw new RailError(UNAVAILABLE_CODES.has(code) ? 'server' : 'rejected', message, { httpStatus, providerCode: code });
  }

  private async call(method: 'GET' | 'POST', path: string, payload?: Json): Promise<{ status: number; body: Json }> {
    const url = `${this.baseUrl()}${path}`;
    const target = new URL(url);
    const rawBody = payload === undefined ? '' : JSON.stringify(payload);
    const timestamp = String(Math.floor(this.ctx.clock.now() / 1000));
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-participant-id': this.config.clientId,
      'x-timestamp': timestamp,
      'x-signature': sign(this.config.clientSecret, timestamp, method, target.pathname + target.search, rawBody),
    };
    if (payload !== undefined) headers['content-type'] = 'application/json';

    const res = await callUpstream('bank-rail', url, { method, headers, ...(payload === undefined ? {} : { body: rawBody }) }, this.ctx);
    const text = res.text;

    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const code = isRecord(body) && typeof body.responseCode === 'string' ? body.responseCode : undefined;
    const message = isRecord(body) && typeof body.responseMessage === 'string' ? body.responseMessage : undefined;
    const detail = { httpStatus: res.status, ...(code ? { providerCode: code } : {}) };
    const summary = `${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;

    if (res.status >= 500) throw new RailError('server', `bank-rail failed with ${summary}`, detail);
    if (res.status >= 400) throw new RailError('rejected', `bank-rail refused with ${summary}`, detail);
    if (res.status < 200 || res.status >= 300 || !isRecord(body)) {
      throw new RailError('protocol', `bank-rail answered ${res.status} with an unreadable body`, { httpStatus: res.status });
    }
    return { status: res.status, body };
  }
}
