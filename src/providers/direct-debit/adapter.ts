import { isJsonObject, textField } from '../../kernel/json-object.ts';
import { hmacSha256Hex, safeEqual } from '../../kernel/secrets.ts';
import {
  RailError,
  type Channel,
  type CollectRequest,
  type InboundCallback,
  type MandateDecision,
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

// The direct-debit service (GhIPSS-style; wire format in docs/v1/collections.md): a debit of a
// bank account by our reference (POST /dd/v1/debits), pending until the holder approves the
// mandate at their bank; status by reference; callbacks signed X-DD-Signature = hex
// HMAC-SHA256(signing secret, raw body).

export interface DirectDebitAdapterConfig {
  /** The service's base URL; undefined means the in-process mock. */
  baseUrl?: string;
  apiKey: string;
  signingSecret: string;
}

const PROVIDER = 'direct-debit';

type Json = Record<string, unknown>;

function outcomeOf(debit: Json): RailOutcome {
  const status = textField(debit.status);
  if (status === 'COMPLETED') return { status: 'success' };
  if (status === 'PENDING_MANDATE') return { status: 'pending' };
  if (status === 'DECLINED' || status === 'FAILED') return { status: 'failed', reason: textField(debit.reasonCode) ?? status };
  throw new RailError('protocol', `direct-debit gave an unknown debit status ${JSON.stringify(status)}`);
}

export class DirectDebitAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[] = ['bank_debit'];
  readonly networks = [] as const;

  constructor(
    private readonly config: DirectDebitAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {}

  baseUrl(): string {
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  async collect(req: CollectRequest): Promise<RailAccepted> {
    if (req.channel !== 'bank_debit') throw new RailError('rejected', 'direct-debit debits only bank accounts');
    let debit: Json;
    try {
      debit = await this.call('POST', '/dd/v1/debits', {
        reference: req.reference,
        amount: req.amount,
        currency: req.currency,
        debtorAccount: { accountNumber: req.accountNumber, bankCode: req.bankCode },
        narration: req.description.slice(0, 100),
        callbackUrl: `${this.ctx.selfBaseUrl()}/internal/callbacks/${PROVIDER}`,
      });
    } catch (err) {
      // A reference it has seen: an earlier call (cut off by a timeout) was taken.
      if (!(err instanceof RailError && err.detail.providerCode === 'DUPLICATE_REFERENCE')) throw err;
      debit = await this.call('GET', `/dd/v1/debits/${encodeURIComponent(req.reference)}`);
    }
    const id = textField(debit.debitId);
    if (!id) throw new RailError('protocol', 'direct-debit accepted the debit without a debitId');
    const outcome = outcomeOf(debit);
    if (outcome.status === 'failed') throw new RailError('rejected', `direct-debit refused the debit: ${outcome.reason}`, { providerCode: outcome.reason });
    return { providerReference: id };
  }

  async payout(_req: PayoutRequest): Promise<RailAccepted> {
    throw new RailError('rejected', 'direct-debit does not pay out');
  }

  async resolveName(_req: ResolveRequest): Promise<{ name: string } | null> {
    throw new RailError('rejected', 'direct-debit resolves no names');
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    if (query.operation !== 'collect') throw new RailError('rejected', 'direct-debit only collects');
    return outcomeOf(await this.call('GET', `/dd/v1/debits/${encodeURIComponent(query.reference)}`));
  }

  async decideMandate(decision: MandateDecision): Promise<RailOutcome> {
    return outcomeOf(await this.call('POST', `/dd/v1/sandbox/debits/${encodeURIComponent(decision.providerReference)}/${decision.decision}`, {}));
  }

  verifyCallback(callback: InboundCallback): boolean {
    const raw = callback.headers['x-dd-signature'];
    const signature = Array.isArray(raw) ? raw[0] : raw;
    if (!signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
    return safeEqual(hmacSha256Hex(this.config.signingSecret, callback.rawBody), signature);
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body: unknown = callback.body;
    if (!isJsonObject(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'direct-debit callback body is not JSON');
      }
    }
    const reference = isJsonObject(body) ? textField(body.reference) : undefined;
    if (!isJsonObject(body) || !reference) throw new RailError('protocol', 'direct-debit callback has no reference');
    const id = textField(body.debitId);
    return { reference, operation: 'collect', ...(id ? { providerReference: id } : {}), outcome: outcomeOf(body) };
  }

  /** One call: the JSON answer of a 2xx, or the RailError that classifies the failure. */
  private async call(method: 'GET' | 'POST', path: string, payload?: Json): Promise<Json> {
    const res = await callUpstream(
      PROVIDER,
      `${this.baseUrl()}${path}`,
      {
        method,
        headers: { 'x-api-key': this.config.apiKey, accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) },
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
    const code = json ? textField(json.code) : undefined;
    const detail = { httpStatus: res.status, ...(code ? { providerCode: code } : {}) };
    if (res.status >= 500) throw new RailError('server', `direct-debit ${res.status} on ${what}`, detail);
    if (res.status >= 400) throw new RailError('rejected', `direct-debit refused ${what} (${res.status})${code ? `: ${code}` : ''}`, detail);
    if (res.status < 200 || res.status >= 300 || !json) throw new RailError('protocol', `direct-debit gave an unreadable answer (${res.status}) to ${what}`, { httpStatus: res.status });
    return json;
  }
}
