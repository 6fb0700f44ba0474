import { z } from 'zod';

// What a provider is called and how it is configured: the part of a provider the lower layers
// (the configuration schema, the scenario language) read. It imports zod and nothing of ours,
// so config/ and scenarios/ can list the providers without importing an adapter or a mock.

/** The fields every provider's block under `providers` has. */
export const commonProviderFields = {
  enabled: z.boolean().default(true),
  priority: z.number().int().min(1).max(100),
  base_url: z.url().optional().describe('Real upstream base URL; omitted means the in-process mock'),
  timeout_ms: z.number().int().min(10).max(120_000).optional(),
  callback_token: z.string().min(16).optional(),
};

/** A provider's config block: the common fields (a priority default of its own) and its credentials. */
export type ProviderOptionsSchema = z.ZodType<{ enabled: boolean; priority: number; base_url?: string | undefined; timeout_ms?: number | undefined; callback_token?: string | undefined }, unknown>;

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
