import { headerValue, isJsonObject, textField } from '../../kernel/json-object.ts';
import { hmacSha256Hex, safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type Channel,
  type CollectRequest,
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

// The card processor (an acquirer; wire format in docs/v1/collections.md): card charges by our
// reference (POST /v1/charges), an OTP step (POST /v1/charges/:id/otp), status by reference and
// webhooks signed `Card-Processor-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`.

export interface CardProcessorAdapterConfig {
  /** The processor's base URL; undefined means the in-process mock. */
  baseUrl?: string;
  apiKey: string;
  webhookSecret: string;
}

const PROVIDER = 'card-processor';
/** How far a webhook's timestamp may be from our clock. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

type Json = Record<string, unknown>;

/** A charge's status as the port's outcome. */
function outcomeOf(charge: Json): RailOutcome {
  const status = textField(charge.status);
  if (status === 'succeeded') return { status: 'success' };
  if (status === 'processing' || status === 'requires_otp') return { status: 'pending' };
  if (status === 'failed') return { status: 'failed', reason: textField(charge.failure_code) ?? 'generic_decline' };
  throw new RailError('protocol', `card-processor gave an unknown charge status ${JSON.stringify(status)}`);
}

export class CardProcessorAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[] = ['card'];
  readonly networks = [] as const;

  constructor(
    private readonly config: CardProcessorAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {}

  baseUrl(): string {
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  async collect(req: CollectRequest): Promise<RailAccepted> {
    if (req.channel !== 'card') throw new RailError('rejected', 'card-processor charges only cards');
    if (!req.card) return this.taken(req.reference);
    let charge: Json;
    try {
      charge = await this.call('POST', '/v1/charges', {
        merchant_reference: req.reference,
        amount: req.amount,
        currency: req.currency,
        card: req.card,
        description: req.description,
        callback_url: `${this.ctx.selfBaseUrl()}/internal/callbacks/${PROVIDER}`,
      });
    } catch (err) {
      // A reference it has seen: an earlier call (cut off by a timeout) was taken.
      if (!(err instanceof RailError && err.detail.providerCode === 'duplicate_reference')) throw err;
      charge = await this.call('GET', `/v1/charges/by-reference/${encodeURIComponent(req.reference)}`);
    }
    return this.accepted(charge);
  }

  /** The charge the processor took under this reference before, or a refusal when it took none. */
  private async taken(reference: string): Promise<RailAccepted> {
    try {
      return this.accepted(await this.call('GET', `/v1/charges/by-reference/${encodeURIComponent(reference)}`));
    } catch (err) {
      if (err instanceof RailError && err.detail.httpStatus === 404) {
        throw new RailError('rejected', 'card-processor never took this charge, and the card is not known any more', { providerCode: 'card_details_unavailable' });
      }
      throw err;
    }
  }

  private accepted(charge: Json): RailAccepted {
    const id = textField(charge.id);
    if (!id) throw new RailError('protocol', 'card-processor accepted the charge without an id');
    const outcome = outcomeOf(charge);
    if (outcome.status === 'failed') throw new RailError('rejected', `card-processor declined the charge: ${outcome.reason}`, { providerCode: outcome.reason });
    const next = isJsonObject(charge.next_action) ? charge.next_action : undefined;
    if (next && next.type === 'otp') return { providerReference: id, nextAction: { type: 'otp', message: textField(next.message) ?? 'Enter the OTP' } };
    return { providerReference: id };
  }

  async payout(_req: PayoutRequest): Promise<RailAccepted> {
    throw new RailError('rejected', 'card-processor does not pay out');
  }

  async resolveName(_req: ResolveRequest): Promise<{ name: string } | null> {
    throw new RailError('rejected', 'card-processor resolves no names');
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    if (query.operation !== 'collect') throw new RailError('rejected', 'card-processor only collects');
    return outcomeOf(await this.call('GET', `/v1/charges/by-reference/${encodeURIComponent(query.reference)}`));
  }

  async submitOtp(submission: OtpSubmission): Promise<RailOutcome> {
    return outcomeOf(await this.call('POST', `/v1/charges/${encodeURIComponent(submission.providerReference)}/otp`, { otp: submission.otp }));
  }

  verifyCallback(callback: InboundCallback): boolean {
    const signature = headerValue(callback.headers, 'card-processor-signature');
    const match = signature ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) : null;
    if (!match) return false;
    const timestamp = Number(match[1]);
    if (Math.abs(this.ctx.clock.now() / 1000 - timestamp) > SIGNATURE_TOLERANCE_SECONDS) return false;
    return safeEqual(hmacSha256Hex(this.config.webhookSecret, `${timestamp}.${callback.rawBody}`), match[2]!);
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body: unknown = callback.body;
    if (!isJsonObject(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'card-processor webhook body is not JSON');
      }
    }
    const charge = isJsonObject(body) && isJsonObject(body.data) && isJsonObject(body.data.charge) ? body.data.charge : undefined;
    const type = isJsonObject(body) ? textField(body.type) : undefined;
    const reference = charge && textField(charge.merchant_reference);
    if (!charge || !reference || (type !== 'charge.succeeded' && type !== 'charge.failed')) {
      throw new RailError('protocol', `card-processor webhook ${JSON.stringify(type)} is not a charge result railyard reads`);
    }
    const id = textField(charge.id);
    return { reference, operation: 'collect', ...(id ? { providerReference: id } : {}), outcome: outcomeOf(charge) };
  }

  /** One call: the JSON answer of a 2xx, or the RailError that classifies the failure. */
  private async call(method: 'GET' | 'POST', path: string, payload?: Json): Promise<Json> {
    const res = await callUpstream(
      PROVIDER,
      `${this.baseUrl()}${path}`,
      {
        method,
        headers: { authorization: `Bearer ${this.config.apiKey}`, accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { body: JSON.stringify(payload) } : {}),
      },
      this.ctx,
    );
    let json: Json | undefined;
    try {
      const parsed: unknown = res.text ? JSON.parse(res.text) : undefined;
      json = isJsonObject(parsed) ? parsed : undefined;
    } catch {
      json = undefined;
    }
    const what = `${method} ${path}`;
    const error = json && isJsonObject(json.error) ? json.error : undefined;
    // A decline names its reason in decline_code; other refusals in code.
    const code = error ? (textField(error.decline_code) ?? textField(error.code)) : undefined;
    const detail = { httpStatus: res.status, ...(code ? { providerCode: code } : {}) };
    if (res.status >= 500) throw new RailError('server', `card-processor ${res.status} on ${what}`, detail);
    if (res.status >= 400) throw new RailError('rejected', `card-processor refused ${what} (${res.status})${code ? `: ${code}` : ''}`, detail);
    if (res.status < 200 || res.status >= 300 || !json) throw new RailError('protocol', `card-processor gave an unreadable answer (${res.status}) to ${what}`, { httpStatus: res.status });
    return json;
  }
}
