import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { hmacSha256Hex } from '../kernel/secrets.ts';
import { parseYamlWith, YamlSourceError } from '../kernel/yaml-source.ts';

const feeRule = z.strictObject({
  bps: z.number().int().min(0).max(10_000).default(0).describe('Percentage in basis points (100 = 1%), rounded up'),
  fixed: z.number().int().min(0).default(0).describe('Flat fee in pesewas'),
  min: z.number().int().min(0).default(0),
  max: z.number().int().min(0).nullable().default(null),
});
export type FeeRule = z.infer<typeof feeRule>;

/**
 * Jobs in flight at once unless configured. On a 2-core machine 64 settled an advance's backlog
 * fastest (32 and 128 within a round of 256 were slower, 256 slowest): more jobs in flight queue
 * more transactions into each group commit, up to where their network calls crowd each other.
 */
export const DEFAULT_JOB_CONCURRENCY = 64;

const rateText = z.string().regex(/^\d{1,12}(\.\d{1,8})?$/, 'a decimal rate with at most 8 decimal places, as a string');
const perNetwork = z.record(z.string(), z.number().int().min(0));

const trading = z
  .strictObject({
    spread_bps: z.number().int().min(0).max(5_000).default(150).describe('Spread each side of the benchmark, in basis points'),
    quote_ttl_seconds: z.number().int().min(1).max(3_600).default(45),
    usd_max_age_seconds: z.number().int().min(1).default(90),
    fx_max_age_seconds: z
      .number()
      .int()
      .min(1)
      .default(24 * 3600),
    market_tolerance_bps: z.number().int().min(0).max(10_000).default(50).describe('Execute refuses with rate_expired when the benchmark moved more than this since the quote'),
    market: z
      .strictObject({
        interval_seconds: z.number().int().min(1).max(3_600).default(10),
        volatility_bps: z.number().int().min(0).max(1_000).default(5).describe('Largest move of one step'),
        usd_start: z.strictObject({ USDT: rateText.default('1'), USDC: rateText.default('1') }).prefault({}),
        fx_rate: rateText.default('15.5').describe('Initial USD/GHS, admin-managed'),
        fx_auto_restamp: z.boolean().default(true).describe('Treat the configured FX rate as re-confirmed at each UTC midnight until an admin sets one'),
      })
      .prefault({}),
    confirmations: z.record(z.string(), z.number().int().min(1).max(1_000)).default({ TRC20: 19, ERC20: 12, SOL: 32 }),
    block_seconds: z.record(z.string(), z.number().min(0.1).max(600)).default({ TRC20: 3, ERC20: 12, SOL: 0.5 }),
    deposit_window_seconds: z.number().int().min(1).default(3_600).describe('A sell whose deposit has not arrived by then fails'),
    limits: z
      .strictObject({
        per_trade: z.number().int().min(1).default(50_000_000).describe('GHS minor units'),
        daily: z.number().int().min(1).default(200_000_000),
        monthly: z.number().int().min(1).default(2_000_000_000),
      })
      .prefault({}),
    inventory: z
      .record(z.string(), perNetwork)
      .default({ USDT: { TRC20: 2_000_000_000_000, ERC20: 1_000_000_000_000 }, USDC: { ERC20: 1_000_000_000_000, SOL: 500_000_000_000 } })
      .describe('Treasury inventory per asset and network at first start, in asset minor units'),
    exposure_cap: z
      .record(z.string(), z.number().int().min(0))
      .default({ USDT: 100_000_000, USDC: 50_000_000 })
      .describe('Largest single buy per asset, in GHS minor units, when inventory is full; it shrinks in proportion as inventory depletes'),
    screening: z.strictObject({ blocked: z.array(z.string()).default([]), review: z.array(z.string()).default([]) }).prefault({}),
  })
  .prefault({});
export type TradingConfig = z.infer<typeof trading>;

/** The fields every provider's block under `providers` has, whatever else it holds (its credentials). */
export interface ProviderBlock {
  enabled: boolean;
  priority: number;
  base_url?: string | undefined;
  timeout_ms?: number | undefined;
  callback_token?: string | undefined;
}

/** The zod schema of one provider's block, defaults included (an absent block is `{}`). */
export type ProviderBlockSchema = z.ZodType<ProviderBlock, unknown>;

/**
 * What the configuration needs of each provider: its id (the key of its block) and its block's
 * schema. The composition root hands the providers down (src/railyard-config.ts): config/ sits
 * below them and never imports one.
 */
export interface ProviderBlockSource {
  readonly id: string;
  readonly schema: ProviderBlockSchema;
}

/** The `providers` section's shape for these providers: each one's block, keyed by its id. */
type ProviderBlocks<Providers extends readonly ProviderBlockSource[]> = { [P in Providers[number] as P['id']]: P['schema'] };

/** The `providers` section: a strict object of each provider's block, keyed by its id. */
function providerBlocksSchema<const Providers extends readonly ProviderBlockSource[]>(providers: Providers) {
  const blocks = Object.fromEntries(providers.map((p) => [p.id, p.schema])) as ProviderBlocks<Providers>;
  // Every block has its defaults, so an absent section is `{}` (the cast: zod cannot see that through the generic).
  return z.strictObject(blocks).prefault({} as never);
}

/** Every setting; its `providers` section gets its blocks in configSchemaFor. */
const settingsSchema = z.strictObject({
  port: z.number().int().min(0).max(65_535).default(4010),
  host: z.string().default('0.0.0.0'),
  base_url: z.url().optional().describe('Public URL of this sandbox, used in callback URLs; default http://127.0.0.1:<port>'),
  db: z.string().min(1).default('./data/railyard.db'),
  clock: z.enum(['system', 'virtual']).default('system'),
  virtual_start: z.iso.datetime().optional().describe('Where a virtual clock starts; default 2026-01-01T00:00:00Z'),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .optional()
    .describe('Seeds ids and fake data; default 1 on a virtual clock, random otherwise'),
  log_requests: z.boolean().default(true),
  server: z
    .strictObject({
      trust_proxy: z
        .union([z.boolean(), z.number().int().min(0), z.string().min(1)])
        .default(false)
        .describe("express 'trust proxy': when set, X-Forwarded-For gives the client address that key IP allowlists check"),
    })
    .prefault({}),
  sandbox: z
    .strictObject({
      merchant_name: z.string().min(1).default('Sandbox Merchant'),
      key: z
        .string()
        .regex(/^sk_test_[A-Za-z0-9_]{16,128}$/, 'must be sk_test_ followed by 16-128 letters, digits or underscores')
        .default('sk_test_railyard_sandbox_0000000000000000'),
      signing_secret: z.string().min(16).default('sig_test_railyard_sandbox_signing_secret'),
    })
    .prefault({}),
  scenarios: z.array(z.string().min(1)).default(['scenarios']),
  scheduler: z
    .strictObject({
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(1_000)
        .default(DEFAULT_JOB_CONCURRENCY)
        .describe('Jobs of different objects in flight at once; 1 runs every job one at a time (the same bytes either way)'),
      thread: z
        .boolean()
        .default(true)
        .describe(
          'railyard serve on the system clock with a SQLite file: run the jobs (callbacks, polls, webhook deliveries) on a thread of their own beside the one answering the API; false runs them on that one',
        ),
    })
    .prefault({}),
  rails: z
    .strictObject({
      timeout_ms: z.number().int().min(10).max(120_000).default(5_000).describe('Real-time network timeout per provider call'),
      poll_after_seconds: z.number().int().min(1).default(300).describe('Business seconds before asking a provider for a status when no callback came'),
      poll_interval_seconds: z.number().int().min(1).default(300),
      max_polls: z.number().int().min(1).max(1000).default(12),
      default_callback_seconds: z.number().min(0).default(3).describe('Mocks: seconds until the callback when no scenario rule decides'),
      max_hold_ms: z.number().int().min(10).default(60_000).describe('Mocks: the longest a simulated timeout holds a request'),
      callback_timeout_ms: z.number().int().min(10).max(120_000).default(10_000).describe('Mocks: real-time timeout of one callback to its receiver'),
    })
    .prefault({}),
  // One block per provider, from the providers' own options (src/providers/<id>/options.ts).
  providers: providerBlocksSchema([]),
  trading,
  webhooks: z
    .strictObject({
      timeout_ms: z.number().int().min(10).max(60_000).default(10_000).describe('Real-time timeout of one delivery attempt'),
      retry_schedule_seconds: z
        .array(z.number().int().min(0))
        .min(0)
        .max(50)
        .default([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000])
        .describe('Delays after each failed attempt, on the business clock; after the last, the delivery fails'),
      rotation_grace_seconds: z.number().int().min(0).default(86_400).describe('How long a rotated-out secret still signs deliveries'),
      sandbox_url: z.url().optional().describe('Registers this URL for the seeded sandbox merchant at start-up'),
    })
    .prefault({}),
  inspector: z
    .strictObject({
      max_requests: z.number().int().min(1).max(1_000_000).default(1_000).describe('How many requests the requests inspector keeps per environment (in memory); the oldest make room'),
      max_bytes: z.number().int().min(65_536).max(1_073_741_824).default(8_388_608).describe('How many bytes (estimated) the requests inspector keeps per environment; the oldest make room'),
    })
    .prefault({}),
  fees: z
    .strictObject({
      collection: z
        .strictObject({
          momo: feeRule.prefault({}),
          // /v1 collections: a card costs the acquirer's interchange; a direct debit a small flat-ish fee.
          card: feeRule.prefault({ bps: 195 }),
          bank: feeRule.prefault({ bps: 50, min: 100 }),
        })
        .prefault({ momo: { bps: 100 } }),
      payout: z.strictObject({ momo: feeRule.prefault({}), bank: feeRule.prefault({}) }).prefault({ momo: { fixed: 100 }, bank: { fixed: 200 } }),
      bills: feeRule.prefault({ fixed: 50 }).describe('POST /v1/bills: on top of the amount, reserved with it (0.50 GHS by default)'),
    })
    .prefault({}),
});

/**
 * The configuration schema for these providers, in their order: railyard's own is
 * src/railyard-config.ts's, built from src/providers/index.ts.
 */
export function configSchemaFor<const Providers extends readonly ProviderBlockSource[]>(providers: Providers) {
  // extend keeps the section where it stands (so the parsed config's keys keep their order).
  return settingsSchema.extend({ providers: providerBlocksSchema(providers) });
}

/** The schema for any providers; railyard's own (src/railyard-config.ts) types each provider's block too. */
export type ConfigSchema = ReturnType<typeof configSchemaFor<readonly ProviderBlockSource[]>>;
/** A configuration, whatever its providers: `providers` holds a block per provider, each with at least the common fields. */
export type Config = z.infer<ConfigSchema>;
export type ConfigInput = z.input<ConfigSchema>;

export class ConfigError extends Error {}

const ENV_NUMBER = (name: string, value: string): number => {
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
};

const ENV_BOOLEAN = (name: string, value: string): boolean => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(value)}`);
};

/**
 * RAILYARD_JOB_CONCURRENCY: jobs in flight at once, for `serve` and for replays and contract
 * generation alike (1 runs them one at a time, to rule the scheduler out while debugging).
 */
export function jobConcurrencyFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return env.RAILYARD_JOB_CONCURRENCY ? ENV_NUMBER('RAILYARD_JOB_CONCURRENCY', env.RAILYARD_JOB_CONCURRENCY) : undefined;
}

/** Defaults, then railyard.yaml, then environment variables, validated by `configSchema`. */
export function loadConfigWith<Schema extends ConfigSchema>(configSchema: Schema, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): z.infer<Schema> {
  const file = env.RAILYARD_CONFIG ?? `${cwd}/railyard.yaml`;
  let fromFile: Record<string, any> = {};
  if (env.RAILYARD_CONFIG && !existsSync(file)) throw new ConfigError(`RAILYARD_CONFIG names ${file}, which does not exist`);
  if (existsSync(file)) {
    try {
      const text = readFileSync(file, 'utf8');
      // Validate with positions first, so file errors cite file:line:column; then merge the raw
      // values under the environment's overrides.
      parseYamlWith(configSchema, text, file);
      fromFile = (parseYaml(text) ?? {}) as Record<string, any>;
    } catch (err) {
      if (err instanceof YamlSourceError) throw new ConfigError(`Invalid configuration:\n${err.message}`);
      throw err;
    }
  }
  const merged: Record<string, any> = structuredClone(fromFile);
  const set = (path: string[], value: unknown) => {
    let node = merged;
    for (const key of path.slice(0, -1)) node = node[key] ??= {};
    node[path[path.length - 1]!] = value;
  };
  if (env.PORT) set(['port'], ENV_NUMBER('PORT', env.PORT));
  if (env.HOST) set(['host'], env.HOST);
  if (env.RAILYARD_BASE_URL) set(['base_url'], env.RAILYARD_BASE_URL);
  if (env.RAILYARD_DB) set(['db'], env.RAILYARD_DB);
  if (env.RAILYARD_CLOCK) set(['clock'], env.RAILYARD_CLOCK);
  if (env.RAILYARD_SEED) set(['seed'], ENV_NUMBER('RAILYARD_SEED', env.RAILYARD_SEED));
  if (env.RAILYARD_SANDBOX_KEY) set(['sandbox', 'key'], env.RAILYARD_SANDBOX_KEY);
  if (env.RAILYARD_SANDBOX_SIGNING_SECRET) set(['sandbox', 'signing_secret'], env.RAILYARD_SANDBOX_SIGNING_SECRET);
  if (env.RAILYARD_SCENARIOS)
    set(
      ['scenarios'],
      env.RAILYARD_SCENARIOS.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  const concurrency = jobConcurrencyFromEnv(env);
  if (concurrency !== undefined) set(['scheduler', 'concurrency'], concurrency);
  if (env.RAILYARD_JOB_THREAD) set(['scheduler', 'thread'], ENV_BOOLEAN('RAILYARD_JOB_THREAD', env.RAILYARD_JOB_THREAD));
  if (env.RAILYARD_RAIL_TIMEOUT_MS) set(['rails', 'timeout_ms'], ENV_NUMBER('RAILYARD_RAIL_TIMEOUT_MS', env.RAILYARD_RAIL_TIMEOUT_MS));
  if (env.RAILYARD_WEBHOOK_URL) set(['webhooks', 'sandbox_url'], env.RAILYARD_WEBHOOK_URL);
  if (env.RAILYARD_TRUST_PROXY) {
    const v = env.RAILYARD_TRUST_PROXY;
    set(['server', 'trust_proxy'], v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v);
  }
  if (env.RAILYARD_LOG_REQUESTS) set(['log_requests'], env.RAILYARD_LOG_REQUESTS !== 'false');
  return buildConfigWith(configSchema, merged);
}

/** Validates a config object with `configSchema` (tests and the replay engine build configs in code). */
export function buildConfigWith<Schema extends ConfigSchema>(configSchema: Schema, input: ConfigInput | Record<string, unknown> = {}): z.infer<Schema> {
  const result = configSchema.safeParse(input);
  if (!result.success) {
    throw new ConfigError(`Invalid configuration:\n${result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('\n')}`);
  }
  return Object.freeze(result.data) as z.infer<Schema>;
}

/** Stable per-provider callback tokens derived from the sandbox signing secret unless configured. */
export function callbackToken(config: Config, provider: string): string {
  return config.providers[provider]?.callback_token ?? `cbt_${hmacSha256Hex(config.sandbox.signing_secret, `callback:${provider}`).slice(0, 32)}`;
}

/**
 * Every credential this configuration holds, for the redactor that keeps them out of the log:
 * the sandbox key and signing secret, each provider's keys, secrets and callback token, and the
 * user:password pairs the adapters send as Basic credentials.
 */
export function configuredSecrets(config: Config): string[] {
  const secrets = [config.sandbox.key, config.sandbox.signing_secret];
  for (const [name, block] of Object.entries(config.providers)) {
    const fields = block as unknown as Record<string, unknown>;
    secrets.push(callbackToken(config, name));
    for (const [field, value] of Object.entries(fields)) {
      if (typeof value === 'string' && /(key|secret|token|api_user|client_id)$/.test(field)) secrets.push(value);
    }
    const user = fields.api_user ?? fields.client_id;
    const password = fields.api_key ?? fields.client_secret;
    if (typeof user === 'string' && typeof password === 'string') secrets.push(`${user}:${password}`);
  }
  return secrets;
}
