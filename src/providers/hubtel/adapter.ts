import { toMajorString } from '../../kernel/money.ts';
import { inferNetwork, type Network } from '../../kernel/msisdn.ts';
import { safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type Channel,
  type CollectRequest,
  momoCollect,
  type InboundCallback,
  type ParsedCallback,
  type PayoutRequest,
  type RailAccepted,
  type RailAdapterContext,
  type RailOutcome,
  type RailProvider,
  type ResolveRequest,
  type StatusQuery,
} from '../../rails/provider-port.ts';
import { callUpstream } from '../../rails/upstream-call.ts';

// Hubtel: Direct Receive Money (collect), Direct Send Money (payout), their status checks and
// the Verification API (name enquiry). Each lives on its own host.

export interface HubtelHosts {
  /** Direct Receive Money, rmp.hubtel.com */
  receive: string;
  /** Receive status check, api-txnstatus.hubtel.com */
  receiveStatus: string;
  /** Direct Send Money, smp.hubtel.com */
  send: string;
  /** Send status check, smrsc.hubtel.com */
  sendStatus: string;
  /** Verification API, rnv.hubtel.com */
  verify: string;
}

export const HUBTEL_PRODUCTION_HOSTS: Readonly<HubtelHosts> = Object.freeze({
  receive: 'https://rmp.hubtel.com',
  receiveStatus: 'https://api-txnstatus.hubtel.com',
  send: 'https://smp.hubtel.com',
  sendStatus: 'https://smrsc.hubtel.com',
  verify: 'https://rnv.hubtel.com',
});

export interface HubtelAdapterConfig {
  /** Undefined: the in-process mock, each host under ${selfBaseUrl}/mocks/hubtel/<prefix>. */
  hosts?: HubtelHosts;
  clientId: string;
  clientSecret: string;
  /** POS Sales ID: receive money, receive status, verification. */
  posSalesId: string;
  /** Prepaid Deposit ID: send money and its status. */
  prepaidDepositId: string;
  /** The secret path segment of our callback URL (Hubtel signs nothing). */
  callbackToken: string;
}

/** The mock's path prefix for each host. */
const MOCK_PREFIXES: Readonly<HubtelHosts> = {
  receive: 'rmp',
  receiveStatus: 'txnstatus',
  send: 'smp',
  sendStatus: 'smrsc',
  verify: 'rnv',
};

// Telecel still uses Vodafone's channel name; AT uses tiGO's.
const NETWORK_CHANNELS: Readonly<Record<Network, string>> = {
  MTN: 'mtn-gh',
  TELECEL: 'vodafone-gh',
  AT: 'tigo-gh',
};

const OUR_ID = /^([A-Za-z]{3})_([A-Za-z0-9]{1,33})$/;
const ENCODED_ID = /^([A-Za-z]{3})([A-Za-z0-9]{1,33})$/;
// A 2-letter prefix (a /v1 payout's po_) whose id part starts with a digit, as every generated
// id's time part does: two letters then a digit can only come from such an id.
const OUR_SHORT_ID = /^([A-Za-z]{2})_([0-9][A-Za-z0-9]{0,33})$/;
const ENCODED_SHORT_ID = /^([A-Za-z]{2})([0-9][A-Za-z0-9]{0,33})$/;

/**
 * Our ids (chg_01h…, trf_01h…, po_01h…) as a Hubtel ClientReference, which must be alphanumeric
 * and at most 36 characters: the underscore after the prefix is dropped. Reversible without any
 * lookup table, so callbacks and polls still map back after a restart.
 */
export function toHubtelClientReference(reference: string): string {
  const match = OUR_ID.exec(reference) ?? OUR_SHORT_ID.exec(reference);
  if (!match) {
    throw new RailError('rejected', `reference ${JSON.stringify(reference)} cannot be sent as a Hubtel ClientReference`);
  }
  return match[1]! + match[2]!;
}

/** The inverse of toHubtelClientReference: the underscore goes back after the prefix. */
export function fromHubtelClientReference(clientReference: string): string {
  const match = ENCODED_SHORT_ID.exec(clientReference) ?? ENCODED_ID.exec(clientReference);
  if (!match) throw new RailError('protocol', `ClientReference ${JSON.stringify(clientReference)} is not one of ours`);
  return `${match[1]}_${match[2]}`;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export class HubtelAdapter implements RailProvider {
  readonly name = 'hubtel';
  readonly channels: readonly Channel[] = ['momo'];
  readonly networks: readonly Network[] = ['MTN', 'TELECEL', 'AT'];

  constructor(
    private readonly config: HubtelAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {}

  baseUrl(): string {
    return this.config.hosts ? this.config.hosts.receive : this.mockBase();
  }

  async collect(request: CollectRequest): Promise<RailAccepted> {
    const req = momoCollect(request, this.name);
    const clientReference = toHubtelClientReference(req.reference);
    const body = await this.initiate('collect', req.reference, this.url('receive', `/merchantaccount/merchants/${this.pos()}/receive/mobilemoney`), {
      CustomerMsisdn: req.msisdn,
      Channel: this.channelFor(req.network, req.msisdn),
      Amount: Number(toMajorString(req.amount, 'GHS')),
      PrimaryCallbackUrl: this.callbackUrl(),
      Description: description(req.description, req.reference),
      ClientReference: clientReference,
    });
    return this.accepted(body);
  }

  async payout(req: PayoutRequest): Promise<RailAccepted> {
    if (req.channel !== 'momo' || !req.msisdn) {
      throw new RailError('rejected', 'hubtel pays out to mobile money wallets only');
    }
    const clientReference = toHubtelClientReference(req.reference);
    const body = await this.initiate('payout', req.reference, this.url('send', `/api/merchants/${encodeURIComponent(this.config.prepaidDepositId)}/send/mobilemoney`), {
      ...(req.accountName ? { RecipientName: req.accountName } : {}),
      RecipientMsisdn: req.msisdn,
      Channel: this.channelFor(req.network, req.msisdn),
      Amount: Number(toMajorString(req.amount, 'GHS')),
      PrimaryCallbackURL: this.callbackUrl(),
      Description: description(req.description, req.reference),
      ClientReference: clientReference,
    });
    return this.accepted(body);
  }

  async resolveName(req: ResolveRequest): Promise<{ name: string } | null> {
    if (req.channel !== 'momo' || !req.msisdn) {
      throw new RailError('rejected', 'hubtel verifies mobile money wallets only');
    }
    const query = new URLSearchParams({ channel: this.channelFor(req.network, req.msisdn), customerMsisdn: req.msisdn });
    const body = await this.call('GET', this.url('verify', `/v2/merchantaccount/merchants/${this.pos()}/mobilemoney/verify?${query}`));
    // (inference, as in the mock) responseCode 0000 with data.isRegistered; unregistered means null.
    const data = body.data;
    if (text(body.responseCode) !== '0000' || !isObject(data) || typeof data.isRegistered !== 'boolean') {
      throw new RailError('protocol', 'hubtel verify answered without a registration result', {
        providerCode: text(body.responseCode),
      });
    }
    if (!data.isRegistered) return null;
    const name = text(data.name)?.trim();
    if (!name) throw new RailError('protocol', 'hubtel verify said registered but gave no name');
    return { name };
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    const clientReference = encodeURIComponent(toHubtelClientReference(query.reference));
    if (query.operation === 'collect') {
      const body = await this.call('GET', this.url('receiveStatus', `/transactions/${this.pos()}/status?clientReference=${clientReference}`));
      const data = body.data;
      const code = text(body.responseCode);
      if (!isObject(data) || !code) throw new RailError('protocol', 'hubtel status check answered without data');
      switch (text(data.status)?.toLowerCase()) {
        case 'paid':
          return { status: 'success' };
        case 'refunded':
          return { status: 'failed', reason: 'refunded' };
        case 'unpaid':
          // Hubtel has no "Failed" status: Unpaid with 0000 is still pending; Unpaid carrying a
          // failure code (as the mock reports a failed receive, the code of its callback) is final.
          return code === '0000' || code === '0001' ? { status: 'pending' } : { status: 'failed', reason: code };
        default:
          throw new RailError('protocol', `hubtel status check gave an unknown status ${JSON.stringify(data.status)}`);
      }
    }
    const body = await this.call('GET', this.url('sendStatus', `/api/merchants/${encodeURIComponent(this.config.prepaidDepositId)}/transactions/status?clientReference=${clientReference}`));
    const data = body.Data;
    if (!isObject(data)) throw new RailError('protocol', 'hubtel send status check answered without Data');
    switch (text(data.transactionStatus)?.toLowerCase()) {
      case 'success':
        return { status: 'success' };
      case 'pending':
        return { status: 'pending' };
      case 'failed':
        // The send status check carries no failure code; the callback's code is the detailed one.
        return { status: 'failed', reason: 'failed' };
      default:
        throw new RailError('protocol', `hubtel send status check gave an unknown status ${JSON.stringify(data.transactionStatus)}`);
    }
  }

  verifyCallback(callback: InboundCallback): boolean {
    // Hubtel signs nothing: the secret token in our callback URL is the only proof.
    return safeEqual(callback.subpath, `/${this.config.callbackToken}`);
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body = callback.body;
    if (!isObject(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'hubtel callback body is not JSON');
      }
    }
    if (!isObject(body)) throw new RailError('protocol', 'hubtel callback body is not an object');
    const code = text(body.ResponseCode);
    const data = body.Data;
    if (!code || !isObject(data) || !text(data.ClientReference)) {
      throw new RailError('protocol', 'hubtel callback lacks ResponseCode or Data.ClientReference');
    }
    const reference = fromHubtelClientReference(text(data.ClientReference)!);
    const outcome: RailOutcome = code === '0000' ? { status: 'success' } : code === '0001' ? { status: 'pending' } : { status: 'failed', reason: code };
    const operation = operationOf(reference, data);
    const providerReference = text(data.TransactionId);
    return {
      reference,
      ...(operation ? { operation } : {}),
      ...(providerReference ? { providerReference } : {}),
      outcome,
    };
  }

  /**
   * POSTs a receive or send. Hubtel refuses a ClientReference used before (4000); when it holds a
   * transaction under ours, an earlier call (cut off by a timeout or a restart) was taken, and
   * that transaction is the answer.
   */
  private async initiate(operation: 'collect' | 'payout', reference: string, url: string, body: Json): Promise<Json> {
    try {
      return await this.call('POST', url, body);
    } catch (err) {
      if (!(err instanceof RailError) || err.kind !== 'rejected' || err.detail.providerCode !== '4000') throw err;
      const transactionId = await this.knownTransactionId(operation, reference);
      if (!transactionId) throw err;
      return { ResponseCode: '0001', Data: { TransactionId: transactionId } };
    }
  }

  /** Hubtel's TransactionId for our reference, from its status check; undefined when it has none. */
  private async knownTransactionId(operation: 'collect' | 'payout', reference: string): Promise<string | undefined> {
    const clientReference = encodeURIComponent(toHubtelClientReference(reference));
    try {
      if (operation === 'collect') {
        const body = await this.call('GET', this.url('receiveStatus', `/transactions/${this.pos()}/status?clientReference=${clientReference}`));
        return isObject(body.data) ? text(body.data.transactionId) : undefined;
      }
      const path = `/api/merchants/${encodeURIComponent(this.config.prepaidDepositId)}/transactions/status?clientReference=${clientReference}`;
      const body = await this.call('GET', this.url('sendStatus', path));
      return isObject(body.Data) ? text(body.Data.TransactionId) : undefined;
    } catch (err) {
      if (err instanceof RailError && err.kind === 'rejected') return undefined;
      throw err;
    }
  }

  private accepted(body: Json): RailAccepted {
    const code = text(body.ResponseCode);
    const data = body.Data;
    if (code !== '0001' && code !== '0000') {
      // A 2xx that is still a refusal on the merits.
      throw new RailError('rejected', `hubtel refused: ${text(body.Message) ?? code ?? 'no ResponseCode'}`, { providerCode: code });
    }
    const providerReference = isObject(data) ? text(data.TransactionId) : undefined;
    if (!providerReference) throw new RailError('protocol', 'hubtel accepted without Data.TransactionId', { providerCode: code });
    return { providerReference };
  }

  private channelFor(network: Network | undefined, msisdn: string): string {
    const resolved = network ?? inferNetwork(msisdn);
    if (!resolved) throw new RailError('rejected', `hubtel cannot tell the network of ${msisdn}`);
    return NETWORK_CHANNELS[resolved];
  }

  private pos(): string {
    return encodeURIComponent(this.config.posSalesId);
  }

  private mockBase(): string {
    return `${this.ctx.selfBaseUrl()}/mocks/hubtel`;
  }

  private url(host: keyof HubtelHosts, path: string): string {
    const base = this.config.hosts ? this.config.hosts[host] : `${this.mockBase()}/${MOCK_PREFIXES[host]}`;
    return base.replace(/\/+$/, '') + path;
  }

  private callbackUrl(): string {
    return `${this.ctx.selfBaseUrl()}/internal/callbacks/hubtel/${this.config.callbackToken}`;
  }

  /** One upstream call: 2xx JSON object back, or the RailError that classifies the failure. */
  private async call(method: 'GET' | 'POST', url: string, body?: Json): Promise<Json> {
    const auth = Buffer.from(`${this.config.clientId}:${this.config.clientSecret}`).toString('base64');
    const { status, text: raw } = await callUpstream(
      'hubtel',
      url,
      {
        method,
        headers: {
          authorization: `Basic ${auth}`,
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      },
      this.ctx,
    );
    let parsed: unknown;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    const json = isObject(parsed) ? parsed : undefined;
    const providerCode = json ? (text(json.ResponseCode) ?? text(json.responseCode)) : undefined;
    const message = json ? (text(json.Message) ?? text(json.message)) : undefined;
    const detail = { httpStatus: status, ...(providerCode ? { providerCode } : {}) };
    if (status >= 500) throw new RailError('server', `hubtel ${status} on ${method} ${pathOf(url)}${message ? `: ${message}` : ''}`, detail);
    if (status >= 400) throw new RailError('rejected', `hubtel refused ${method} ${pathOf(url)} (${status})${message ? `: ${message}` : ''}`, detail);
    if (status < 200 || status >= 300 || !json) {
      throw new RailError('protocol', `hubtel gave an unreadable answer (${status}) to ${method} ${pathOf(url)}`, detail);
    }
    return json;
  }
}

/** Hubtel fails a receive whose description holds & % or ^ (code 2001), so they never go out. */
function description(wanted: string, reference: string): string {
  const clean = wanted.replace(/[&%^]/g, ' ').replace(/\s+/g, ' ').trim();
  return clean || reference;
}

function operationOf(reference: string, data: Json): 'collect' | 'payout' | undefined {
  if (reference.startsWith('chg_')) return 'collect';
  if (reference.startsWith('trf_')) return 'payout';
  // Otherwise by shape: receive callbacks carry OrderId/AmountCharged, send callbacks AmountDebited/RecipientName.
  if ('OrderId' in data || 'AmountCharged' in data) return 'collect';
  if ('AmountDebited' in data || 'RecipientName' in data) return 'payout';
  return undefined;
}

function pathOf(url: string): string {
  return URL.canParse(url) ? new URL(url).pathname : url;
}
