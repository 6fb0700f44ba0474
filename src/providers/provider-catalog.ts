import { z } from 'zod';
import { bankRailOptions } from './bank-rail/options.ts';
import { billsOptions } from './bills/options.ts';
import { cardProcessorOptions } from './card-processor/options.ts';
import { directDebitOptions } from './direct-debit/options.ts';
import { hubtelOptions } from './hubtel/options.ts';
import { mtnMomoOptions } from './mtn-momo/options.ts';
import { paystackOptions } from './paystack/options.ts';
import type { ProviderOptions } from './provider-options.ts';

// Every provider's name and config block, in the order their mocks are mounted. The configuration
// schema, the scenario language and the contract generator read this list; providers/index.ts
// lists the same providers with their adapters and mocks (the compiler holds the two in step).
// It sits below those (it imports only the options files) so that config/ and scenarios/, which
// the adapters and mocks import, never import an adapter or a mock: no import circle.
export const PROVIDER_CATALOG = [mtnMomoOptions, hubtelOptions, bankRailOptions, paystackOptions, cardProcessorOptions, directDebitOptions, billsOptions] as const;

export type ProviderId = (typeof PROVIDER_CATALOG)[number]['id'];

/** Every provider's id, in catalog order. */
export const PROVIDER_IDS = PROVIDER_CATALOG.map((p) => p.id) as readonly ProviderId[];

/** The `providers` section's shape: one block per provider of the catalog, keyed by its id. */
export type ProviderBlocks<Catalog extends readonly ProviderOptions[]> = { [P in Catalog[number] as P['id']]: P['schema'] };

/** The `providers` section of the configuration schema for a catalog: a strict object of each provider's block. */
export function providerBlocksSchema<const Catalog extends readonly ProviderOptions[]>(catalog: Catalog) {
  const blocks = Object.fromEntries(catalog.map((p) => [p.id, p.schema])) as ProviderBlocks<Catalog>;
  // Every block has its defaults, so an absent section is `{}` (the cast: zod cannot see that through the generic).
  return z.strictObject(blocks).prefault({} as never);
}
