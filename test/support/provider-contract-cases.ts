import type { ProviderDefinition, ProviderExamples } from '../../src/providers/define-provider.ts';
import { PROVIDERS } from '../../src/providers/index.ts';

// The contract suites' cases: one per provider of the list, so a provider added to
// src/providers/index.ts is run through both (test/contract/rail-provider.contract.test.ts and
// test/contract/provider-mock.contract.test.ts) without touching them.

export interface ProviderCase {
  name: string;
  examples: ProviderExamples;
  definition: ProviderDefinition;
}

/** Every provider of `providers` (the list of src/providers/index.ts unless given). */
export function railContractCases(providers: readonly ProviderDefinition[] = PROVIDERS): ProviderCase[] {
  return providers.map((definition) => ({ name: definition.id, examples: definition.examples, definition }));
}

/** The mock contract runs over the same providers: each one's mock, mounted at /mocks/<id>. */
export const mockContractCases = railContractCases;
