// railyard trigger: make the sandbox emit an event, like `stripe trigger`.
//
//   railyard trigger <event-type>
//                    [--api http://localhost:4010]        the sandbox (default $RAILYARD_API or http://localhost:4010)
//                    [--key sk_test_…]                    the API key (default $RAILYARD_KEY or the sandbox key)
//                    [--secret sig_test_…]                its request-signing secret (default
//                                                         $RAILYARD_SIGNING_SECRET or the sandbox secret)
//                    [--review-address <address>]         compliance.review_required only: an address listed
//                                                         in trading.screening.review of the sandbox's config
//
// It creates, through the public API and the sandbox helpers (test keys only), the objects whose
// state change emits that event: a charge on 0551234987 (charge.pending, charge.success) or
// 0551234988 (charge.failed); a momo /v1 collection on the same numbers (collection.*); a payment
// link for one payment, paid on its hosted page (payment_link.completed); a funded, signed momo
// transfer to the same numbers (transfer.*), or /v1 payout (payout.*); an ECG vend to meter
// 01000000001 or 01000000003 (bill.*); a
// quote (quote.*); a buy of USDT on TRC20 (trade.created, trade.completed, trade.settled; then
// reversed for trade.reversed); a sell of USDC on Solana, with the simulated deposit for
// trade.pending_confirmation and deposit.confirmed, and without it for trade.failed. On a virtual
// clock (RAILYARD_CLOCK=virtual) it advances the clock until the event fires (charges and
// transfers 5 s, Solana confirmations 32 × 0.5 s, quote expiry 46 s, the deposit window 3601 s);
// on the system clock it waits for the short ones and explains the long ones. It then checks
// GET /api/v1/events?type=<event-type> for the event. Output:
//
//   Triggering charge.success on http://localhost:4010
//     GET  /api/v1/sandbox/clock 200 virtual
//     POST /api/v1/charges 201 chg_… pending_provider
//     POST /api/v1/sandbox/clock/advance 200 +5 s, ran 1 job(s)
//     GET  /api/v1/events?type=charge.success 200 evt_…
//   Triggered charge.success (evt_…)
//
// Exit codes: 0 triggered, 1 the API refused a request or the event did not fire, 2 bad
// arguments (an unknown event type lists the valid ones).

import { randomUUID } from 'node:crypto';
import { ApiClient, type ApiResponse } from '../kernel/api-client.ts';
import { toMajorString } from '../kernel/money.ts';
import { EVENT_TYPES, type EventType } from '../webhooks/webhook.schemas.ts';
import { DEFAULT_API, DEFAULT_KEY, type CommandIo, type ExitCode } from './listen-command.ts';

export const DEFAULT_SIGNING_SECRET = 'sig_test_railyard_sandbox_signing_secret';
export const SUCCESS_MSISDN = '0551234987';
export const FAILURE_MSISDN = '0551234988';
/** Times out at mtn-momo, which still succeeds 10 s later: railyard reverses that late success. */
export const LATE_SUCCESS_MSISDN = '0551234990';
export const BUY_DELIVERY_ADDRESS = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';

export interface TriggerOptions {
  api?: string;
  key?: string;
  secret?: string;
  reviewAddress?: string;
  /** Seconds to poll for the event on the system clock before giving up (default: per event). */
  waitSeconds?: number;
}

interface Envelope {
  status?: boolean;
  message?: string;
  data?: Record<string, unknown> & { id?: string; reference?: string; status?: string };
  error?: { code?: string; details?: Record<string, unknown> };
}

class TriggerError extends Error {}

interface Call {
  status: number;
  body: Envelope;
}

function objectId(object: Record<string, unknown> | undefined): string | undefined {
  if (!object) return undefined;
  const id = object.id ?? object.reference;
  return typeof id === 'string' ? id : undefined;
}

/** Talks to the sandbox through the kernel's API client, printing one line per request. */
class Client {
  private readonly api: ApiClient;

  constructor(
    private readonly baseUrl: string,
    key: string,
    secret: string,
    private readonly io: CommandIo,
  ) {
    this.api = new ApiClient({ baseUrl, key, signingSecret: secret, timeoutMs: 30_000, headers: { 'user-agent': 'railyard-trigger/1' } });
  }

  private print(method: string, path: string, call: Call, summary: string | null): void {
    const detail = summary ?? `${call.body.error?.code ?? 'error'}: ${call.body.message ?? ''}`;
    this.io.stdout.write(`  ${method.padEnd(4)} ${path} ${call.status}${detail ? ` ${detail}` : ''}\n`);
  }

  async request(method: 'GET' | 'POST', path: string, opts: { body?: unknown; idempotent?: boolean; signed?: boolean; quiet?: boolean } = {}): Promise<Call> {
    for (let attempt = 1; ; attempt++) {
      let res: ApiResponse;
      try {
        res = await this.api.request({
          method,
          path,
          body: opts.body,
          idempotencyKey: opts.idempotent ? `railyard-trigger-${randomUUID()}` : undefined,
          sign: opts.signed,
          signal: this.io.signal,
        });
      } catch (err) {
        throw new TriggerError(`${method} ${this.baseUrl}${path} failed: ${err instanceof Error ? err.message : String(err)}. Is railyard running there (railyard serve)?`);
      }
      const body: Envelope = res.json !== null && typeof res.json === 'object' ? (res.json as Envelope) : { message: res.text.slice(0, 200) };
      const call = { status: res.status, body };
      // The same body signed in the same second is a replay: sign it again a second later.
      if (opts.signed && res.status === 401 && body.error?.details?.reason === 'replayed' && attempt < 3) {
        await new Promise((done) => setTimeout(done, 1000 - (Date.now() % 1000) + 5));
        continue;
      }
      return call;
    }
  }

  /** A request that must answer one of `expect`; anything else stops the trigger. */
  async must(method: 'GET' | 'POST', path: string, expect: number[], opts: { body?: unknown; idempotent?: boolean; signed?: boolean; summary?: (c: Call) => string } = {}): Promise<Call> {
    const call = await this.request(method, path, opts);
    const summary = opts.summary ? opts.summary(call) : [objectId(call.body.data), call.body.data?.status].filter(Boolean).join(' ');
    this.print(method, path, call, expect.includes(call.status) ? summary : null);
    if (!expect.includes(call.status)) {
      const hint =
        call.status === 401 && call.body.error?.code === 'invalid_signature'
          ? ' (is --secret the signing secret of this key?)'
          : call.status === 401
            ? ' (is --key a key of this sandbox?)'
            : call.status === 403 && call.body.error?.code === 'forbidden'
              ? ' (sandbox helpers need an sk_test_ key)'
              : '';
      throw new TriggerError(`the API refused ${method} ${path}: ${call.status} ${call.body.error?.code ?? ''} ${call.body.message ?? ''}`.trim() + hint);
    }
    return call;
  }

  /** The newest event of a type about an object, if it was emitted. */
  async findEvent(type: string, id: string): Promise<{ call: Call; eventId: string | undefined }> {
    const path = `/api/v1/events?type=${encodeURIComponent(type)}&page_size=100`;
    const call = await this.request('GET', path);
    if (call.status !== 200) {
      this.print('GET', path, call, null);
      throw new TriggerError(`the API refused GET ${path}: ${call.status} ${call.body.message ?? ''}`);
    }
    const items = (call.body.data ?? []) as unknown as { id: string; data?: { object?: Record<string, unknown> } }[];
    const found = items.find((e) => objectId(e.data?.object) === id);
    return { call, eventId: found?.id };
  }
}

type ClockMode = 'virtual' | 'system';

/** How to make the event fire once its object exists. */
interface Awaiting {
  /** The object the event is about: chg_, trf_, qt_ or trd_. */
  id: string;
  /** Virtual clock: advance this many seconds first (0: the event is already out)... */
  advance: number;
  /** ...then, while it has not fired, this many more each time, up to `maxAdvance` in all. */
  step?: number;
  maxAdvance?: number;
  /** System clock: poll this long for it; null when too long to wait, with why. */
  systemWait: number | null;
  explain?: string;
}

/**
 * Runs `railyard trigger <eventType>`: 0 when the event fired (or, on the system clock, was
 * set up to fire later), 1 when the API refused or it did not fire, 2 for bad arguments.
 */
export async function runTrigger(eventType: string, options: TriggerOptions, io: CommandIo, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  if (!eventType) {
    io.stderr.write(`railyard trigger: name an event type, one of:\n${EVENT_TYPES.map((t) => `  ${t}`).join('\n')}\n`);
    return 2;
  }
  if (!(EVENT_TYPES as readonly string[]).includes(eventType)) {
    io.stderr.write(`railyard trigger: unknown event type "${eventType}"; valid event types:\n${EVENT_TYPES.map((t) => `  ${t}`).join('\n')}\n`);
    return 2;
  }
  const type = eventType as EventType;
  const key = options.key ?? env.RAILYARD_KEY ?? DEFAULT_KEY;
  const secret = options.secret ?? env.RAILYARD_SIGNING_SECRET ?? DEFAULT_SIGNING_SECRET;
  const api = (options.api ?? env.RAILYARD_API ?? DEFAULT_API).replace(/\/+$/, '');
  try {
    const url = new URL(api);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    io.stderr.write(`railyard trigger: --api must be an http(s) URL such as ${DEFAULT_API}, got "${api}"\n`);
    return 2;
  }
  if (!/^sk_test_\S+$/.test(key)) {
    io.stderr.write(`railyard trigger: --key must be a test key (sk_test_…): trigger uses the sandbox helpers, which live keys cannot reach\n`);
    return 2;
  }
  let review: { asset: 'USDT' | 'USDC'; network: string } | undefined;
  if (type === 'compliance.review_required') {
    if (!options.reviewAddress) {
      io.stderr.write(
        [
          'railyard trigger: compliance.review_required needs a delivery address that the sandbox parks for review,',
          'and trigger cannot read the server configuration. List one in railyard.yaml and restart railyard:',
          '',
          '  trading:',
          '    screening:',
          `      review: [${BUY_DELIVERY_ADDRESS.replace(/.{4}$/, 'XXXX')}]   # any TRC20, ERC20 or Solana address`,
          '',
          'then pass the same address:',
          '',
          '  railyard trigger compliance.review_required --review-address <that address>',
          '',
        ].join('\n'),
      );
      return 2;
    }
    review = reviewNetwork(options.reviewAddress);
    if (!review) {
      io.stderr.write(`railyard trigger: --review-address "${options.reviewAddress}" is not a TRC20 (T…), ERC20 (0x…) or Solana address\n`);
      return 2;
    }
  }

  const client = new Client(api, key, secret, io);
  io.stdout.write(`Triggering ${type} on ${api}\n`);
  try {
    const clockCall = await client.must('GET', '/api/v1/sandbox/clock', [200], { summary: (c) => String(c.body.data?.mode ?? '') });
    const mode: ClockMode = clockCall.body.data?.mode === 'virtual' ? 'virtual' : 'system';
    const clockNow = Date.parse(String(clockCall.body.data?.now ?? '')) || Date.now();

    const awaiting = await setUp(type, client, { clockNow, review, reviewAddress: options.reviewAddress });
    const outcome = await fire(type, awaiting, mode, client, io, options.waitSeconds);
    if (outcome === 'scheduled') return 0;
    io.stdout.write(`Triggered ${type} (${outcome})\n`);
    return 0;
  } catch (err) {
    if (io.signal?.aborted) return 1;
    io.stderr.write(`railyard trigger: could not trigger ${type}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function reviewNetwork(address: string): { asset: 'USDT' | 'USDC'; network: string } | undefined {
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return { asset: 'USDT', network: 'ERC20' };
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) return { asset: 'USDT', network: 'TRC20' };
  if (/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address)) return { asset: 'USDC', network: 'SOL' };
  return undefined;
}

const CHARGE_AMOUNT = 10_000; // 100.00 GHS
const TRANSFER_AMOUNT = 2_000; // 20.00 GHS (+ a 1.00 GHS fee by default)
const PAYOUT_AMOUNT = '20.00'; // /v1 amounts are major units
// The bills mock's sandbox meters: a vend that succeeds, and one that fails after acceptance.
const ECG_METER_OK = '01000000001';
const ECG_METER_VEND_FAILS = '01000000003';
const ECG_METER_LATE = '01000000005'; // scenarios/sandbox.yaml: times out, then vends anyway
const BUY_FIAT = 10_000; // 100.00 GHS of USDT
const SELL_ASSET = 10_000_000; // 10 USDC

interface SetUpContext {
  clockNow: number;
  review: { asset: 'USDT' | 'USDC'; network: string } | undefined;
  reviewAddress: string | undefined;
}

/** Creates the objects; returns what to wait for. */
async function setUp(type: EventType, client: Client, ctx: SetUpContext): Promise<Awaiting> {
  const charge = async (msisdn: string) =>
    (await client.must('POST', '/api/v1/charges', [201], { idempotent: true, body: { amount: CHARGE_AMOUNT, currency: 'GHS', channel: 'momo', msisdn } })).body.data!;
  const transfer = async (msisdn: string) => {
    await client.must('POST', '/api/v1/sandbox/wallet/fund', [200], {
      body: { amount: TRANSFER_AMOUNT * 2 },
      summary: (c) => `available ${c.body.data?.available}`,
    });
    return (await client.must('POST', '/api/v1/transfers', [201], { idempotent: true, signed: true, body: { amount: TRANSFER_AMOUNT, currency: 'GHS', channel: 'momo', msisdn } })).body.data!;
  };
  const collection = async (customer: string) =>
    (await client.must('POST', '/v1/collections', [201], { idempotent: true, body: { amount: toMajorString(CHARGE_AMOUNT, 'GHS'), currency: 'GHS', channel: 'momo', customer } })).body.data!;
  // A link for one payment, paid by momo on its hosted page's public endpoint: settling completes it.
  const paidLink = async () => {
    const link = (
      await client.must('POST', '/v1/payment_links', [201], {
        idempotent: true,
        body: { amount: toMajorString(CHARGE_AMOUNT, 'GHS'), currency: 'GHS', description: 'railyard trigger', usage_limit: '1' },
      })
    ).body.data!;
    await client.must('POST', `/pay/${String(link.slug)}/collections`, [201], { body: { channel: 'momo', customer: SUCCESS_MSISDN, submission: `sub_${randomUUID().replace(/-/g, '')}` } });
    return link;
  };
  const payout = async (msisdn: string) => {
    await client.must('POST', '/api/v1/sandbox/wallet/fund', [200], {
      body: { amount: TRANSFER_AMOUNT * 2 },
      summary: (c) => `available ${c.body.data?.available}`,
    });
    return (await client.must('POST', '/v1/payouts', [201], { idempotent: true, signed: true, body: { amount: PAYOUT_AMOUNT, currency: 'GHS', channel: 'momo', msisdn } })).body.data!;
  };
  const bill = async (meter: string) => {
    await client.must('POST', '/api/v1/sandbox/wallet/fund', [200], { body: { amount: TRANSFER_AMOUNT * 2 }, summary: (c) => `available ${c.body.data?.available}` });
    // The late meter's vend times out: 502, the bill named in the error's details.
    const call = await client.must('POST', '/v1/bills', [201, 502], {
      idempotent: true,
      signed: true,
      body: { category: 'electricity', customer: meter, amount: PAYOUT_AMOUNT, currency: 'GHS' },
      summary: (c) => [objectId(c.body.data) ?? c.body.error?.details?.bill_id, c.body.data?.status ?? c.body.error?.code].filter(Boolean).join(' '),
    });
    return call.body.data ?? { id: call.body.error?.details?.bill_id };
  };
  const quote = async (body: Record<string, unknown>) => (await client.must('POST', '/api/v1/trades/quote', [201, 200], { body })).body.data!;
  const buy = async () => {
    const q = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: BUY_FIAT });
    await client.must('POST', '/api/v1/sandbox/wallet/fund', [200], { body: { amount: Number(q.net_fiat_amount) }, summary: (c) => `available ${c.body.data?.available}` });
    return (await client.must('POST', '/api/v1/trades', [201], { idempotent: true, signed: true, body: { quote_reference: q.reference, delivery_address: BUY_DELIVERY_ADDRESS } })).body.data!;
  };
  const sell = async () => {
    const q = await quote({ side: 'sell', asset: 'USDC', network: 'SOL', asset_amount: SELL_ASSET });
    return (await client.must('POST', '/api/v1/trades', [201], { idempotent: true, signed: true, body: { quote_reference: q.reference } })).body.data!;
  };
  const deposit = async (trade: Record<string, unknown>) =>
    (await client.must('POST', '/api/v1/sandbox/deposits', [200], { body: { trade_reference: trade.reference, asset_amount: trade.asset_amount } })).body.data!;
  const id = (o: Record<string, unknown>) => objectId(o)!;
  const rails = (o: Record<string, unknown>, what: string): Awaiting => ({
    id: id(o),
    advance: 5,
    step: 5,
    maxAdvance: 30,
    systemWait: 30,
    explain: `${what} settles when the provider calls back (5 s after acceptance)`,
  });

  switch (type) {
    case 'charge.pending':
      return { id: id(await charge(SUCCESS_MSISDN)), advance: 0, systemWait: 5 };
    case 'charge.success':
      return rails(await charge(SUCCESS_MSISDN), 'the charge');
    case 'charge.failed':
      return rails(await charge(FAILURE_MSISDN), 'the charge');
    case 'charge.late_success_reversed':
      return { ...rails(await charge(LATE_SUCCESS_MSISDN), 'the charge'), advance: 10, explain: 'mtn-momo reports its late success 10 s after the charge' };
    case 'transfer.pending':
      return { id: id(await transfer(SUCCESS_MSISDN)), advance: 0, systemWait: 5 };
    case 'transfer.success':
      return rails(await transfer(SUCCESS_MSISDN), 'the transfer');
    case 'transfer.failed':
      return rails(await transfer(FAILURE_MSISDN), 'the transfer');
    case 'transfer.late_success_reversed':
      return { ...rails(await transfer(LATE_SUCCESS_MSISDN), 'the transfer'), advance: 10, explain: 'mtn-momo reports its late success 10 s after the transfer' };
    case 'collection.pending':
      return { id: id(await collection(SUCCESS_MSISDN)), advance: 0, systemWait: 5 };
    case 'collection.settled':
      return rails(await collection(SUCCESS_MSISDN), 'the collection');
    case 'collection.failed':
      return rails(await collection(FAILURE_MSISDN), 'the collection');
    case 'collection.late_success_reversed':
      return { ...rails(await collection(LATE_SUCCESS_MSISDN), 'the collection'), advance: 10, explain: 'mtn-momo reports its late success 10 s after the collection' };
    case 'payment_link.completed':
      return rails(await paidLink(), 'the payment on the link');
    case 'payout.pending':
      return { id: id(await payout(SUCCESS_MSISDN)), advance: 0, systemWait: 5 };
    case 'payout.settled':
      return rails(await payout(SUCCESS_MSISDN), 'the payout');
    case 'payout.failed':
      return rails(await payout(FAILURE_MSISDN), 'the payout');
    case 'payout.late_success_reversed':
      return { ...rails(await payout(LATE_SUCCESS_MSISDN), 'the payout'), advance: 10, explain: 'mtn-momo reports its late success 10 s after the payout' };
    case 'bill.pending':
      return { id: id(await bill(ECG_METER_OK)), advance: 0, systemWait: 5 };
    case 'bill.settled':
      return rails(await bill(ECG_METER_OK), 'the ECG vend');
    case 'bill.failed':
      return rails(await bill(ECG_METER_VEND_FAILS), 'the ECG vend');
    case 'bill.late_success_reversed':
      return { ...rails(await bill(ECG_METER_LATE), 'the ECG vend'), advance: 10, explain: 'the biller vends 10 s after railyard gave up on it' };
    case 'quote.created':
      return { id: id(await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: BUY_FIAT })), advance: 0, systemWait: 5 };
    case 'quote.expired': {
      const q = await quote({ side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: BUY_FIAT });
      const expiresAt = Date.parse(String(q.expires_at));
      const ttl = Number.isFinite(expiresAt) ? Math.max(1, Math.ceil((expiresAt - ctx.clockNow) / 1000) + 1) : 46;
      return {
        id: id(q),
        advance: ttl,
        step: 15,
        maxAdvance: ttl + 60,
        systemWait: null,
        explain: `quote ${id(q)} expires at ${String(q.expires_at)} (45 s after creation by default); quote.expired fires then`,
      };
    }
    case 'trade.created':
    case 'trade.completed':
    case 'trade.settled':
      return { id: id(await buy()), advance: 0, systemWait: 5 };
    case 'trade.reversed': {
      const trade = await buy();
      await client.must('POST', `/api/v1/sandbox/trades/${String(trade.reference)}/reverse`, [200]);
      return { id: id(trade), advance: 0, systemWait: 5 };
    }
    case 'trade.pending_payment':
      return { id: id(await sell()), advance: 0, systemWait: 5 };
    case 'trade.pending_confirmation':
      return { id: id(await deposit(await sell())), advance: 0, systemWait: 5 };
    case 'deposit.confirmed': {
      const trade = await deposit(await sell());
      return {
        id: id(trade),
        advance: 16,
        step: 16,
        maxAdvance: 600,
        systemWait: 60,
        explain: `the deposit confirms after ${String(trade.required_confirmations ?? 32)} Solana confirmations (0.5 s each by default)`,
      };
    }
    case 'trade.failed': {
      const trade = await sell();
      return {
        id: id(trade),
        advance: 3601,
        step: 3600,
        maxAdvance: 4 * 3601,
        systemWait: null,
        explain: `sell ${id(trade)} fails with deposit_not_received when its deposit window closes (trading.deposit_window_seconds, 3600 s by default); trade.failed fires then`,
      };
    }
    case 'compliance.review_required': {
      const { asset, network } = ctx.review!;
      const q = await quote({ side: 'buy', asset, network, fiat_amount: BUY_FIAT });
      await client.must('POST', '/api/v1/sandbox/wallet/fund', [200], { body: { amount: Number(q.net_fiat_amount) }, summary: (c) => `available ${c.body.data?.available}` });
      const call = await client.must('POST', '/api/v1/trades', [201, 403], {
        idempotent: true,
        signed: true,
        body: { quote_reference: q.reference, delivery_address: ctx.reviewAddress },
        summary: (c) =>
          [c.body.error?.details?.order_reference ?? objectId(c.body.data), c.body.error?.details?.status ?? c.body.data?.status, c.body.error?.code ? `(${c.body.error.code})` : '']
            .filter(Boolean)
            .join(' '),
      });
      const ref = call.body.error?.details?.order_reference;
      if (call.status !== 403 || typeof ref !== 'string' || call.body.error?.details?.status !== 'under_review') {
        throw new TriggerError(
          `the trade was not parked for review (${call.status} ${call.body.error?.code ?? String(call.body.data?.status ?? '')}): ${ctx.reviewAddress} is not in the sandbox's trading.screening.review list`,
        );
      }
      return { id: ref, advance: 0, systemWait: 5 };
    }
  }
}

/** Makes the event fire if it has not, then finds it: its id, or 'scheduled' when it fires later. */
async function fire(type: EventType, awaiting: Awaiting, mode: ClockMode, client: Client, io: CommandIo, waitSeconds?: number): Promise<string> {
  const report = (found: { call: Call; eventId: string | undefined }) => {
    io.stdout.write(`  GET  /api/v1/events?type=${type} ${found.call.status} ${found.eventId ?? '(not yet)'}\n`);
  };
  let found = await client.findEvent(type, awaiting.id);
  if (found.eventId) {
    report(found);
    return found.eventId;
  }
  if (mode === 'virtual') {
    let advanced = 0;
    let next = awaiting.advance || awaiting.step || 5;
    const max = awaiting.maxAdvance ?? Math.max(awaiting.advance, 5);
    while (advanced < max) {
      const seconds = Math.min(next, max - advanced);
      await client.must('POST', '/api/v1/sandbox/clock/advance', [200], { body: { seconds, wait: true }, summary: (c) => `+${seconds} s, ran ${String(c.body.data?.jobs_run ?? '?')} job(s)` });
      advanced += seconds;
      next = awaiting.step ?? next;
      found = await client.findEvent(type, awaiting.id);
      if (found.eventId) {
        report(found);
        return found.eventId;
      }
    }
    report(found);
    throw new TriggerError(`${type} did not fire for ${awaiting.id} after advancing the clock ${advanced} s${awaiting.explain ? `; ${awaiting.explain}` : ''}`);
  }
  // The system clock: the callbacks and confirmations happen in real time.
  if (awaiting.systemWait === null) {
    io.stdout.write(`${awaiting.explain ?? `${type} fires later`}.\n`);
    io.stdout.write(`(On a virtual clock, RAILYARD_CLOCK=virtual, trigger advances the clock so it fires at once.)\n`);
    io.stdout.write(`Triggered ${type}: it fires later, for ${awaiting.id}\n`);
    return 'scheduled';
  }
  const limit = (waitSeconds ?? awaiting.systemWait) * 1000;
  if (awaiting.explain) io.stdout.write(`  waiting up to ${limit / 1000} s: ${awaiting.explain}\n`);
  const deadline = Date.now() + limit;
  while (Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 500));
    if (io.signal?.aborted) throw new TriggerError('stopped');
    found = await client.findEvent(type, awaiting.id);
    if (found.eventId) {
      report(found);
      return found.eventId;
    }
  }
  report(found);
  throw new TriggerError(`${type} did not fire for ${awaiting.id} within ${limit / 1000} s`);
}
