import { bankRail } from './bank-rail/index.ts';
import { bills } from './bills/index.ts';
import { cardProcessor } from './card-processor/index.ts';
import { directDebit } from './direct-debit/index.ts';
import { hubtel } from './hubtel/index.ts';
import { mtnMomo } from './mtn-momo/index.ts';
import { paystack } from './paystack/index.ts';

// Every provider railyard knows, in the order their mocks are mounted: the one list. The
// composition root hands it down (src/railyard-config.ts: the configuration schema's blocks;
// src/railyard-scenarios.ts: the scenario language's provider names), builds each one's adapter
// and mounts its mock (src/provider-registry.ts); the recorder takes its wire profile, the CLI
// help its summary, the contract generator and both contract suites its id and examples.

// biome-ignore format: one provider a line, so adding one adds a line (test/integration/adding-a-provider.test.ts)
export const PROVIDERS = [
  mtnMomo,
  hubtel,
  bankRail,
  paystack,
  cardProcessor,
  directDebit,
  bills,
] as const;

/** A provider's id: `mtn-momo`, `hubtel`, ... */
export type ProviderId = (typeof PROVIDERS)[number]['id'];
