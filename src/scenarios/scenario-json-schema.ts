import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  apiLatencySchema,
  apiMatchSchema,
  apiRespondSchema,
  behaviourOrSequence,
  behaviourSchema,
  identifierPredicateSchema,
  matchSchema,
  predicateSchema,
  type ScenarioSchema,
} from './scenario-schema.ts';

// A JSON Schema (2020-12) of scenario files, generated from the zod schema that validates them,
// for editors: with `# yaml-language-server: $schema=./scenario.schema.json` as a file's first
// line, the YAML language server (VS Code's YAML extension, and others) completes fields and
// flags mistakes as you type. railyard itself validates with zod, which checks a little more
// (regexes that compile, "exactly one predicate"), and reports file:line:column.

export const SCENARIO_SCHEMA_ID = 'https://railyard.local/schemas/scenario.schema.json';

/** Where `npm run scenarios:schema` writes it, next to the scenario files. */
export const SCENARIO_SCHEMA_PATH = resolve(import.meta.dirname, '../../scenarios/scenario.schema.json');

type Json = Record<string, unknown>;

/** Replaces a generated schema's keywords in place (zod's override hook mutates, never returns). */
function replaceWith(json: Json, next: Json): void {
  for (const key of Object.keys(json)) delete json[key];
  Object.assign(json, next);
}

/**
 * zod describes a `z.preprocess` by its inner schema only, but the preprocessing is what lets a
 * file write shorthands: a bare string or number for a predicate (equals), and one behaviour
 * where a sequence is expected. Widen those two so every file railyard loads also validates.
 */
function widenShorthands(ctx: { zodSchema: unknown; jsonSchema: Json }): void {
  const { zodSchema, jsonSchema } = ctx;
  // zod writes `format: starts_with` beside the equivalent `pattern`; no validator knows that format.
  if (jsonSchema.format === 'starts_with' && typeof jsonSchema.pattern === 'string') delete jsonSchema.format;
  if (zodSchema === predicateSchema || zodSchema === identifierPredicateSchema) {
    const { id, description, ...object } = jsonSchema;
    // An identifier's shorthand is a string only: an unquoted number is refused.
    const shorthands = zodSchema === predicateSchema ? ['string', 'number'] : ['string'];
    replaceWith(jsonSchema, {
      ...(id !== undefined ? { id } : {}), // zod's $defs name, removed when it writes $defs
      ...(description !== undefined ? { description } : {}),
      anyOf: [...shorthands.map((type) => ({ type, description: 'Shorthand for { equals: ... }' })), object],
    });
    return;
  }
  // An api rule's `respond: 503` and `latency_ms: 200` shorthands: a bare number.
  if (zodSchema === apiRespondSchema || zodSchema === apiLatencySchema) {
    const { id, description, ...object } = jsonSchema;
    const shorthand =
      zodSchema === apiRespondSchema ? { enum: [500, 503], description: 'Shorthand for { status: ... }' } : { type: 'integer', minimum: 0, description: 'Shorthand for { before_commit: ... }' };
    replaceWith(jsonSchema, { ...(id !== undefined ? { id } : {}), ...(description !== undefined ? { description } : {}), anyOf: [shorthand, object] });
    return;
  }
  if (zodSchema === behaviourOrSequence && jsonSchema.type === 'array' && jsonSchema.items !== undefined) {
    const { id, description, ...asList } = jsonSchema;
    replaceWith(jsonSchema, {
      ...(id !== undefined ? { id } : {}),
      ...(description !== undefined ? { description } : {}),
      anyOf: [jsonSchema.items as Json, { ...asList, description: 'A sequence: the first call gets the first, and so on; the last repeats' }],
    });
  }
}

/**
 * The parts used in many places go once under $defs, by name: a predicate (7 match fields), a
 * match block (recursive), a provider's behaviours (each provider x 3 operations) and a callback.
 */
function namedParts(schema: ScenarioSchema): Map<unknown, string> {
  return new Map<unknown, string>([
    [predicateSchema, 'predicate'],
    [identifierPredicateSchema, 'identifier_predicate'],
    [matchSchema, 'match'],
    [schema.perProvider, 'per_provider'],
    [behaviourOrSequence, 'behaviours'],
    [behaviourSchema, 'behaviour'],
    [behaviourSchema.shape.callback.unwrap(), 'callback'],
    [apiMatchSchema, 'api_match'],
  ]);
}

/** zod's global registry (descriptions, defaults), plus a $defs name for the named parts. */
function metadataWithNames(schema: ScenarioSchema): typeof z.globalRegistry {
  const names = namedParts(schema);
  const registry = Object.create(z.globalRegistry) as typeof z.globalRegistry;
  registry.get = ((schema: Parameters<typeof z.globalRegistry.get>[0]) => {
    const meta = z.globalRegistry.get(schema);
    const id = names.get(schema);
    return id ? { ...meta, id } : meta;
  }) as typeof z.globalRegistry.get;
  return registry;
}

/** The JSON Schema of files in the scenario language `schema` (railyard's own: src/railyard-scenarios.ts). */
export function scenarioJsonSchema(schema: ScenarioSchema): Json {
  // io: 'input' describes what a file may contain: defaults make fields optional.
  const generated = z.toJSONSchema(schema.file, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    metadata: metadataWithNames(schema),
    override: (ctx) => widenShorthands(ctx),
  }) as Json;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: SCENARIO_SCHEMA_ID,
    title: 'railyard scenario file',
    description:
      'Rules that decide what each mobile number or bank account does at the mock providers, simulated customer wallets, and an optional replay script (`railyard replay`). Generated from src/scenarios/scenario-schema.ts by `npm run scenarios:schema`; do not edit.',
    ...rest,
  };
}

/** The file's text: stable key order from the generator, two-space indent, trailing newline. */
export function scenarioJsonSchemaText(schema: ScenarioSchema): string {
  return `${JSON.stringify(scenarioJsonSchema(schema), null, 2)}\n`;
}

export function writeScenarioJsonSchema(schema: ScenarioSchema, path = SCENARIO_SCHEMA_PATH): string {
  writeFileSync(path, scenarioJsonSchemaText(schema));
  return path;
}
