import type { Router } from 'express';
import { callbackToken, type Config } from './config/config.ts';
import { bankRailMock } from './providers/bank-rail/mock.ts';
import { billsMock } from './providers/bills/mock.ts';
import type { MockContext } from './mocks/engine/mock-context.ts';
import { hubtelMock } from './providers/hubtel/mock.ts';
import { mockAccessView, type MockAccessView, type MockDefinition } from './mocks/mock-definition.ts';
import { mtnMomoMock } from './providers/mtn-momo/mock.ts';
import { paystackMock } from './providers/paystack/mock.ts';
import { cardProcessorMock } from './providers/card-processor/mock.ts';
import { directDebitMock } from './providers/direct-debit/mock.ts';
import { BankRailAdapter } from './providers/bank-rail/adapter.ts';
import { BillsAdapter } from './providers/bills/adapter.ts';
import { HubtelAdapter } from './providers/hubtel/adapter.ts';
import { MtnMomoAdapter } from './providers/mtn-momo/adapter.ts';
import { PaystackAdapter } from './providers/paystack/adapter.ts';
import { CardProcessorAdapter } from './providers/card-processor/adapter.ts';
import { DirectDebitAdapter } from './providers/direct-debit/adapter.ts';
import type { RailAdapterContext, RailProvider } from './rails/provider-port.ts';

// The provider registry: part of the composition root, so it may name concrete adapters and
// mocks. Adding a provider is an adapter (src/rails/adapters/), a wire module on the mock engine
// (src/mocks/), its block in config.providers, and one entry in PROVIDERS. See docs/providers.md.

export type ProviderName = keyof Config['providers'];

/** A provider as the composition root wires it: its adapter from configuration, and its mock. */
export interface ProviderRegistration {
  name: ProviderName;
  /** The adapter, configured from config.providers[name]; ctx carries its timeout. */
  adapter(config: Config, ctx: RailAdapterContext): RailProvider;
  mock: MockDefinition;
}

const mtnMomo: ProviderRegistration = {
  name: 'mtn-momo',
  adapter: (config, ctx) => {
    const c = config.providers['mtn-momo'];
    return new MtnMomoAdapter(
      {
        baseUrl: c.base_url,
        apiUser: c.api_user,
        apiKey: c.api_key,
        collectionSubscriptionKey: c.collection_subscription_key,
        disbursementSubscriptionKey: c.disbursement_subscription_key,
        targetEnvironment: c.target_environment,
        currency: c.currency,
        callbackToken: callbackToken(config, 'mtn-momo'),
      },
      ctx,
    );
  },
  mock: mtnMomoMock,
};

const hubtel: ProviderRegistration = {
  name: 'hubtel',
  adapter: (config, ctx) => {
    const c = config.providers.hubtel;
    return new HubtelAdapter(
      {
        hosts: c.hosts,
        clientId: c.client_id,
        clientSecret: c.client_secret,
        posSalesId: c.pos_sales_id,
        prepaidDepositId: c.prepaid_deposit_id,
        callbackToken: callbackToken(config, 'hubtel'),
      },
      ctx,
    );
  },
  mock: hubtelMock,
};

const bankRail: ProviderRegistration = {
  name: 'bank-rail',
  adapter: (config, ctx) => {
    const c = config.providers['bank-rail'];
    return new BankRailAdapter({ baseUrl: c.base_url, clientId: c.client_id, clientSecret: c.client_secret, callbackToken: callbackToken(config, 'bank-rail') }, ctx);
  },
  mock: bankRailMock,
};

const paystack: ProviderRegistration = {
  name: 'paystack',
  adapter: (config, ctx) => {
    const c = config.providers.paystack;
    return new PaystackAdapter(
      { baseUrl: c.base_url, secretKey: c.secret_key, channels: c.channels, networks: c.networks, customerEmailDomain: c.customer_email_domain },
      ctx,
    );
  },
  mock: paystackMock,
};

const cardProcessor: ProviderRegistration = {
  name: 'card-processor',
  adapter: (config, ctx) => {
    const c = config.providers['card-processor'];
    return new CardProcessorAdapter({ baseUrl: c.base_url, apiKey: c.api_key, webhookSecret: c.webhook_secret }, ctx);
  },
  mock: cardProcessorMock,
};

const directDebit: ProviderRegistration = {
  name: 'direct-debit',
  adapter: (config, ctx) => {
    const c = config.providers['direct-debit'];
    return new DirectDebitAdapter({ baseUrl: c.base_url, apiKey: c.api_key, signingSecret: c.signing_secret }, ctx);
  },
  mock: directDebitMock,
};

const bills: ProviderRegistration = {
  name: 'bills',
  adapter: (config, ctx) => {
    const c = config.providers.bills;
    return new BillsAdapter({ baseUrl: c.base_url, apiKey: c.api_key, signingSecret: c.signing_secret }, ctx);
  },
  mock: billsMock,
};

/** Every provider railyard knows, in the order their mocks are mounted. */
export const PROVIDERS: readonly ProviderRegistration[] = [mtnMomo, hubtel, bankRail, paystack, cardProcessor, directDebit, bills];

/** Thrown for a provider name the registry does not have. */
export class UnknownProviderError extends Error {
  constructor(readonly provider: string) {
    super(`unknown provider ${JSON.stringify(provider)}; known: ${PROVIDERS.map((p) => p.name).join(', ')}`);
    this.name = 'UnknownProviderError';
  }
}

export function registration(name: string): ProviderRegistration {
  const found = PROVIDERS.find((p) => p.name === name);
  if (!found) throw new UnknownProviderError(name);
  return found;
}

/**
 * Builds one provider's mock, with the credentials configured for it: what app.ts mounts at
 * /mocks/<name>, and what a standalone `railyard mock <name>` serves on its own port.
 */
export function createMock(name: string, ctx: MockContext, config: Config): Router {
  return registration(name).mock.create(ctx, config);
}

/** The mock of `name` served under `baseUrl`: its base URL and the credentials it accepts. */
export function describeMock(name: string, config: Config, options: { baseUrl: string; realUpstream: boolean }): MockAccessView {
  return mockAccessView(name, registration(name).mock.access(config), options);
}
