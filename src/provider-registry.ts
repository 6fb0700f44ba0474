import type { Router } from 'express';
import { callbackToken } from './config/config.ts';
import type { MockContext } from './mocks/engine/mock-context.ts';
import { mockAccessView, type MockAccessView, type MockDefinition } from './mocks/mock-definition.ts';
import type { ProviderDefinition } from './providers/define-provider.ts';
import { PROVIDERS as DEFINITIONS, type ProviderId } from './providers/index.ts';
import type { RailAdapterContext, RailProvider } from './rails/provider-port.ts';
import type { RailyardConfig as Config } from './railyard-config.ts';

// The providers as the composition root wires them: a view over src/providers/index.ts that
// reads each one's block of the configuration. Adding a provider is a folder under
// src/providers/ and its line in the list there; nothing here changes. See docs/providers.md.

export type ProviderName = ProviderId;

/** A provider as the composition root wires it: its adapter from configuration, and its mock. */
export interface ProviderRegistration {
  name: ProviderName;
  /** The adapter, configured from config.providers[name]; ctx carries its timeout. */
  adapter(config: Config, ctx: RailAdapterContext): RailProvider;
  mock: MockDefinition<Config>;
}

function registered(definition: ProviderDefinition<ProviderName>): ProviderRegistration {
  const name = definition.id;
  return {
    name,
    adapter: (config, ctx) => definition.adapter(config.providers[name], ctx, { callbackToken: callbackToken(config, name) }),
    mock: {
      name,
      create: (ctx, config) => definition.mock.create(ctx, config.providers[name]),
      access: (config) => definition.mock.access(config.providers[name]),
      ...(definition.mock.realSandbox ? { realSandbox: definition.mock.realSandbox } : {}),
    },
  };
}

/** Every provider railyard knows, in the order their mocks are mounted. */
export const PROVIDERS: readonly ProviderRegistration[] = DEFINITIONS.map(registered);

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
