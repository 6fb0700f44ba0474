import { uuidFrom } from '../../kernel/ids.ts';
import { toMajorString } from '../../kernel/money.ts';
import type { Network } from '../../kernel/msisdn.ts';
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
  upstreamBaseUrl,
} from '../../rails/provider-port.ts';
import { callUpstream, type UpstreamResponse } from '../../rails/upstream-call.ts';
import type { SandboxIdentities } from './sandbox-identities.ts';

// Speaks MTN's MoMo Open API (reference/upstream-providers.md §1): Collection for collect and
// name enquiry, Disbursement for payouts, each product with its own subscription key and token.

const PROVIDER = 'mtn-momo';

export interface MtnMomoAdapterConfig {
  /** Undefined: the in-process mock at `${selfBaseUrl}/mocks/mtn-momo`. */
  baseUrl?: string;
  apiUser: string;
  apiKey: string;
  collectionSubscriptionKey: string;
  disbursementSubscriptionKey: string;
  /** X-Target-Environment: 'sandbox' in test, 'mtnghana' in production. */
  targetEnvironment: string;
  /** 'GHS' for the mock, 'EUR' for MTN's real sandbox. */
  currency: string;
  /** Secret path segment of our callback URL: MTN signs nothing. */
  callbackToken: string;
  /**
   * MTN's sandbox test numbers and currency for the service's own (sandbox-identities.ts): what
   * leaves is translated; callbacks and status answers are read for their status and reason
   * only, so the charge keeps its own Ghana number and GHS amount.
   */
  identities?: SandboxIdentities | undefined;
}

type Product = 'collection' | 'disbursement';

export class MtnMomoAdapter implements RailProvider {
  readonly name = PROVIDER;
  readonly channels: readonly Channel[] = ['momo'];
  readonly networks: readonly Network[] = ['MTN'];

  // Token lifetimes are kept on the business clock, the one the mock expires them by; if the
  // upstream still refuses a token we thought fresh (restart, revocation), one 401 renews it.
  private readonly tokens = new Map<Product, { token: string; freshUntil: number }>();
  private readonly tokenRequests = new Map<Product, Promise<string>>();

  constructor(
    private readonly config: MtnMomoAdapterConfig,
    private readonly ctx: RailAdapterContext,
  ) {}

  baseUrl(): string {
    return upstreamBaseUrl(this.config.baseUrl, this.ctx, PROVIDER);
  }

  async collect(request: CollectRequest): Promise<RailAccepted> {
    const req = momoCollect(request, PROVIDER);
    return this.initiate('collection', '/collection/v1_0/requesttopay', 'payer', req.msisdn, req);
  }

  async payout(req: PayoutRequest): Promise<RailAccepted> {
    if (req.channel !== 'momo' || !req.msisdn) {
      throw new RailError('rejected', 'mtn-momo pays out to mobile money wallets only');
    }
    return this.initiate('disbursement', '/disbursement/v1_0/transfer', 'payee', req.msisdn, req);
  }

  async resolveName(req: ResolveRequest): Promise<{ name: string } | null> {
    if (req.channel !== 'momo' || !req.msisdn) {
      throw new RailError('rejected', 'mtn-momo resolves mobile money wallets only');
    }
    const msisdn = this.config.identities?.upstreamMsisdn(req.msisdn) ?? req.msisdn;
    const res = await this.call('collection', 'GET', `/collection/v1_0/accountholder/msisdn/${encodeURIComponent(msisdn)}/basicuserinfo`);
    if (res.status === 404) return null;
    if (res.status !== 200) throw failure(res);
    const body = parseObject(res.text);
    const parts = [body.given_name, body.family_name].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
    const name = parts.length ? parts.map((p) => p.trim()).join(' ') : typeof body.name === 'string' ? body.name.trim() : '';
    if (!name) throw new RailError('protocol', 'mtn-momo basicuserinfo carried no name', { httpStatus: res.status });
    return { name };
  }

  async status(query: StatusQuery): Promise<RailOutcome> {
    const id = encodeURIComponent(query.providerReference);
    const res =
      query.operation === 'collect' ? await this.call('collection', 'GET', `/collection/v1_0/requesttopay/${id}`) : await this.call('disbursement', 'GET', `/disbursement/v1_0/transfer/${id}`);
    // 200 even when the transaction failed: the outcome is in the body.
    if (res.status !== 200) throw failure(res);
    return outcomeOf(parseObject(res.text));
  }

  verifyCallback(callback: InboundCallback): boolean {
    // MTN signs nothing: the only proof is the secret path segment we handed it.
    return safeEqual(callback.subpath, `/${this.config.callbackToken}`);
  }

  parseCallback(callback: InboundCallback): ParsedCallback {
    let body = callback.body;
    if (!isRecord(body)) {
      try {
        body = JSON.parse(callback.rawBody);
      } catch {
        throw new RailError('protocol', 'mtn-momo callback body is not JSON');
      }
    }
    if (!isRecord(body)) throw new RailError('protocol', 'mtn-momo callback body is not an object');
    const { externalId } = body;
    if (typeof externalId !== 'string' || externalId === '') {
      throw new RailError('protocol', 'mtn-momo callback has no externalId');
    }
    const operation = isRecord(body.payer) ? 'collect' : isRecord(body.payee) ? 'payout' : undefined;
    return {
      reference: externalId,
      ...(operation ? { operation } : {}),
      ...(typeof body.referenceId === 'string' ? { providerReference: body.referenceId } : {}),
      outcome: outcomeOf(body),
    };
  }

  // ---- internals ----

  private async initiate(product: Product, path: string, partyField: 'payer' | 'payee', msisdn: string, req: { reference: string; amount: number; description: string }): Promise<RailAccepted> {
    const referenceId = mtnReferenceId(req.reference);
    const note = mtnNote(req.description);
    const { identities } = this.config;
    const money = identities ? identities.upstreamAmount(req.amount) : { amount: toMajorString(req.amount, 'GHS'), currency: this.config.currency };
    const res = await this.call(product, 'POST', path, {
      headers: { 'X-Reference-Id': referenceId, 'X-Callback-Url': this.callbackUrl() },
      body: {
        amount: money.amount,
        currency: money.currency,
        externalId: req.reference,
        [partyField]: { partyIdType: 'MSISDN', partyId: identities ? identities.upstreamMsisdn(msisdn) : msisdn },
        payerMessage: note,
        payeeNote: note,
      },
    });
    // MTN already holds this X-Reference-Id: an earlier call (cut off by a timeout or a restart)
    // was taken, and the callback or a status poll will tell its outcome.
    if (res.status === 409 && errorCode(res.text) === 'RESOURCE_ALREADY_EXIST') return { providerReference: referenceId };
    if (res.status < 200 || res.status >= 300) throw failure(res);
    // MTN answers 202 with an empty body; anything else (an HTML error page from a proxy, say)
    // is not an acceptance we can trust.
    if (res.text.trim() !== '' && !isJson(res.text)) {
      throw new RailError('protocol', `mtn-momo answered ${res.status} with an unreadable body`, { httpStatus: res.status });
    }
    return { providerReference: referenceId };
  }

  private callbackUrl(): string {
    return `${this.ctx.selfBaseUrl()}/internal/callbacks/${PROVIDER}/${this.config.callbackToken}`;
  }

  /** A product call with a bearer token; a 401 on a cached token gets one fresh token and one retry. */
  private async call(product: Product, method: 'GET' | 'POST', path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<UpstreamResponse> {
    const send = (token: string) =>
      this.send(`${this.baseUrl()}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          'Ocp-Apim-Subscription-Key': this.subscriptionKey(product),
          'X-Target-Environment': this.config.targetEnvironment,
          ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      });
    const cached = this.tokens.get(product);
    if (cached && cached.freshUntil > this.ctx.clock.now()) {
      const res = await send(cached.token);
      if (res.status !== 401) return res;
      if (this.tokens.get(product) === cached) this.tokens.delete(product);
    }
    return send(await this.token(product));
  }

  private token(product: Product): Promise<string> {
    let request = this.tokenRequests.get(product);
    if (!request) {
      // Concurrent calls share one token request.
      request = this.requestToken(product).finally(() => this.tokenRequests.delete(product));
      this.tokenRequests.set(product, request);
    }
    return request;
  }

  private async requestToken(product: Product): Promise<string> {
    const basic = Buffer.from(`${this.config.apiUser}:${this.config.apiKey}`).toString('base64');
    const res = await this.send(`${this.baseUrl()}/${product}/token/`, {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Ocp-Apim-Subscription-Key': this.subscriptionKey(product) },
    });
    if (res.status !== 200) throw failure(res);
    const body = parseObject(res.text);
    const { access_token: token, expires_in: expiresIn } = body;
    if (typeof token !== 'string' || token === '' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      throw new RailError('protocol', 'mtn-momo token response lacks access_token or expires_in', { httpStatus: res.status });
    }
    // Renew shortly before it expires, so a token never dies in flight.
    const marginSeconds = Math.min(60, expiresIn / 10);
    this.tokens.set(product, { token, freshUntil: this.ctx.clock.now() + (expiresIn - marginSeconds) * 1000 });
    return token;
  }

  private subscriptionKey(product: Product): string {
    return product === 'collection' ? this.config.collectionSubscriptionKey : this.config.disbursementSubscriptionKey;
  }

  private send(url: string, init: RequestInit): Promise<UpstreamResponse> {
    return callUpstream(PROVIDER, url, init, this.ctx);
  }
}

/**
 * The X-Reference-Id for one of our charges or transfers: derived from our id, so that a call
 * resumed after a restart is the same transaction to MTN, which refuses it as a duplicate.
 */
export function mtnReferenceId(reference: string): string {
  return uuidFrom(`${PROVIDER}:${reference}`);
}

/** The RailError for a non-success answer. */
function failure(res: UpstreamResponse): RailError {
  const providerCode = errorCode(res.text);
  const detail = { httpStatus: res.status, ...(providerCode ? { providerCode } : {}) };
  const what = `mtn-momo answered ${res.status}${providerCode ? ` ${providerCode}` : ''}`;
  // Every 5xx fails over, as the router promises. MTN's 500 NOT_ALLOWED family (permissions,
  // target environment, callback host, currency) is about our setup at MTN, never the payer, so
  // another provider may well serve the same request.
  if (res.status >= 500) return new RailError('server', what, detail);
  // Our credentials or subscription were refused: this provider cannot serve anything right
  // now, which is no verdict on the payment, so it fails over like an outage.
  if (res.status === 401 || res.status === 403) return new RailError('server', what, detail);
  if (res.status >= 400) return new RailError('rejected', what, detail);
  return new RailError('protocol', `${what}, which it never sends here`, detail);
}

function errorCode(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (!isRecord(body)) return undefined;
    if (typeof body.code === 'string') return body.code;
    if (typeof body.error === 'string') return body.error; // the token endpoint's shape
  } catch {
    // not JSON: no code to report
  }
  return undefined;
}

/** Maps MTN's status object (status poll or callback) to an outcome. */
function outcomeOf(body: Record<string, unknown>): RailOutcome {
  const status = typeof body.status === 'string' ? body.status.toUpperCase() : undefined;
  switch (status) {
    case 'PENDING':
    case 'CREATED': // undocumented, seen on the live sandbox before PENDING resolves
      return { status: 'pending' };
    case 'SUCCESSFUL':
      return { status: 'success' };
    case 'FAILED':
      return { status: 'failed', reason: reasonOf(body.reason) };
    default:
      throw new RailError('protocol', `mtn-momo sent an unknown transaction status ${JSON.stringify(body.status)}`);
  }
}

/** MTN's example sends a plain string; generated swagger models send {code, message}. */
function reasonOf(reason: unknown): string {
  if (typeof reason === 'string' && reason !== '') return reason;
  if (isRecord(reason) && typeof reason.code === 'string' && reason.code !== '') return reason.code;
  return 'FAILED';
}

function parseObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RailError('protocol', 'mtn-momo sent a body that is not JSON');
  }
  if (!isRecord(body)) throw new RailError('protocol', 'mtn-momo sent a body that is not a JSON object');
  return body;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** payerMessage/payeeNote: at most 160 characters and no apostrophes, or MTN answers 400. */
function mtnNote(text: string): string {
  return Array.from(text.replace(/['\u2018\u2019]/g, ''))
    .slice(0, 160)
    .join('');
}
