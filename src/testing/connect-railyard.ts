import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { parseDuration } from '../cli/clock-command.ts';
import { ApiClient, type ApiEnvelope } from '../kernel/api-client.ts';
import { routeNeedsOf, type RouteNeeds } from './route-needs.ts';
import { WebhookReceiver, type WebhookInbox } from './webhook-receiver.ts';

// A test's handle on a running railyard, over its public API only: the handle startRailyard()
// gives back, and the one a test file gets with connectRailyard() when a global setup started
// the sandbox in another process.

export interface RailyardRequestOptions {
  /** Sent as JSON (a string is sent as is: the signature covers exactly these bytes). */
  body?: unknown;
  /** Where the route needs one, a fresh UUID is attached unless given; null sends none. */
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
}

export interface RailyardResponse<T = any> {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (the spec's envelope); undefined when it is not JSON. */
  body: ApiEnvelope<T>;
  text: string;
}

/** A merchant of the sandbox: its test key, a signed request() and its webhook inbox. */
export interface RailyardMerchant {
  /** mch_… */
  id: string;
  key: string;
  signingSecret: string;
  /**
   * One request with this merchant's key: signed where the route takes a signature, with an
   * Idempotency-Key where it needs one. Answers whatever the status.
   */
  request<T = any>(method: string, path: string, options?: RailyardRequestOptions): Promise<RailyardResponse<T>>;
  get<T = any>(path: string, options?: Omit<RailyardRequestOptions, 'body'>): Promise<RailyardResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: Omit<RailyardRequestOptions, 'body'>): Promise<RailyardResponse<T>>;
  /** Credits the test wallet (POST /api/v1/sandbox/wallet/fund), in pesewas. */
  fund(amount: number): Promise<void>;
  /** The deliveries to this merchant's webhook endpoint, registered for every event type. */
  webhooks: WebhookInbox;
}

export interface RailyardClock {
  /**
   * Moves the virtual clock forward and runs every job that falls due (provider callbacks,
   * polls, expiries, webhook deliveries) before answering. A number is seconds; a string is
   * a duration such as `90s`, `15m`, `24h`, `1h30m`. It is the whole sandbox's clock.
   */
  advance(duration: number | string): Promise<{ now: string; jobsRun: number }>;
  /** Business time now, ISO 8601. */
  now(): Promise<string>;
}

export interface RailyardConnection extends RailyardMerchant {
  baseUrl: string;
  clock: RailyardClock;
  /** A fresh merchant with its own key, signing secret, empty wallet and webhook endpoint. */
  newMerchant(options?: { name?: string }): Promise<RailyardMerchant>;
  /** The environment a global setup hands to test processes (connectRailyard() reads it). */
  env: { RAILYARD_BASE_URL: string; RAILYARD_KEY: string; RAILYARD_SIGNING_SECRET: string };
  /** Stops this handle's webhook receiver (not the sandbox). */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Default RAILYARD_BASE_URL. */
  baseUrl?: string;
  /** A test key (sk_test_…); default RAILYARD_KEY. */
  key?: string;
  /** Default RAILYARD_SIGNING_SECRET. */
  signingSecret?: string;
  /**
   * Register a webhook endpoint for this key's merchant too (newMerchant() always does). Off by
   * default: test files that share a sandbox each make merchants of their own.
   */
  webhooks?: boolean;
}

/** What a connection knows before it starts: startRailyard() has it in process. */
export interface ConnectionBasis {
  baseUrl: string;
  key: string;
  signingSecret: string;
  merchantId: string;
  needs: (method: string, path: string) => RouteNeeds;
  webhooks: boolean;
}

function check(res: RailyardResponse, what: string, status: number): void {
  if (res.status !== status) throw new Error(`${what} failed: HTTP ${res.status} ${res.text}`);
}

function noInbox(): WebhookInbox {
  const fail = (): never => {
    throw new Error('this handle has no webhook endpoint: connectRailyard({ webhooks: true }), or use newMerchant()');
  };
  return {
    url: '',
    get received() {
      return fail();
    },
    waitFor: async () => fail(),
    clear: fail,
  };
}

/** Opens a handle from what is already known (startRailyard) without asking the server again. */
export async function openConnection(basis: ConnectionBasis): Promise<RailyardConnection> {
  let receiver: Promise<WebhookReceiver> | undefined;
  const receiverOnce = () => (receiver ??= WebhookReceiver.start());

  const merchant = async (id: string, key: string, signingSecret: string, webhooks: boolean): Promise<RailyardMerchant> => {
    const api = new ApiClient({ baseUrl: basis.baseUrl, key, signingSecret });
    const request = async <T>(method: string, path: string, options: RailyardRequestOptions = {}): Promise<RailyardResponse<T>> => {
      const needs = basis.needs(method, path);
      const idempotencyKey = options.idempotencyKey === null ? undefined : (options.idempotencyKey ?? (needs.idempotent ? randomUUID() : undefined));
      const res = await api.request({ method: method.toUpperCase(), path, body: options.body, idempotencyKey, sign: needs.signed, headers: options.headers });
      return { status: res.status, headers: res.headers, body: (res.json ?? {}) as ApiEnvelope<T>, text: res.text };
    };
    const handle: RailyardMerchant = {
      id,
      key,
      signingSecret,
      request,
      get: (path, options) => request('GET', path, options),
      post: (path, body, options) => request('POST', path, { ...options, body: body ?? {} }),
      async fund(amount) {
        check(await request('POST', '/api/v1/sandbox/wallet/fund', { body: { amount } }), 'funding the wallet', 200);
      },
      webhooks: noInbox(),
    };
    if (webhooks) {
      const inbox = (await receiverOnce()).inbox(id);
      const res = await request<{ secret: string }>('POST', '/api/v1/webhook_endpoints', { body: { url: inbox.url } });
      check(res, 'registering the webhook endpoint', 201);
      inbox.verifyWith(res.body.data!.secret);
      handle.webhooks = inbox;
    }
    return handle;
  };

  const root = await merchant(basis.merchantId, basis.key, basis.signingSecret, basis.webhooks);
  const clockState = async () => {
    const res = await root.get<{ now: string }>('/api/v1/sandbox/clock');
    check(res, 'reading the clock', 200);
    return res.body.data!.now;
  };
  return {
    ...root,
    baseUrl: basis.baseUrl,
    clock: {
      async advance(duration) {
        const seconds = typeof duration === 'number' ? duration : parseDuration(duration);
        if (seconds === null || !Number.isFinite(seconds) || seconds < 0) throw new Error(`not a duration: ${JSON.stringify(duration)} (say 90s, 15m, 24h or a number of seconds)`);
        const res = await root.post<{ now: string; jobs_run: number }>('/api/v1/sandbox/clock/advance', { seconds, wait: true });
        check(res, 'advancing the clock', 200);
        return { now: res.body.data!.now, jobsRun: res.body.data!.jobs_run };
      },
      now: clockState,
    },
    async newMerchant(options = {}) {
      const res = await root.post<{ id: string; key: string; signing_secret: string }>('/api/v1/sandbox/merchants', options.name ? { name: options.name } : {});
      check(res, 'creating a merchant', 201);
      const created = res.body.data!;
      return merchant(created.id, created.key, created.signing_secret, true);
    },
    env: { RAILYARD_BASE_URL: basis.baseUrl, RAILYARD_KEY: basis.key, RAILYARD_SIGNING_SECRET: basis.signingSecret },
    async close() {
      if (receiver) await (await receiver).close();
    },
  };
}

/**
 * A handle on a railyard that is already running (started by a global setup, `npx railyard
 * serve` or a container), from options or RAILYARD_BASE_URL, RAILYARD_KEY and
 * RAILYARD_SIGNING_SECRET.
 */
export async function connectRailyard(options: ConnectOptions = {}): Promise<RailyardConnection> {
  const baseUrl = options.baseUrl ?? process.env.RAILYARD_BASE_URL;
  const key = options.key ?? process.env.RAILYARD_KEY;
  const signingSecret = options.signingSecret ?? process.env.RAILYARD_SIGNING_SECRET;
  if (!baseUrl || !key || !signingSecret) throw new Error('connectRailyard needs baseUrl, key and signingSecret (or RAILYARD_BASE_URL, RAILYARD_KEY and RAILYARD_SIGNING_SECRET)');
  const api = new ApiClient({ baseUrl, key });
  const [openapi, me] = await Promise.all([api.request({ method: 'GET', path: '/openapi.json' }), api.request({ method: 'GET', path: '/api/v1/merchant' })]);
  if (openapi.status !== 200) throw new Error(`${baseUrl}/openapi.json answered HTTP ${openapi.status}: is railyard running there?`);
  if (me.status !== 200) throw new Error(`${baseUrl} refused the key: HTTP ${me.status} ${me.text}`);
  const merchantId = (me.json as ApiEnvelope<{ id: string }>).data!.id;
  return openConnection({ baseUrl, key, signingSecret, merchantId, needs: routeNeedsOf(openapi.json as never), webhooks: options.webhooks === true });
}
