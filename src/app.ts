import express, { type Express, type Request } from 'express';
import { performance } from 'node:perf_hooks';
import { accessRoutes } from './access/access.routes.ts';
import { ApiKeyService, apiKeyHashOf, type LookedUpKey } from './auth/api-key-service.ts';
import { ServiceLadder } from './auth/service-ladder.ts';
import { RequestSignatureVerifier } from './auth/request-signature.ts';
import { SCOPES } from './auth/scopes.ts';
import { configuredSecrets } from './config/config.ts';
import type { RailyardConfig } from './railyard-config.ts';
import { EventOutbox } from './events/event-outbox.ts';
import { failure } from './http/envelope.ts';
import { errorHandler, toErrorResponse } from './http/error-mapper.ts';
import { buildOpenApi } from './http/openapi.ts';
import { ownMocksExchange, servedInProcess } from './http/in-process-exchange.ts';
import { mountRoutes, type RouteSpec } from './http/route.ts';
import { IdempotencyService } from './idempotency/idempotency-service.ts';
import { SystemClock, VirtualClock, VIRTUAL_EPOCH, type Clock } from './kernel/clock.ts';
import { bootSeed, CryptoRandom, IdGenerator, SeededRandom } from './kernel/ids.ts';
import { redactingLogger, silentLogger, type Logger } from './kernel/logger.ts';
import { REDACTED, Redactor } from './kernel/redactor.ts';
import { Ledger } from './ledger/ledger.ts';
import { CALLBACK_RECEIVER_PATH, type LocalCallbackReceiver } from './mocks/engine/callback-sender.ts';
import type { MockContext } from './mocks/engine/mock-context.ts';
import { MockTransactionBooks } from './mocks/engine/mock-transaction-book.ts';
import { mockPath, type MockAccessView } from './mocks/mock-definition.ts';
import { createMock, describeMock, PROVIDERS } from './provider-registry.ts';
import { ProviderHealth } from './rails/provider-health.ts';
import type { RailAdapterContext } from './rails/provider-port.ts';
import { RailRouter } from './rails/rail-router.ts';
import { RailSettlement } from './rails/rail-settlement.ts';
import type { SettlementTarget } from './rails/settlement-target.ts';
import { ClockAdvances } from './sandbox/clock-advances.ts';
import { sandboxRoutes } from './sandbox/sandbox.routes.ts';
import { SandboxMerchants } from './sandbox/sandbox-merchants.ts';
import { SandboxFunding } from './sandbox/sandbox-funding.ts';
import { scenarioRoutes } from './sandbox/scenarios.routes.ts';
import { replayRoutes } from './sandbox/replays.routes.ts';
import { faultRoutes } from './sandbox/faults.routes.ts';
import { NO_REPLAYS, type ScenarioReplays } from './sandbox/scenario-replays.ts';
import { Compliance } from './trading/compliance.ts';
import { marketRoutes } from './trading/market.routes.ts';
import { PriceFeed } from './trading/price-feed.ts';
import { QuoteService } from './trading/quote-service.ts';
import { TradeService } from './trading/trade-service.ts';
import { TradingLimits } from './trading/trading-limits.ts';
import { tradingSandboxRoutes } from './trading/trading-sandbox.routes.ts';
import { tradingRoutes } from './trading/trading.routes.ts';
import { RuleEngine, type RuleSource } from './scenarios/rule-engine.ts';
import type { ApiRule, ScenarioRule, Wallet } from './scenarios/scenario-schema.ts';
import { ApiFaultEngine } from './scenarios/api-fault-engine.ts';
import type { UpstreamTap } from './rails/upstream-tap.ts';
import { silentTimeline, type Timeline } from './kernel/timeline.ts';
import { inspectorRoutes } from './inspector/inspector.routes.ts';
import { ObjectTimelineService } from './inspector/object-timeline.ts';
import { RequestLog, type RequestHistory } from './inspector/request-log.ts';
import type { WriteTurn } from './store/write-turn.ts';
import type { Decision, RailQuery } from './scenarios/scenario-types.ts';
import { StoredRequestLog } from './inspector/stored-request-log.ts';
import { RequestRecorder } from './inspector/request-recorder.ts';
import { reportMatch } from './scenarios/rule-explanation.ts';
import { Scheduler } from './scheduler/scheduler.ts';
import type { Store } from './store/db.ts';
import { openStore } from './store/open-store.ts';
import { type FleetState, FleetStateReads, lastVirtualTime, nextBoot } from './store/runtime-state.ts';
import { probeStore } from './store/store-probe.ts';
import { dashboard } from './dashboard/dashboard.ts';
import type { SessionVault } from './dashboard/dashboard-sessions.ts';
import { DashboardSessionRepository } from './store/repositories/dashboard-session-repository.ts';
import { ChargeService } from './wallet/charge-service.ts';
import { NameEnquiryService } from './wallet/name-enquiry-service.ts';
import { TransactionService } from './wallet/transaction-service.ts';
import { TransferService } from './wallet/transfer-service.ts';
import { walletRoutes } from './wallet/wallet.routes.ts';
import { CollectionService } from './collections/collection-service.ts';
import { collectionRoutes } from './collections/collections.routes.ts';
import { hostedCheckout } from './payment-links/hosted-checkout.ts';
import { PaymentLinkService } from './payment-links/payment-link-service.ts';
import { paymentLinkRoutes } from './payment-links/payment-links.routes.ts';
import { PayoutService } from './payouts/payout-service.ts';
import { payoutRoutes } from './payouts/payouts.routes.ts';
import { BillService } from './bills/bill-service.ts';
import { billRoutes } from './bills/bills.routes.ts';
import { LedgerReportService } from './reports/ledger-report-service.ts';
import { ledgerRoutes } from './reports/ledger.routes.ts';
import { EventStream } from './webhooks/event-stream.ts';
import { eventStreamRouter } from './webhooks/event-stream.routes.ts';
import { HttpExchangeThread } from './kernel/http-exchange-thread.ts';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher.ts';
import { WebhookEndpointService } from './webhooks/webhook-endpoint-service.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';

export const VERSION = '0.1.0';
export const SANDBOX_MERCHANT_ID = 'mch_sandbox';
export const SANDBOX_KEY_ID = 'key_sandbox_test';

export interface AppOptions {
  logger?: Logger;
  /** Scenario rules, already loaded and validated (main.ts loads files; tests pass rules). */
  rules?: readonly ScenarioRule[];
  /** Where provider calls, callbacks, polls and webhooks are reported (replays record them). */
  timeline?: Timeline;
  /** Sees each call the adapters make to an upstream (contract generation and verification). */
  upstreamTap?: UpstreamTap;
  /** Which file each run of `rules` came from (GET /api/v1/sandbox/scenarios). */
  ruleSources?: readonly RuleSource[];
  /** Simulated customers' wallets from the scenario files. */
  wallets?: readonly Wallet[];
  /** The scenario files' `api:` rules: faults on the merchant API (test keys only). */
  apiRules?: readonly ApiRule[];
  /**
   * Real time, for timestamps a party outside checks against its own clock: inbound request
   * signatures and outbound webhook signatures. Business time (the virtual clock) governs the rest.
   */
  wallClock?: Clock;
  /** Runs scenario scripts for POST /api/v1/sandbox/replays (main.ts passes replay/'s driver). */
  replays?: ScenarioReplays;
  /** Wraps the opened store before anything uses it (tests count the statements a request issues). */
  wrapStore?: (store: Store) => Store;
  /**
   * The served sandbox's two threads on one SQLite file (start-job-thread.ts): the request thread, whose
   * scheduler another thread runs, and the job thread, which runs the jobs. Both write the file
   * through connections of their own, taking turns (`writeTurn`).
   */
  thread?: RequestThread | JobThread;
}

/** The request thread: it answers the API; the job thread runs its jobs, and the event stream follows the outbox. */
export interface RequestThread {
  role: 'requests';
  writeTurn: WriteTurn;
}

/**
 * The job thread: the request thread's boot (one process, one boot: each thread's in-flight
 * Idempotency-Keys are live to the other), its scenario engine's decisions (one engine counts
 * every call), and its requests inspector (where the job thread's mock calls are listed).
 */
export interface JobThread {
  role: 'jobs';
  writeTurn: WriteTurn;
  boot: number;
  decide: (query: RailQuery) => Promise<Decision | undefined>;
  requestLog: RequestHistory;
}

export interface Railyard {
  app: Express;
  /** This start's number on its database: 1 on a fresh one. */
  boot: number;
  config: RailyardConfig;
  clock: Clock;
  wallClock: Clock;
  store: Store;
  scheduler: Scheduler;
  ledger: Ledger;
  outbox: EventOutbox;
  router: RailRouter;
  health: ProviderHealth;
  feed: PriceFeed;
  scenarios: RuleEngine;
  /** The `api:` rules and the faults switched on through the sandbox control. */
  apiFaults: ApiFaultEngine;
  routes: RouteSpec[];
  sandbox: { merchantId: string; key: string; signingSecret: string; webhookSecret: string | null };
  /** Each provider mock's base URL and the credentials it accepts, in registry order. */
  mocks(): MockAccessView[];
  stream: EventStream;
  dispatcher: WebhookDispatcher;
  /** The requests inspector's log. */
  requests: RequestHistory;
  /** Tells the app its own address once it listens: adapters reach the in-process mocks there. */
  setBaseUrl(url: string): void;
  /**
   * Finishes the initiations earlier processes left in flight (their Idempotency-Keys get real
   * answers). Call it once listening: the in-process mocks are reached over HTTP. Returns how many.
   */
  recoverInterrupted(): Promise<number>;
  baseUrl(): string;
  close(): Promise<void>;
}

/**
 * A virtual clock starts at virtual_start (or 2026-01-01), or where the last process on this
 * database left it when that is later: a restart never moves business time backwards.
 */
async function resumeVirtualClock(store: Store, config: RailyardConfig): Promise<VirtualClock> {
  const start = config.virtual_start ? Date.parse(config.virtual_start) : VIRTUAL_EPOCH;
  const last = await lastVirtualTime(store);
  return new VirtualClock(last !== null && last > start ? last : start);
}

/** A callback URL's last segment is the secret that authenticates the callback. */
const CALLBACK_SECRET = /^(\/internal\/callbacks\/[^/]+\/).+$/;

/** The request log line: method, path (a callback URL's secret segment redacted) and status only. */
function logRequest(logger: Logger, method: string, originalPath: string, status: number, started: number): void {
  const path = originalPath.replace(CALLBACK_SECRET, `$1${REDACTED}`);
  logger.info('request', { method, path, status, ms: Math.round(performance.now() - started) });
}

/**
 * railyard's callback receiver as its own mocks reach it: in process, with what the route would
 * have read off the socket, the same per-request steps before it (the fleet's clock and outages)
 * and the same request log line after it.
 */
function localCallbackReceiver(settlement: RailSettlement, deps: { syncFleet: () => Promise<unknown>; logger: Logger; logRequests: boolean }): LocalCallbackReceiver {
  return async ({ method, path, headers, body }) => {
    const started = performance.now();
    let status: number;
    try {
      await deps.syncFleet();
      const rest = path.slice(CALLBACK_RECEIVER_PATH.length);
      const slash = rest.indexOf('/');
      const provider = slash < 0 ? rest : rest.slice(0, slash);
      const subpath = (slash < 0 ? '' : rest.slice(slash)) || '/';
      // No job token: the callback is settled in the job that sends it, which is the caller's.
      ({ status } = await settlement.receive({ provider, method, subpath, headers, rawBody: body }));
    } catch (err) {
      // What the error handler would have answered the route with.
      ({ status } = toErrorResponse(err, deps.logger));
    }
    if (deps.logRequests) logRequest(deps.logger, method, path, status, started);
    return { status };
  };
}

/** The composition root: config in, a wired express app out. It never listens. */
export async function createApp(config: RailyardConfig, options: AppOptions = {}): Promise<Railyard> {
  // Every line any part of railyard logs passes the redactor: no configured credential, callback
  // token, issued key or webhook secret reaches the log, even inside a path or an error message.
  const redactor = new Redactor(configuredSecrets(config));
  // A silent logger writes nothing, so there is nothing to redact: no line is cleaned only to be dropped.
  const logger = options.logger && options.logger !== silentLogger ? redactingLogger(options.logger, (text) => redactor.text(text)) : silentLogger;
  const timeline = options.timeline ?? silentTimeline;
  const opened = await openStore(config.db, { writeTurn: options.thread?.writeTurn });
  const store: Store = options.wrapStore ? options.wrapStore(opened) : opened;
  // Each start on a database is a new boot: its ids never repeat an earlier boot's, and its
  // Idempotency-Key claims are told apart from those a stopped process left in flight.
  const boot = options.thread?.role === 'jobs' ? options.thread.boot : await nextBoot(store);
  const clock: Clock = config.clock === 'virtual' ? await resumeVirtualClock(store, config) : new SystemClock();
  const random = config.seed !== undefined || config.clock === 'virtual' ? new SeededRandom(bootSeed(config.seed ?? 1, boot)) : new CryptoRandom();
  const wallClock = options.wallClock ?? new SystemClock();
  const ids = new IdGenerator(clock, random);
  const scheduler = new Scheduler({ store, clock, ids, logger, wallClock, boot, concurrency: config.scheduler.concurrency });
  await scheduler.join();
  const ledger = new Ledger({ clock, ids, store });
  const outbox = new EventOutbox({ clock, ids, postgres: store.kind === 'postgres' });
  const apiKeys = new ApiKeyService({ clock, ids, store });
  const signatures = new RequestSignatureVerifier({ clock: wallClock });
  const idempotency = new IdempotencyService({ clock, boot, liveBoots: () => scheduler.liveBoots(), store });
  const health = new ProviderHealth(store.kind === 'postgres' ? store : undefined);
  const scenarios = new RuleEngine(options.rules ?? [], options.wallets ?? [], options.ruleSources ?? []);
  if (store.kind === 'postgres') scenarios.share(store);
  if (options.thread?.role === 'jobs') scenarios.decideElsewhere(options.thread.decide);
  // Faults on the merchant API draw from the seed (a replay's, or the configured one), never from the time.
  const apiFaults = new ApiFaultEngine({ clock, seed: config.seed ?? (config.clock === 'virtual' ? 1 : ids.nextUint32()) }, options.apiRules ?? []);
  // On a shared database the faults switched on, and every rule's counts, windows and states, are the fleet's.
  if (store.kind === 'postgres') apiFaults.share(store);

  let selfBaseUrl = config.base_url ?? `http://127.0.0.1:${config.port}`;
  const baseUrl = () => selfBaseUrl;

  // Provider rails: adapters talk HTTP to real upstreams, or hand their calls to the mocks mounted
  // below in process (the same requests and answers, without a socket to this process).
  const ownMocks = ownMocksExchange((req, res) => app(req, res), baseUrl);
  // The timeout is read at each call: a sandbox tuning (PUT /api/v1/sandbox/rails) may override it.
  const railCtx = (timeoutMs?: number): RailAdapterContext => ({
    selfBaseUrl: baseUrl,
    uuid: () => ids.uuid(),
    get timeoutMs() {
      return router.timeoutOverrideMs ?? timeoutMs ?? config.rails.timeout_ms;
    },
    clock,
    exchange: ownMocks,
    ...(options.upstreamTap ? { tap: options.upstreamTap } : {}),
  });
  // One adapter per registered provider, each with its own timeout, priority and switch.
  const rails = PROVIDERS.map((registered) => {
    const settings = config.providers[registered.name];
    const provider = registered.adapter(config, railCtx(settings.timeout_ms));
    return { provider, priority: settings.priority, enabled: settings.enabled };
  });
  const router = new RailRouter(rails, { health, store, clock, logger, timeline });
  /** Each mock's base URL and the credentials it accepts (secrets hidden where the adapter goes to a real upstream). */
  const mockAccess = (name: string) => {
    const rail = rails.find((r) => r.provider.name === name);
    if (!rail) return undefined;
    return describeMock(name, config, { baseUrl: baseUrl(), realUpstream: !rail.provider.baseUrl().includes(mockPath(name)) });
  };

  const walletDeps = { store, clock, ids, ledger, outbox, router, scheduler, idempotency, logger, config };
  const charges = new ChargeService(walletDeps);
  const transfers = new TransferService(walletDeps);
  const links = new PaymentLinkService({ store, clock, ids, outbox, idempotency, baseUrl });
  const collections = new CollectionService(walletDeps, { onSettled: (tx, row) => links.onSettled(tx, row) });
  links.attach(collections);
  // Each record kind the rails settle: its settlement target, and how to resume an interrupted initiation.
  const targets: (SettlementTarget & { resume(id: string): Promise<void> })[] = [charges.settlement, transfers.settlement];
  const payouts = new PayoutService(walletDeps);
  const bills = new BillService(walletDeps);
  targets.push(collections.settlement, payouts.settlement, bills.settlement);
  const settlement = new RailSettlement({ router, targets, idempotency, scheduler, store, clock, logger, config, timeline });
  // A charge or transfer whose initiation a stop cut off is resumed: see resumeInitiation.
  for (const target of targets) idempotency.registerRecovery(target.idPrefix, (id) => target.resume(id));
  idempotency.registerRecovery('pob', (id) => payouts.resumeBulk(id));
  // In a fleet, what an instance that died left in flight is finished by a survivor, without waiting for a start.
  scheduler.onSweep(() => idempotency.recoverOrphans(store));
  const nameEnquiry = new NameEnquiryService({ router, ids });
  const transactions = new TransactionService({ store });

  // Trading: a simulated USD market and an admin FX leg, quotes, trades, limits, compliance.
  const feed = new PriceFeed({
    store,
    clock,
    seed: config.seed ?? (config.clock === 'virtual' ? 1 : ids.nextUint32()),
    market: config.trading.market,
    versionPerRequest: store.kind === 'postgres',
  });
  await feed.init();
  const fleetReads = new FleetStateReads(store);
  let adoptedFleetState: FleetState | undefined;
  /**
   * The fleet's state a request starts from (a shared database only): one statement, shared by the
   * requests of one turn of the event loop. Given the request's Authorization header, the API key
   * it names is read in that statement too.
   */
  const syncFleet = async (authorization?: string): Promise<LookedUpKey | undefined> => {
    if (store.kind !== 'postgres') return undefined;
    const hash = apiKeyHashOf(authorization);
    const state = await fleetReads.read(hash);
    // The requests that shared a read take its state over once, not once each.
    if (state !== adoptedFleetState) {
      adoptedFleetState = state;
      scheduler.adoptSharedTime(state.virtualClock);
      health.adopt(state.providers);
      feed.adoptVersion(state.marketVersion);
    }
    // The switched-on faults are re-read only when their version moved.
    const faultsMoved = apiFaults.adoptVersion(state.apiFaultsVersion);
    if (faultsMoved) await faultsMoved;
    return hash === undefined || authorization === undefined ? undefined : { authorization, hash, row: state.apiKeys.get(hash) };
  };
  const ladder = new ServiceLadder({ store });
  const compliance = new Compliance(config.trading, ladder);
  const limits = new TradingLimits({ clock, config: config.trading });
  const quotes = new QuoteService({ store, clock, ids, feed, outbox, scheduler, compliance, limits, config });
  const trades = new TradeService({ store, clock, ids, ledger, outbox, scheduler, idempotency, feed, quotes, compliance, limits, logger, config });
  await trades.seedTreasury();

  // Seed the sandbox merchant and its test key (re-keyed if the configured key changed).
  await store.transaction(async (tx) => {
    await ladder.ensureMerchant(tx, SANDBOX_MERCHANT_ID, config.sandbox.merchant_name, clock.now());
    await apiKeys.issue(tx, {
      id: SANDBOX_KEY_ID,
      merchantId: SANDBOX_MERCHANT_ID,
      environment: 'test',
      scopes: [...SCOPES],
      key: config.sandbox.key,
      signingSecret: config.sandbox.signing_secret,
    });
  });

  // Webhooks: the outbox fans out into signed deliveries with retries on the clock.
  const stream = new EventStream();
  const endpoints = new WebhookEndpointService({ store, clock, ids, config });
  // Deliveries are POSTed from a thread of their own: the event loop keeps to the API and the store.
  const webhookSender = new HttpExchangeThread();
  const dispatcher = new WebhookDispatcher({ store, clock, wallClock, ids, scheduler, endpoints, stream, logger, config, timeline, exchange: webhookSender.exchange });
  // On a shared database every instance's stream follows the outbox, so it carries every instance's
  // events; so does the request thread's, whose events the job thread fans out.
  if (store.kind === 'postgres' || options.thread?.role === 'requests') await dispatcher.followOutbox();
  const sandboxWebhookSecret = config.webhooks.sandbox_url ? await endpoints.ensureSandboxEndpoint(SANDBOX_MERCHANT_ID, config.webhooks.sandbox_url) : null;

  const routes: RouteSpec[] = [
    ...walletRoutes({ ledger, charges, transfers, nameEnquiry, transactions }),
    ...tradingRoutes({ quotes, trades }),
    ...sandboxRoutes({
      clock,
      scheduler,
      funding: new SandboxFunding({ store, ledger }),
      merchants: new SandboxMerchants({ store, clock, ids, ladder, apiKeys }),
      // A restart starts the api rules' counts, windows and states afresh too.
      scenarios: {
        restart: async () => {
          scenarios.restart();
          await apiFaults.restart();
        },
      },
      defaultTimeoutMs: config.rails.timeout_ms,
      router,
      health,
      apiKeys,
      mockAccess,
      advances: new ClockAdvances({ clock, wallClock, logger, boot, advanceBy: (ms, onProgress) => scheduler.advanceBy(ms, onProgress) }),
    }),
    ...marketRoutes({ feed, clock, config }),
    ...tradingSandboxRoutes({ trades, ladder }),
    ...webhookRoutes({ endpoints, dispatcher }),
    ...collectionRoutes({ collections }),
    ...paymentLinkRoutes({ links }),
  ];
  routes.push(...payoutRoutes({ payouts }));
  routes.push(...billRoutes({ bills }));
  // The requests inspector and object timelines, capped per environment: in memory on SQLite (one
  // process; the job thread sends its entries to the request thread's), in the database on
  // PostgreSQL, so every instance of a fleet shows every request.
  const requestLog: RequestHistory =
    options.thread?.role === 'jobs'
      ? options.thread.requestLog
      : store.kind === 'postgres'
        ? new StoredRequestLog({ store, clock, logger, maxPerEnvironment: config.inspector.max_requests })
        : new RequestLog({ clock, maxPerEnvironment: config.inspector.max_requests, maxBytesPerEnvironment: config.inspector.max_bytes });
  const recorder = new RequestRecorder({ log: requestLog, store, logger });
  routes.push(...inspectorRoutes({ requests: requestLog, timelines: new ObjectTimelineService({ requests: requestLog, store }) }));
  routes.push(...ledgerRoutes({ reports: new LedgerReportService({ clock, store }) }));
  routes.push(...accessRoutes({ apiKeys, ladder }), ...scenarioRoutes({ scenarios }));
  routes.push(...replayRoutes({ replays: options.replays ?? NO_REPLAYS }));
  routes.push(...faultRoutes({ faults: apiFaults }));
  // Built on first request: converting every schema takes ~100 ms, which a start (a test suite's
  // startRailyard() above all) need not wait for.
  let openapi: Record<string, unknown> | undefined;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip, which key IP allowlists check: the peer, or X-Forwarded-For behind a configured proxy.
  app.set('trust proxy', config.server.trust_proxy);
  if (config.log_requests) {
    app.use((req, res, next) => {
      const started = performance.now();
      // The whole path, as the client sent it (a router's req.path is relative to its mount). Never
      // the query, headers (keys, signatures) or bodies.
      const path = req.originalUrl.split('?')[0]!;
      res.on('finish', () => logRequest(logger, req.method, path, res.statusCode, started));
      next();
    });
  }

  // On a shared database each request starts on the fleet's clock, outages, rails' tuning and
  // market version, and its API key, read in one statement. A call railyard's adapters hand to
  // its own mocks in process is part of a request or job of this process that has read them
  // already: it goes on what that read (the router and the mock then see the same outages).
  app.use(async (req, res, next) => {
    if (!servedInProcess(req)) {
      const lookedUpKey = await syncFleet(req.get('authorization'));
      if (lookedUpKey) res.locals.lookedUpKey = lookedUpKey;
    }
    next();
  });
  app.get('/healthz', async (_req, res) => {
    await probeStore(store);
    res.json({ status: 'ok', version: VERSION, clock: clock.kind });
  });
  app.get('/openapi.json', (_req, res) => {
    openapi ??= buildOpenApi(routes, { version: VERSION });
    res.json(openapi);
  });

  const mockCtx: MockContext = {
    clock,
    scheduler,
    store,
    scenarios,
    health,
    logger,
    books: new MockTransactionBooks(store, clock),
    maxHoldMs: config.rails.max_hold_ms,
    defaultCallbackSeconds: config.rails.default_callback_seconds,
    callbackTimeoutMs: config.rails.callback_timeout_ms,
    serviceBaseUrl: baseUrl,
    localCallbacks: localCallbackReceiver(settlement, { syncFleet, logger, logRequests: config.log_requests }),
    explainMatch: (query, decision) => reportMatch(scenarios.loaded, query, decision, (s) => scenarios.stateOf(s)),
  };
  for (const registered of PROVIDERS) app.use(mockPath(registered.name), recorder.mock(registered.name), createMock(registered.name, mockCtx, config));
  app.use('/internal/callbacks', settlement.callbackRouter());
  // The hosted checkout page of payment links and its public endpoints (no API key).
  app.use(hostedCheckout({ links, ids }));
  // The merchant dashboard: a client of the API below, over HTTP (no private back door).
  // Its sessions are in the database, so any instance of a fleet serves any of them.
  const dashboardSessions = new DashboardSessionRepository();
  const sessions: SessionVault = {
    find: (tokenHash) => dashboardSessions.find(store, tokenHash),
    put: (session) => dashboardSessions.put(store, session),
    touch: (tokenHash, lastSeen, expiresAt) => dashboardSessions.touch(store, tokenHash, lastSeen, expiresAt),
    remove: (tokenHash) => dashboardSessions.remove(store, tokenHash),
    prune: (now, max) => dashboardSessions.prune(store, now, max),
  };
  app.use(dashboard({ baseUrl, wallClock, logger, sessions }));

  const api = express.Router();
  const keepRawBody = (req: Request, _res: unknown, buf: Buffer) => {
    (req as Request & { rawBody?: string }).rawBody = buf.toString('utf8');
  };
  // A bulk payout carries up to 500 items, more than the 100 kB any other request needs.
  api.use('/v1/payouts/bulk', express.urlencoded({ extended: true, limit: '1mb', parameterLimit: 10_000, verify: keepRawBody }), express.json({ limit: '1mb', type: () => true, verify: keepRawBody }));
  // The /v1 family also takes form-encoded bodies (its sample sends form-style fields); a body
  // parsed here is not parsed again as JSON below.
  api.use('/v1', express.urlencoded({ extended: true, limit: '100kb', parameterLimit: 10_000, verify: keepRawBody }));
  api.use(
    express.json({
      limit: '100kb',
      type: () => true,
      verify: keepRawBody,
    }),
  );
  api.use(recorder.merchant());
  api.use(eventStreamRouter({ apiKeys, stream, logger }));
  mountRoutes(api, routes, { store, apiKeys, signatures, idempotency, faults: { decide: (facts) => apiFaults.decideShared(facts) } });
  app.use(api);
  app.use((req, res) => {
    res.status(404).json(failure('not_found', `No route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(logger));

  let closed = false;
  return {
    app,
    boot,
    config,
    clock,
    wallClock,
    store,
    scheduler,
    ledger,
    outbox,
    router,
    health,
    feed,
    scenarios,
    apiFaults,
    routes,
    sandbox: { merchantId: SANDBOX_MERCHANT_ID, key: config.sandbox.key, signingSecret: config.sandbox.signing_secret, webhookSecret: sandboxWebhookSecret },
    stream,
    dispatcher,
    requests: requestLog,
    mocks: () => PROVIDERS.map((p) => mockAccess(p.name)!),
    setBaseUrl(url: string) {
      selfBaseUrl = config.base_url ?? url;
    },
    baseUrl,
    recoverInterrupted: () => idempotency.recoverOrphans(store),
    async close() {
      if (closed) return;
      closed = true;
      stream.close();
      dispatcher.stopFollowing();
      await scheduler.stop();
      await scheduler.leave();
      await webhookSender.close();
      await store.close();
    },
  };
}
