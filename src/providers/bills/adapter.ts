import { headerValue, isJsonObject, textField } from '../../kernel/json-object.ts';
import type { Network } from '../../kernel/msisdn.ts';
import { hmacSha256Hex, safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type BillVend,
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

// The biller aggregator (src/providers/bills/mock.ts, docs/v1/bills.md): a bill payment is a payout
// on channel `bills`, sent as a vend (POST /vends) by our reference, settled by a signed callback
// (X-Bills-Signature, hex HMAC-SHA256 of the raw body) or by GET /vends/:reference. A successful
// ECG vend carries its token and units, which the outcome passes on.

export interface BillsAdapterConfig {
  /** The aggregator's base URL; undefined means the in-process mock. */
  baseUrl?: string;
  apiKey: string;
  signingSecret: string;
}

const PROVIDER = 'bills';

type Json = Record<string, unknown>;

/** The aggregator's biller code for a bill: MTN-AIRTIME, TELECEL-DATA, ECG-PREPAID, GWCL, DSTV, GOTV. */
export function billerCode(bill: BillVend): string {
  if (bill.category === 'airtime') return `${bill.biller}-AIRTIME`;
  if (bill.category === 'data') return `${bill.biller}-DATA`;
  if (bill.category === 'electricity') return `${bill.biller}-PREPAID`;
  return bill.biller;
}

/** A vend's state as an outcome; a successful one carries its token and units, if any. */
export function vendOutcome(data: Json): RailOutcome {
  const status = textField(data.status);
  if (status === 'pending') return { status: 'pending' };
  if (status === 'successful') {
    const token = textField(data.token);
    const units = textField(data.units);
    return { status: 'success', ...(token || units ? { receipt: { ...(token ? { token } : {}), ...(units ? { units } : {}) } } : {}) };
  }
  if (status === 'failed') return { status: 'failed', reason: textField(data.failure_code) ?? 'VEND_FAILED' };
  throw new RailError('protocol', `bills gave an unknown vend status ${JSON.stringify(status)}`);
}

export class BillsAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[] = ['bills'];
  readonly networks: readonly Network[] = [];

  constructor(
    private readonly config: BillsAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {}

  baseUrl(): string {
    // Computed on each call: selfBaseUrl is only known once the server listens.
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  collect(_req: CollectRequest): Promise<RailAccepted> {
    return Promise.reject(new RailError('rejected', 'bills only vends: it collects nothing'));
  }

  async payout(req: PayoutRequest): Promise<RailAccepted> {
    if (!req.bill) throw new RailError('rejected', 'bills needs a bill to vend');
    const body = {
      reference: req.reference,
      biller: billerCode(req.bill),
      ...(req.bill.product ? { product: req.bill.product } : {}),
      customer: req.bill.customer,
      amount: req.amount,
      currency: req.currency,
      callback_url: `${this.ctx.selfBaseUrl().replace(/\/+$/, '')}/internal/callbacks/${PROVIDER}`,
    };
    let data: Json;
    try {
      data = await this.call('POST', '/vends', body);
    } catch (err) {
      // A reference it has seen: an earlier call (cut off by a timeout) was taken, and that vend stands.
      if (!(err instanceof RailError) || err.detail.providerCode !== 'DUPLICATE_REFERENCE') throw err;
      data = await this.call('GET', `/vends/${encodeURIComponent(req.reference)}`);
    }
    const vendId = textField(data.vend_id);
    if (!vendId) throw new RailError('protocol', 'bills accepted the vend without a vend_id');
    return { providerReference: vendId };
  }

  resolveName(_req: ResolveRequest): Promise<{ name: string } | null> {
    return Promise.reject(new RailError('rejected', 'bills resolves no names'));
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    return vendOutcome(await this.call('GET', `/vends/${encodeURIComponent(query.reference)}`));
  }

  verifyCallback(callback: InboundCallback): boolean {
    const signature = headerValue(callback.headers, 'x-bills-signature');
    if (!signature) return false;
    return safeEqual(hmacSha256Hex(this.config.signingSecret, callback.rawBody), signature.toLowerCase());
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    const body = callback.body;
    if (!isJsonObject(body) || !isJsonObject(body.data)) throw new RailError('protocol', 'bills callback has no data');
    const event = textField(body.event);
    if (event !== 'vend.successful' && event !== 'vend.failed') throw new RailError('protocol', `bills callback event ${JSON.stringify(event)} is not one railyard handles`);
    const reference = textField(body.data.reference);
    if (!reference) throw new RailError('protocol', 'bills callback has no data.reference');
    const vendId = textField(body.data.vend_id);
    return { reference, operation: 'payout', ...(vendId ? { providerReference: vendId } : {}), outcome: vendOutcome(body.data) };
  }

  /** One call: the `data` of a 2xx `{status:'success'}` answer, or the RailError that classifies the failure. */
  private async call(method: 'GET' | 'POST', path: string, payload?: Json): Promise<Json> {
    const res = await callUpstream(
      PROVIDER,
      `${this.baseUrl()}${path}`,
      {
        method,
        headers: {
          authorization: `Bearer ${this.config.apiKey}`,
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
    const code = json ? textField(json.code) : undefined;
    const what = `${method} ${path}`;
    const detail = { httpStatus: res.status, ...(code ? { providerCode: code } : {}) };
    if (res.status >= 500) throw new RailError('server', `bills ${res.status} on ${what}${code ? `: ${code}` : ''}`, detail);
    if (res.status >= 400) throw new RailError('rejected', `bills refused ${what} (${res.status})${code ? `: ${code}` : ''}`, detail);
    if (res.status < 200 || res.status >= 300 || !json || json.status !== 'success' || !isJsonObject(json.data)) {
      throw new RailError('protocol', `bills gave an unreadable answer (${res.status}) to ${what}`, { httpStatus: res.status });
    }
    return json.data;
  }
}
