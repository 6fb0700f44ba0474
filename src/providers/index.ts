import { bankRail } from './bank-rail/index.ts';
import { bills } from './bills/index.ts';
import { cardProcessor } from './card-processor/index.ts';
import type { ProviderDefinition } from './define-provider.ts';
import { directDebit } from './direct-debit/index.ts';
import { hubtel } from './hubtel/index.ts';
import { mtnMomo } from './mtn-momo/index.ts';
import { paystack } from './paystack/index.ts';
import type { PROVIDER_CATALOG } from './provider-catalog.ts';
import type { ProviderOptions } from './provider-options.ts';

// Every provider railyard knows, in the order their mocks are mounted: app.ts builds each one's
// adapter and mounts its mock, the recorder takes its wire profile, the contract suites run its
// examples. The type holds this list to the catalog's (provider-catalog.ts, which the config
// schema and the scenario language read): the same providers, in the same order.
/** A list of definitions with the ids of a catalog, position by position. */
type DefinitionsOf<Catalog extends readonly ProviderOptions[]> = { readonly [K in keyof Catalog]: Catalog[K] extends { id: infer Id extends string } ? ProviderDefinition<Id> : never };

// biome-ignore format: one provider a line, so adding one adds a line (test/integration/adding-a-provider.test.ts)
export const PROVIDERS: DefinitionsOf<typeof PROVIDER_CATALOG> = [
  mtnMomo,
  hubtel,
  bankRail,
  paystack,
  cardProcessor,
  directDebit,
  bills,
];
