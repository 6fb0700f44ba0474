import type { Rng } from '../seeded-random.ts';
import type { FuzzState } from './fuzz-state.ts';
import { obj, type Json } from './json-text.ts';
import { ID_PATTERN, type Operation, type Param } from './operations-of.ts';
import { stringMatching } from './string-matching.ts';

export interface Gen {
  rng: Rng;
  state: FuzzState;
}

export const OMIT = Symbol('omit');

/**
 * Values the document cannot give (a Ghana mobile number is a refinement, not a pattern) or
 * should not (a webhook URL the sandbox would really call), by property name. The rest comes
 * from the schemas alone.
 */
const HINTS: Record<string, (g: Gen, siblings: Json, schema: Json) => unknown> = {
  msisdn: (g) =>
    g.rng.weighted([
      ['0551234987', 12],
      ['233551234987', 2],
      ['+233551234987', 2],
      ['0241234567', 2],
      ['0201234567', 2],
      ['0271234567', 1],
      ['0551234988', 2],
      ['0551234989', 0.3],
    ]),
  // A quote's chain must be one its asset trades on; a charge's mobile network is an override.
  network: (g, siblings) =>
    siblings.asset === 'USDT' ? g.rng.pick(['TRC20', 'ERC20']) : siblings.asset === 'USDC' ? g.rng.pick(['ERC20', 'SOL']) : g.rng.chance(0.8) ? OMIT : g.rng.pick(['MTN', 'TELECEL', 'AT']),
  account_number: (g) =>
    g.rng.weighted([
      ['1000000001', 6],
      ['1000000002', 2],
      ['1000000003', 2],
      [String(1_000_000_000 + g.rng.below(1e9)), 1],
    ]),
  bank_code: () => '040100',
  bank_account_name: (g) => g.rng.pick(['Ama Owusu', 'Kwame Mensah', 'Efua Asante-Boateng']),
  amount: (g) => 100 + g.rng.below(20_000),
  fiat_amount: (g) => 10_000 + g.rng.below(500_000),
  asset_amount: (g) => 1_000_000 + g.rng.below(50_000_000),
  // Port 9 (discard) refuses at once: deliveries fail fast instead of waiting on a real host.
  url: (g) => `http://127.0.0.1:9/hooks/${g.rng.below(1e6)}`,
  delivery_address: (g, siblings) => {
    const quote = g.state.pools.get('qt')?.find((q) => q.id === siblings.quote_reference)?.object;
    if (quote?.side === 'sell') return OMIT;
    const network = quote?.network ?? g.rng.pick(['TRC20', 'ERC20', 'SOL']);
    return network === 'TRC20' ? 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' : network === 'ERC20' ? `0x${'a1'.repeat(20)}` : '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
  },
  price: (g) => g.rng.pick(['1', '1.0003', '0.9998', '1.00010000']),
  rate: (g) => g.rng.pick(['15.5', '15.25', '16']),
  as_of: () => OMIT,
  // Small steps: settle charges and transfers without expiring every quote on the way.
  seconds: (g) =>
    g.rng.weighted([
      [1, 6],
      [5, 4],
      [30, 2],
      [120, 0.5],
      [3_600, 0.1],
    ]),
  stage: (g) =>
    g.rng.weighted([
      ['sandbox', 10],
      ['live', 1],
      ['requested', 1],
      ['none', 1],
    ]),
  down: (g) => g.rng.chance(0.15),
  environment: (g) => (g.rng.chance(0.8) ? 'test' : 'live'),
  // Few live endpoints, each for one event type: every event fans out to each matching
  // endpoint and retries, and a long run would spend its time failing to deliver to hundreds.
  enabled: (g) => g.rng.chance(0.05),
  event_types: (g, _siblings, schema) => (g.rng.chance(0.1) || !Array.isArray(schema.items?.enum) ? OMIT : [g.rng.pick(schema.items.enum)]),
  page_size: (g) => String(1 + g.rng.below(100)),
};

export function validValue(g: Gen, schema: Json, name: string, siblings: Json | undefined): unknown {
  const hint = name && Object.hasOwn(HINTS, name) ? HINTS[name] : undefined;
  if (hint) return hint(g, siblings ?? {}, schema);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return g.rng.pick(schema.enum);
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches)) return validValue(g, g.rng.pick(branches), name, siblings);
  const type = Array.isArray(schema.type) ? g.rng.pick(schema.type.filter((t: string) => t !== 'null')) : schema.type;
  switch (type) {
    case 'object': {
      const out = obj({});
      const required = new Set<string>(schema.required ?? []);
      for (const [prop, propSchema] of Object.entries<Json>(schema.properties ?? {})) {
        // A hint decides for itself whether an optional field is sent (OMIT).
        if (!required.has(prop) && !Object.hasOwn(HINTS, prop) && g.rng.chance(0.5)) continue;
        const v = validValue(g, propSchema, prop, out);
        if (v !== OMIT) out[prop] = v;
      }
      // Quotes: exactly one of fiat_amount and asset_amount.
      if ('fiat_amount' in out && 'asset_amount' in out) delete out[g.rng.chance(0.5) ? 'fiat_amount' : 'asset_amount'];
      return out;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const n = min + g.rng.below(Math.max(1, Math.min(schema.maxItems ?? 3, 3) - min + 1));
      return Array.from({ length: n }, () => validValue(g, schema.items ?? {}, '', undefined));
    }
    case 'integer':
    case 'number': {
      const lo = schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? 0);
      const hi = Math.min(schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : (schema.maximum ?? 1e6), lo + 1e6);
      return lo + g.rng.below(Math.max(1, hi - lo + 1));
    }
    case 'boolean':
      return g.rng.chance(0.5);
    case 'string':
      return validString(g, schema);
    default:
      return 'x';
  }
}

function validString(g: Gen, schema: Json): string {
  if (schema.format === 'date-time') return new Date(Date.UTC(2025, 0, 1) + g.rng.below(3e10)).toISOString();
  if (schema.format === 'uri') return `http://127.0.0.1:9/${g.rng.below(1e6)}`;
  if (typeof schema.pattern === 'string') {
    const prefix = /^\^([a-z]+)_\[0-9a-z\]\{20\}\$$/.exec(schema.pattern)?.[1];
    const pool = prefix ? g.state.pools.get(prefix) : undefined;
    if (pool?.length && g.rng.chance(0.85)) return pickRecent(g.rng, pool).id;
    const fromPattern = stringMatching(g.rng, schema.pattern);
    if (fromPattern !== null) return fromPattern;
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return String(g.rng.pick(schema.examples));
  const min = schema.minLength ?? 1;
  const max = Math.min(schema.maxLength ?? 24, min + 24);
  return randomText(g.rng, min + g.rng.below(max - min + 1), 'abcdefghijklmnopqrstuvwxyz0123456789');
}

export function validPathValue(g: Gen, p: Param): string {
  if (Array.isArray(p.schema.enum) && p.schema.enum.length) return String(g.rng.pick(p.schema.enum));
  const example = Array.isArray(p.schema.examples) ? String(p.schema.examples[0] ?? 'x') : 'x';
  const prefix = ID_PATTERN.exec(example)?.[1];
  const pool = prefix ? g.state.pools.get(prefix) : undefined;
  if (pool?.length && g.rng.chance(0.85)) return pickRecent(g.rng, pool).id;
  return example;
}

export function validQuery(g: Gen, op: Operation): [string, string][] {
  const query: [string, string][] = [];
  for (const p of op.queryParams) {
    if (!p.required && g.rng.chance(0.7)) continue;
    if (p.name === 'cursor') {
      if (g.state.cursors.length) query.push([p.name, g.rng.pick(g.state.cursors)]);
      continue;
    }
    const value = validValue(g, p.schema, p.name, undefined);
    if (value !== OMIT) query.push([p.name, String(value)]);
  }
  return query;
}

/** Recent objects are the live ones (an unexpired quote, a pending trade); older ones test the rest. */
function pickRecent<T>(rng: Rng, pool: readonly T[]): T {
  return rng.chance(0.6) ? pool[pool.length - 1 - rng.below(Math.min(3, pool.length))]! : rng.pick(pool);
}

function randomText(rng: Rng, length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[rng.below(alphabet.length)];
  return out;
}
