import { headerValue, isJsonObject, textField } from '../../kernel/json-object.ts';
import { inferNetwork, toLocalMsisdn, type Network } from '../../kernel/msisdn.ts';
import { hmacSha512Hex, safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type Channel,
  type CollectRequest,
  momoCollect,
  type InboundCallback,
  type OtpSubmission,
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

// Paystack (Ghana): mobile-money charges (POST /charge), transfers to a recipient
// (POST /transferrecipient, then POST /transfer) to a wallet or a GhIPSS bank account, account
// resolution (GET /bank/resolve), status by reference (GET /transaction/verify, /transfer/verify),
// a Telecel charge's voucher (send_otp, then POST /charge/submit_otp) and webhooks signed with x-paystack-signature = hex HMAC-SHA512(secret key, raw body).
// Amounts are pesewas on the wire; our ids (lowercase, `_`) are valid Paystack references as they are.

export interface PaystackAdapterConfig {
  /** Paystack's base URL (https://api.paystack.co); undefined means the in-process mock. */
  baseUrl?: string;
  secretKey: string;
  channels: readonly Channel[];
  networks: readonly Network[];
  /** Paystack needs a customer email on every charge; ours is <msisdn>@<this domain>. */
  customerEmailDomain: string;
}

const PROVIDER = 'paystack';

/** Paystack's mobile_money.provider for a charge. */
export const PAYSTACK_CHARGE_PROVIDERS: Readonly<Record<Network, string>> = { MTN: 'mtn', TELECEL: 'vod', AT: 'atl' };
/** The bank_code of a mobile_money transfer recipient. */
export const PAYSTACK_MOMO_BANK_CODES: Readonly<Record<Network, string>> = { MTN: 'MTN', TELECEL: 'VOD', AT: 'ATL' };

// A charge waiting for the customer (prompt, voucher, or still in flight) is pending for us.
const PENDING_CHARGE = new Set(['pay_offline', 'send_otp', 'pending', 'ongoing', 'processing', 'queued']);
const PENDING_TRANSFER = new Set(['pending', 'otp', 'queued', 'processing', 'received']);

type Json = Record<string, unknown>;

/**
 * Paystack's failure text ("Insufficient Funds", "Declined") as a reason word the service maps
 * (insufficient_funds, declined); 'failed' when it gave none.
 */
export function paystackFailureReason(message: string | undefined): string {
  const word = (message ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return word || 'failed';
}

function chargeOutcome(data: Json): RailOutcome {
  const status = textField(data.status);
  if (status === 'success') return { status: 'success' };
  if (status && PENDING_CHARGE.has(status)) return { status: 'pending' };
  if (status === 'failed' || status === 'abandoned' || status === 'reversed') {
    return { status: 'failed', reason: paystackFailureReason(textField(data.gateway_response) ?? status) };
  }
  throw new RailError('protocol', `paystack gave an unknown charge status ${JSON.stringify(status)}`);
}

function transferOutcome(data: Json): RailOutcome {
  const status = textField(data.status);
  if (status === 'success') return { status: 'success' };
  if (status && PENDING_TRANSFER.has(status)) return { status: 'pending' };
  if (status === 'failed') return { status: 'failed', reason: paystackFailureReason(textField(data.gateway_response) ?? status) };
  if (status === 'reversed') return { status: 'failed', reason: 'reversed' };
  throw new RailError('protocol', `paystack gave an unknown transfer status ${JSON.stringify(status)}`);
}

export class PaystackAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[];
  readonly networks: readonly Network[];

  constructor(
    private readonly config: PaystackAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {
    this.channels = [...config.channels];
    this.networks = [...config.networks];
  }

  baseUrl(): string {
    // Computed on each call: selfBaseUrl is only known once the server listens.
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  async collect(request: CollectRequest): Promise<RailAccepted> {
    const req = momoCollect(request, PROVIDER);
    const network = this.networkOf(req.network, req.msisdn);
    const body = {
      email: `${req.msisdn}@${this.config.customerEmailDomain}`,
      amount: req.amount,
      currency: req.currency,
      reference: req.reference,
      mobile_money: { phone: toLocalMsisdn(req.msisdn), provider: PAYSTACK_CHARGE_PROVIDERS[network] },
      metadata: { description: req.description },
    };
    let data: Json;
    try {
      data = await this.call('POST', '/charge', body);
    } catch (err) {
      // A reference Paystack has seen: an earlier call (cut off by a timeout) was taken.
      if (!isDuplicate(err)) throw err;
      data = await this.call('GET', `/transaction/verify/${encodeURIComponent(req.reference)}`);
    }
    const outcome = chargeOutcome(data);
    if (outcome.status === 'failed') throw new RailError('rejected', `paystack declined the charge: ${outcome.reason}`, { providerCode: outcome.reason });
    const accepted = { providerReference: textField(data.reference) ?? req.reference };
    // A Telecel wallet: Paystack waits for the voucher the customer generates (send_otp).
    if (textField(data.status) === 'send_otp') return { ...accepted, nextAction: { type: 'otp', message: textField(data.display_text) ?? 'Enter the voucher from your phone' } };
    return accepted;
  }

  /** A charge's voucher (Telecel's send_otp step): Paystack's word on the charge after it. */
  async submitOtp(submission: OtpSubmission): Promise<RailOutcome> {
    return chargeOutcome(await this.call('POST', '/charge/submit_otp', { otp: submission.otp, reference: submission.providerReference }));
  }

  async payout(req: PayoutRequest): Promise<RailAccepted> {
    const recipient = await this.recipientFor(req);
    let data: Json;
    try {
      data = await this.call('POST', '/transfer', {
        source: 'balance',
        amount: req.amount,
        recipient,
        reference: req.reference,
        reason: req.description,
        currency: req.currency,
      });
    } catch (err) {
      if (!isDuplicate(err)) throw err;
      data = await this.call('GET', `/transfer/verify/${encodeURIComponent(req.reference)}`);
    }
    const outcome = transferOutcome(data);
    if (outcome.status === 'failed') throw new RailError('rejected', `paystack refused the transfer: ${outcome.reason}`, { providerCode: outcome.reason });
    const code = textField(data.transfer_code);
    if (!code) throw new RailError('protocol', 'paystack queued the transfer without a transfer_code');
    return { providerReference: code };
  }

  async resolveName(req: ResolveRequest): Promise<{ name: string } | null> {
    const { accountNumber, bankCode } = this.destination(req);
    const query = new URLSearchParams({ account_number: accountNumber, bank_code: bankCode });
    let data: Json;
    try {
      data = await this.call('GET', `/bank/resolve?${query}`);
    } catch (err) {
      // Paystack answers 422 "Could not resolve account name" for an account that does not exist.
      if (err instanceof RailError && err.kind === 'rejected' && err.detail.httpStatus === 422) return null;
      throw err;
    }
    const name = textField(data.account_name)?.trim();
    if (!name) throw new RailError('protocol', 'paystack resolved the account without an account_name');
    return { name };
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    const reference = encodeURIComponent(query.reference);
    if (query.operation === 'collect') return chargeOutcome(await this.call('GET', `/transaction/verify/${reference}`));
    return transferOutcome(await this.call('GET', `/transfer/verify/${reference}`));
  }

  verifyCallback(callback: InboundCallback): boolean {
    // The webhook URL is set once in Paystack's dashboard; the signature is the proof.
    const signature = headerValue(callback.headers, 'x-paystack-signature');
    if (!signature) return false;
    return safeEqual(hmacSha512Hex(this.config.secretKey, callback.rawBody), signature.toLowerCase());
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body: unknown = callback.body;
    if (!isJsonObject(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'paystack webhook body is not JSON');
      }
    }
    if (!isJsonObject(body) || !isJsonObject(body.data)) throw new RailError('protocol', 'paystack webhook has no data');
    const event = textField(body.event);
    const data = body.data;
    const reference = textField(data.reference);
    if (!reference) throw new RailError('protocol', 'paystack webhook has no data.reference');
    switch (event) {
      case 'charge.success':
        return { reference, operation: 'collect', providerReference: reference, outcome: { status: 'success' } };
      case 'transfer.success':
      case 'transfer.failed':
      case 'transfer.reversed': {
        const code = textField(data.transfer_code);
        const outcome: RailOutcome =
          event === 'transfer.success' ? { status: 'success' } : { status: 'failed', reason: event === 'transfer.reversed' ? 'reversed' : paystackFailureReason(textField(data.gateway_response)) };
        return { reference, operation: 'payout', ...(code ? { providerReference: code } : {}), outcome };
      }
      default:
        throw new RailError('protocol', `paystack webhook event ${JSON.stringify(event)} is not one railyard handles`);
    }
  }

  /** A recipient code for the payout's wallet or bank account (Paystack reuses one for the same details). */
  private async recipientFor(req: PayoutRequest): Promise<string> {
    const { type, accountNumber, bankCode } = this.destination(req);
    const data = await this.call('POST', '/transferrecipient', {
      type,
      name: req.accountName ?? accountNumber,
      account_number: accountNumber,
      bank_code: bankCode,
      currency: req.currency,
    });
    const code = textField(data.recipient_code);
    if (!code) throw new RailError('protocol', 'paystack created the recipient without a recipient_code');
    return code;
  }

  private destination(req: { channel: Channel; msisdn?: string; network?: Network; accountNumber?: string; bankCode?: string }) {
    if (req.channel === 'momo') {
      if (!req.msisdn) throw new RailError('rejected', 'paystack needs the msisdn of a mobile money wallet');
      const network = this.networkOf(req.network, req.msisdn);
      return { type: 'mobile_money', accountNumber: toLocalMsisdn(req.msisdn), bankCode: PAYSTACK_MOMO_BANK_CODES[network] };
    }
    if (!req.accountNumber || !req.bankCode) throw new RailError('rejected', 'paystack needs accountNumber and bankCode for a bank account');
    return { type: 'ghipss', accountNumber: req.accountNumber, bankCode: req.bankCode };
  }

  private networkOf(network: Network | undefined, msisdn: string): Network {
    const resolved = network ?? inferNetwork(msisdn);
    if (!resolved) throw new RailError('rejected', `paystack cannot tell the network of ${msisdn}`);
    return resolved;
  }

  /** One call: Paystack's `data` from a 2xx `{status:true}` answer, or the RailError that classifies the failure. */
  private async call(method: 'GET' | 'POST', path: string, payload?: Json): Promise<Json> {
    const url = `${this.baseUrl()}${path}`;
    const res = await callUpstream(
      PROVIDER,
      url,
      {
        method,
        headers: {
          authorization: `Bearer ${this.config.secretKey}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
        ...(payload ? { body: JSON.stringify(payload) } : {}),
      },
      this.ctx,
    );
    let parsed: unknown;
    try {
      parsed = res.text ? JSON.parse(res.text) : undefined;
    } catch {
      parsed = undefined;
    }
    const json = isJsonObject(parsed) ? parsed : undefined;
    const message = json ? textField(json.message) : undefined;
    const what = `${method} ${path.split('?')[0]}`;
    // The message is what the service maps to a failure reason ("Insufficient Funds"); Paystack's
    // code (duplicate_reference, invalid_transfer_recipient) only names the kind of refusal.
    const detail = { httpStatus: res.status, ...(message ? { providerCode: message } : {}) };
    if (res.status >= 500) throw new RailError('server', `paystack ${res.status} on ${what}${message ? `: ${message}` : ''}`, detail);
    if (res.status >= 400) throw new RailError('rejected', `paystack refused ${what} (${res.status})${message ? `: ${message}` : ''}`, detail);
    if (res.status < 200 || res.status >= 300 || !json || json.status !== true || !isJsonObject(json.data)) {
      throw new RailError('protocol', `paystack gave an unreadable answer (${res.status}) to ${what}`, { httpStatus: res.status });
    }
    return json.data;
  }
}

/** Paystack's refusal of a reference it has seen before. */
function isDuplicate(err: unknown): boolean {
  return err instanceof RailError && err.kind === 'rejected' && /duplicate/i.test(err.detail.providerCode ?? '');
}
