import { z } from 'zod';
import type { Config } from '../config/config.ts';
import { ok, envelopeOf } from '../http/envelope.ts';
import { noSuch, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { ValidationError } from '../kernel/errors.ts';
import { ASSETS, legAgeSeconds, type Leg, type PriceFeed } from './price-feed.ts';
import { formatRate, parseRate } from './rate-math.ts';

export interface MarketRouteDeps {
  feed: PriceFeed;
  clock: Clock;
  config: Pick<Config, 'trading'>;
}

const legSchema = z.object({
  leg: z.enum(['USDT', 'USDC', 'FX']),
  value: z.string().describe('Exact decimal: USD per asset, or GHS per USD for FX'),
  as_of: z.string().describe('ISO 8601: when this value was observed or set'),
  age_seconds: z.number().min(0),
  max_age_seconds: z.number().int(),
  stale: z.boolean().describe('age_seconds > max_age_seconds: quoting halts with rate_expired'),
  source: z.enum(['market', 'pinned', 'admin', 'config']),
});

const marketSchema = z.object({
  frozen: z.boolean(),
  legs: z.array(legSchema),
  benchmarks: z.array(z.object({ asset: z.enum(ASSETS), rate: z.string().describe('GHS per asset = usd × fx, rounded down; the spread is not applied') })),
});

/** A positive decimal with at most 12 integer and 8 fractional digits, as a string (never a float). */
const decimalText = (field: string, example: string) =>
  z
    .string({ error: `${field} must be a decimal string, e.g. "${example}"` })
    .regex(/^\d{1,12}(\.\d{1,8})?$/, { error: `${field} must be a decimal string with at most 8 decimal places, e.g. "${example}"`, abort: true })
    .refine((text) => /[1-9]/.test(text), `${field} must be greater than zero`);

const asOfSchema = z.iso
  .datetime({ offset: true, error: 'as_of must be an ISO 8601 date-time, e.g. 2026-01-01T00:00:00Z' })
  .optional()
  .describe('When the value was observed; default now; never in the future');

const noBody = z.strictObject({}).optional();

/** Sandbox helpers for the benchmark legs: read the market, pin a USD price, set USD/GHS, freeze and resume. */
export function marketRoutes(deps: MarketRouteDeps): RouteSpec[] {
  const { feed, clock } = deps;
  const { usd_max_age_seconds: usdMaxAge, fx_max_age_seconds: fxMaxAge } = deps.config.trading;

  const marketState = async () => {
    const now = clock.now();
    const benchmarks = await Promise.all(ASSETS.map((asset) => feed.benchmark(asset)));
    const legs: Leg[] = [...benchmarks.map((b) => b.usd), benchmarks[0]!.fx];
    return {
      frozen: feed.isFrozen(),
      legs: legs.map((leg) => {
        const age = legAgeSeconds(leg, now);
        const maxAge = leg.name === 'FX' ? fxMaxAge : usdMaxAge;
        return { leg: leg.name, value: formatRate(leg.value), as_of: iso(leg.asOf), age_seconds: age, max_age_seconds: maxAge, stale: age > maxAge, source: leg.source };
      }),
      benchmarks: benchmarks.map((b, i) => ({ asset: ASSETS[i]!, rate: formatRate(b.rate) })),
    };
  };

  const asOf = (text: string | undefined): number => {
    const now = clock.now();
    if (text === undefined) return now;
    const at = Date.parse(text);
    if (at > now) {
      throw new ValidationError(`as_of ${text} is in the future (business time is ${iso(now)})`, [{ field: 'as_of', message: 'must not be in the future' }]);
    }
    return at;
  };

  const response = { status: 200, description: 'The market: legs, their ages and the benchmarks', schema: envelopeOf(marketSchema) };

  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/market',
      operationId: 'sandboxGetMarket',
      summary: 'The benchmark legs (USD prices, USD/GHS), how old each one is, and the benchmarks',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response,
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Market', await marketState()) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/sandbox/rates/usd/:asset',
      operationId: 'sandboxPinUsdRate',
      summary: 'Pin the USD price of an asset at a value, as of a time, until the market is resumed',
      description: 'A pinned leg never moves; with an old as_of it goes stale, which halts quoting with rate_expired.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      params: pathIdParams('asset', 'asset', 'USDT', ASSETS),
      body: z.strictObject({ price: decimalText('price', '1.0003').describe('USD per asset'), as_of: asOfSchema }),
      response,
      errors: ['forbidden', 'not_found'],
      handler: async ({ params, body }) => {
        const asset = ASSETS.find((a) => a === params.asset);
        if (!asset) throw noSuch('asset', params.asset);
        const at = asOf(body.as_of);
        await feed.pinUsd(asset, parseRate(body.price), at);
        return { status: 200, body: ok(`${asset} USD price pinned at ${body.price}`, await marketState()) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/sandbox/rates/fx',
      operationId: 'sandboxSetFxRate',
      summary: 'Set the admin-managed USD/GHS rate, as of a time',
      description: 'Once set, the configured rate is no longer re-stamped at each UTC midnight.',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({ rate: decimalText('rate', '15.5').describe('GHS per USD'), as_of: asOfSchema }),
      response,
      errors: ['forbidden'],
      handler: async ({ body }) => {
        const at = asOf(body.as_of);
        await feed.setFx(parseRate(body.rate), at);
        return { status: 200, body: ok(`USD/GHS set at ${body.rate}`, await marketState()) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/market/freeze',
      operationId: 'sandboxFreezeMarket',
      summary: 'Stop the market: the USD legs keep their value and as-of, so they go stale after the USD age limit',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: noBody,
      response,
      errors: ['forbidden'],
      handler: async () => {
        await feed.freeze();
        return { status: 200, body: ok('Market frozen', await marketState()) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/market/resume',
      operationId: 'sandboxResumeMarket',
      summary: 'Unfreeze the market and unpin the USD legs: the walk continues from their current values',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: noBody,
      response,
      errors: ['forbidden'],
      handler: async () => {
        await feed.resume();
        return { status: 200, body: ok('Market resumed', await marketState()) };
      },
    }),
  ];
}
