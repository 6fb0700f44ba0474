import { z } from 'zod';
import type { Config, ProviderBlockSchema } from '../config/config.ts';

// What a provider is called and how it is configured. The composition root hands these down to
// the configuration schema (config/ takes each id and block schema) and the scenario language
// (the ids), which sit below providers/ and never import it.

/** The fields every provider's block under `providers` has. */
export const commonProviderFields = {
  enabled: z.boolean().default(true),
  priority: z.number().int().min(1).max(100),
  base_url: z.url().optional().describe('Real upstream base URL; omitted means the in-process mock'),
  timeout_ms: z.number().int().min(10).max(120_000).optional(),
  callback_token: z.string().min(16).optional(),
};

/** A provider's config block: the common fields (a priority default of its own) and its credentials. */
export type ProviderOptionsSchema = ProviderBlockSchema;

/** A provider's name, what it is (one line, for the CLI help), and its config block's schema. */
export interface ProviderOptions<Id extends string = string, Schema extends ProviderOptionsSchema = ProviderOptionsSchema> {
  id: Id;
  /** One line: the upstream it speaks, as `railyard --help` lists it. */
  summary: string;
  /** The zod schema of `providers.<id>` in railyard.yaml, defaults included (an absent block is `{}`). */
  schema: Schema;
}

/** A provider's options, as its folder's options.ts declares them. */
export function defineProviderOptions<const Id extends string, Schema extends ProviderOptionsSchema>(options: ProviderOptions<Id, Schema>): ProviderOptions<Id, Schema> {
  return options;
}

/**
 * This provider's block of a configuration, typed by its own schema: a configuration built from
 * the provider list (src/railyard-config.ts) holds one for every provider, defaults included.
 */
export function providerBlock<Schema extends ProviderOptionsSchema>(options: ProviderOptions<string, Schema>, config: Pick<Config, 'providers'>): z.output<Schema> {
  const block = config.providers[options.id];
  if (!block) throw new Error(`the configuration has no providers.${options.id} block: it was built without the ${options.id} provider`);
  return block as z.output<Schema>;
}
