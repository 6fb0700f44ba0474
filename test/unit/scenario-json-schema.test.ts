import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { SCENARIO_SCHEMA_PATH } from '../../src/scenarios/scenario-json-schema.ts';
import { parseScenario, scenarioJsonSchema, scenarioJsonSchemaText } from '../../src/railyard-scenarios.ts';

// ajv is CommonJS with `exports.default`; under NodeNext the default import is the module.
type Ajv2020Class = typeof import('ajv/dist/2020.js').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: Ajv2020Class }).default ?? Ajv2020Module) as Ajv2020Class;

// The editor schema: committed, current, a valid JSON Schema 2020-12, and in agreement with the
// loader on the shipped files and on a few broken ones.

const SCENARIOS_DIR = resolve(import.meta.dirname, '../../scenarios');
const scenarioFiles = readdirSync(SCENARIOS_DIR)
  .filter((name) => /\.ya?ml$/.test(name))
  .sort();

/** The shipped scenario files with a replay script (sandbox.yaml has none). */
const REPLAY_SCENARIOS = [
  'compliance-review.yaml',
  'dropped-callback.yaml',
  'duplicate-callback.yaml',
  'failed-transfer.yaml',
  'failover.yaml',
  'late-success.yaml',
  'paystack.yaml',
  'provider-outage.yaml',
  'quote-expiry.yaml',
  'webhook-retries.yaml',
];

let compiled: ReturnType<InstanceType<Ajv2020Class>['compile']> | undefined;
/** The committed file, compiled once by ajv in strict mode. */
function compile() {
  compiled ??= new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }).compile(JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, 'utf8')));
  return compiled;
}

describe('scenarios/scenario.schema.json', () => {
  it('is what the generator makes now (run `npm run scenarios:schema` after changing the scenario schema)', () => {
    expect(readFileSync(SCENARIO_SCHEMA_PATH, 'utf8')).toBe(scenarioJsonSchemaText());
  });

  it('is a JSON Schema 2020-12 with an $id, a title and a description', () => {
    const schema = scenarioJsonSchema();
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: expect.any(String), description: expect.any(String) });
    expect(String(schema.$id)).toMatch(/^https:\/\//);
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true }); // `type: [string, number]` is standard; ajv's strict mode only asks to allow it
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(() => compile()).not.toThrow();
  });

  it.each(scenarioFiles)('validates scenarios/%s, which the loader also accepts', (name) => {
    const text = readFileSync(join(SCENARIOS_DIR, name), 'utf8');
    expect(() => parseScenario(text, name)).not.toThrow();
    const validate = compile();
    const valid = validate(parseYaml(text));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('is named on the first line of the shipped replay scenarios, for the YAML language server', () => {
    for (const name of REPLAY_SCENARIOS) {
      expect(readFileSync(join(SCENARIOS_DIR, name), 'utf8').split('\n')[0], name).toBe('# yaml-language-server: $schema=./scenario.schema.json');
    }
  });

  it('accepts the shorthands: a bare predicate value and a single behaviour in place of a sequence', () => {
    const validate = compile();
    const file = {
      version: 1,
      name: 'shorthands',
      rules: [
        {
          name: 'bare values',
          match: { msisdn: '0241110001', amount: 500, any: [{ network: 'MTN' }, { msisdn: { prefix: '024' } }] },
          collect: { 'mtn-momo': { respond: 'timeout' }, any: [{ respond: 'server_error' }, { respond: 'accept', callback: { status: 'success' } }] },
        },
      ],
    };
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
  });

  const broken: [string, unknown][] = [
    ['an unknown top-level field', { version: 1, name: 'x', rulez: [] }],
    ['a wrong version', { version: 2, name: 'x' }],
    ['no name', { version: 1 }],
    ['an unknown field in a rule', { version: 1, name: 'x', rules: [{ name: 'a', match: { msisdn: '0241110001' }, colect: { any: {} } }] }],
    ['an unknown respond', { version: 1, name: 'x', rules: [{ name: 'a', default: true, collect: { any: { respond: 'maybe' } } }] }],
    ['an unknown provider', { version: 1, name: 'x', rules: [{ name: 'a', default: true, collect: { vodafone: { respond: 'accept' } } }] }],
    ['an empty sequence', { version: 1, name: 'x', rules: [{ name: 'a', default: true, collect: { any: [] } }] }],
    ['a wrong type', { version: 1, name: 'x', rules: [{ name: 'a', default: true, collect: { any: { latency_ms: 'soon' } } }] }],
    ['a bad callback status', { version: 1, name: 'x', rules: [{ name: 'a', default: true, payout: { any: { callback: { status: 'ok' } } } }] }],
    ['a negative wallet balance', { version: 1, name: 'x', wallets: [{ msisdn: '0241110001', balance: -1 }] }],
    ['an unknown step', { version: 1, name: 'x', script: [{ sleep: 5 }] }],
    ['a request without a method', { version: 1, name: 'x', script: [{ request: { path: '/api/v1/wallet' } }] }],
    ['a relative request path', { version: 1, name: 'x', script: [{ request: { method: 'GET', path: 'api/v1/wallet' } }] }],
    ['an unknown replay setting', { version: 1, name: 'x', replay: { speed: 2 } }],
  ];

  it.each(broken)('rejects %s, as the loader does', (_what, file) => {
    const validate = compile();
    expect(validate(file)).toBe(false);
    expect(() => parseScenario(JSON.stringify(file), 'broken.yaml')).toThrow();
  });

  it('rejects a broken shipped file', () => {
    const text = readFileSync(join(SCENARIOS_DIR, 'failover.yaml'), 'utf8').replace('respond: timeout', 'respond: time_out');
    expect(() => parseScenario(text, 'failover.yaml')).toThrow(/respond/);
    const validate = compile();
    expect(validate(parseYaml(text))).toBe(false);
    expect(validate.errors?.some((e) => e.instancePath.includes('/rules/0/collect/mtn-momo'))).toBe(true);
  });
});
