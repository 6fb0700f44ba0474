import type { z } from 'zod';
import type { MockDefinition } from '../mocks/mock-definition.ts';
import type { CollectRequest, PayoutRequest, RailAdapterContext, RailProvider, ResolveRequest } from '../rails/provider-port.ts';
import type { ScenarioRuleInput } from '../scenarios/scenario-schema.ts';
import type { ProviderOptions, ProviderOptionsSchema } from './provider-options.ts';
import type { WireProfile } from './wire-profile.ts';

// A provider is one folder, src/providers/<id>/, and this value is all of it that the rest of
// railyard needs: its options (name and config block), its adapter, its mock, its recorder wire
// profile, and the sandbox calls that exercise it. providers/index.ts lists them.

/** What the wiring hands an adapter besides its config block. */
export interface ProviderWiring {
  /** The secret path segment of its callback URL, /internal/callbacks/<id>/<token>. */
  callbackToken: string;
}

/**
 * Calls that exercise the provider against its own mock, for the contract suites: what a
 * scenario rule matches them by, and a request per operation it supports. An operation it does
 * not support is absent: the suites then check that the adapter refuses it without failing over.
 */
export interface ProviderExamples {
  match: NonNullable<ScenarioRuleInput['match']>;
  collect?: (reference: string) => CollectRequest;
  payout?: (reference: string) => PayoutRequest;
  resolve?: ResolveRequest;
}

export interface ProviderDefinition<Id extends string = string, Options = any, Schema extends ProviderOptionsSchema = ProviderOptionsSchema> {
  id: Id;
  options: ProviderOptions<Id, Schema>;
  /** The adapter, configured from its block `providers.<id>`; ctx carries its timeout. */
  adapter(options: Options, ctx: RailAdapterContext, wiring: ProviderWiring): RailProvider;
  mock: MockDefinition<Options>;
  /** How `railyard record --provider <id>` records the real upstream; absent: it cannot. */
  recorder?: WireProfile;
  examples: ProviderExamples;
}

/** A provider from its parts; its id is its options'. */
export function defineProvider<const Id extends string, Schema extends ProviderOptionsSchema>(parts: {
  options: ProviderOptions<Id, Schema>;
  adapter(options: z.output<Schema>, ctx: RailAdapterContext, wiring: ProviderWiring): RailProvider;
  mock: MockDefinition<z.output<Schema>>;
  recorder?: WireProfile;
  examples: ProviderExamples;
}): ProviderDefinition<Id, z.output<Schema>, Schema> {
  if (parts.mock.name !== parts.options.id) throw new Error(`provider ${parts.options.id}: its mock is named ${parts.mock.name}`);
  if (parts.recorder && parts.recorder.provider !== parts.options.id) throw new Error(`provider ${parts.options.id}: its wire profile is for ${parts.recorder.provider}`);
  return { id: parts.options.id, ...parts };
}
